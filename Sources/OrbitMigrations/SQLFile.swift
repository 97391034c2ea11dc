import Crypto
import Foundation

/// One SQL file of the schema: a versioned migration (`migrations/0001_name.sql`, applied
/// once) or a repeatable file (`sql/010_name.sql`, re-applied when it changes).
package struct SQLFile: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        case versioned(Int)
        case repeatable
    }

    /// The path relative to the folder holding `migrations/` and `sql/`.
    package let path: String
    /// `roles_and_schemas` for `0001_roles_and_schemas.sql`; `010_session` for `010_session.sql`.
    package let name: String
    package let kind: Kind
    package let contents: String
    /// SHA-256 of the file's bytes, lower-case hex.
    package let checksum: String

    package var version: Int? {
        if case .versioned(let version) = kind { return version }
        return nil
    }

    /// The file name without its folder.
    package var fileName: String { String(path.split(separator: "/").last ?? Substring(path)) }

    init(path: String, bytes: Data) throws {
        guard let contents = String(data: bytes, encoding: .utf8) else {
            throw MigrationError(.invalidFile, file: path, message: "\(path) is not UTF-8 text")
        }
        self.path = path
        self.contents = contents
        self.checksum = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
        let stem = String((path.split(separator: "/").last ?? Substring(path)).dropLast(4))
        if path.hasPrefix("migrations/") {
            let digits = stem.prefix { $0.isASCII && $0.isNumber }
            let rest = stem.dropFirst(digits.count)
            guard digits.count >= 4, let version = Int(digits), version > 0, rest.hasPrefix("_"), rest.count > 1,
                rest.dropFirst().allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") })
            else {
                throw MigrationError(
                    .invalidFile, file: path,
                    message: "\(path) is not named like migrations/0001_lower_case_name.sql"
                )
            }
            self.kind = .versioned(version)
            self.name = String(rest.dropFirst())
        } else {
            self.kind = .repeatable
            self.name = stem
        }
    }
}
