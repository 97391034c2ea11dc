/// Why `migrate` stopped. `description` is one sentence for people; it never holds a password.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// A file is misnamed, unreadable, or duplicates a version.
        public static let invalidFile = Code("invalidFile")
        /// An applied migration's file changed since it was applied.
        public static let checksumMismatch = Code("checksumMismatch")
        /// The database has applied a migration this catalog does not have.
        public static let unknownMigration = Code("unknownMigration")
        /// A statement failed; the transaction was rolled back.
        public static let statementFailed = Code("statementFailed")
        /// Another migrator held the lock for longer than the timeout.
        public static let lockTimeout = Code("lockTimeout")
        /// The server could not be reached.
        public static let connectionFailed = Code("connectionFailed")

        public var description: String { name }
    }

    public var code: Code
    /// The file concerned, relative to the folder holding `migrations/` and `sql/`.
    public var file: String?
    /// The line of that file, 1-based, for a failed statement.
    public var line: Int?
    public var message: String
    /// The server's error, for a failed statement.
    public var underlying: (any Error)?

    public init(_ code: Code, file: String? = nil, line: Int? = nil, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.file = file
        self.line = line
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }
}
