/// Why `migrate` stopped. `description` is one sentence for people; it never holds a password.
package struct MigrationError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A file is misnamed, unreadable, or duplicates a version.
        package static let invalidFile = Code("invalidFile")
        /// An applied migration's file changed since it was applied.
        package static let checksumMismatch = Code("checksumMismatch")
        /// The database has applied a migration this catalog does not have.
        package static let unknownMigration = Code("unknownMigration")
        /// A statement failed; the transaction was rolled back.
        package static let statementFailed = Code("statementFailed")
        /// Another migrator held the lock for longer than the timeout.
        package static let lockTimeout = Code("lockTimeout")
        /// The server could not be reached.
        package static let connectionFailed = Code("connectionFailed")

        package var description: String { name }
    }

    package var code: Code
    /// The file concerned, relative to the folder holding `migrations/` and `sql/`.
    package var file: String?
    /// The line of that file, 1-based, for a failed statement.
    package var line: Int?
    package var message: String
    /// The server's error, for a failed statement.
    package var underlying: (any Error)?

    package init(_ code: Code, file: String? = nil, line: Int? = nil, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.file = file
        self.line = line
        self.message = message
        self.underlying = underlying
    }

    package var description: String { message }
}
