/// A failure orbitctl reports as one sentence on stderr, exiting non-zero.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
