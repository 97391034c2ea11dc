import Foundation
import OrbitAPI

/// `orbitctl --json` (docs/cli.md, conventions): one JSON value, pretty-printed with sorted
/// keys. Keys are the types' own snake_case coding keys, the columns' names; JSON columns
/// (settings) keep their keys as stored. It is written by the API's own writer
/// (`ResponseJSONEncoder`), so every id is lower case as in every API response (Foundation's
/// `JSONEncoder` writes a `UUID` in upper case), with dates in whole seconds.
enum CLIJSON {
    static func data(_ value: some Encodable) throws -> Data {
        let compact = try ResponseJSONEncoder.encode(value, directJSON: false, dates: .wholeSeconds)
        let object = try JSONSerialization.jsonObject(with: Data(compact), options: .fragmentsAllowed)
        return try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
    }
}

/// Prints one JSON value (`CLIJSON`).
func printJSON(_ value: some Encodable) throws {
    print(String(decoding: try CLIJSON.data(value), as: UTF8.self))
}
