print("orbitctl")
