/// An error from the client or from the server.
///
/// The server's fields (`PG_DIAG_*`) are all reachable. `description` is safe to log: it never
/// contains a password, a bound parameter value, or the server's `detail` (which quotes row
/// values); `String(reflecting:)` adds detail, hint, context and the SQL text (never the binds).
public struct PostgresError: Error, Sendable {
    /// What kind of failure this is. Open for extension: compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The server could not be reached, refused the connection, or the settings were invalid.
        public static let connectionFailed = Code("connectionFailed")
        /// The connection broke (server restart, `pg_terminate_backend`, network) or was closed.
        public static let connectionClosed = Code("connectionClosed")
        /// The server reported an error for a statement; see `sqlState` and the other fields.
        public static let server = Code("server")
        /// A column value could not be decoded into the requested Swift type.
        public static let decoding = Code("decoding")
        /// A parameter value cannot be sent (for example a string holding a NUL byte).
        public static let encoding = Code("encoding")
        /// No pooled connection became free within the pool's acquire timeout.
        public static let poolTimeout = Code("poolTimeout")
        /// The pool was shut down.
        public static let poolClosed = Code("poolClosed")
        /// The server answered with something this client did not expect (for example COPY, or
        /// more than one row for `single()`).
        public static let unexpectedResponse = Code("unexpectedResponse")
        /// `single()` found no row: what the statement looked for is not there (or, in a
        /// transaction that saw it a statement before, is no longer there).
        public static let noRow = Code("noRow")
        /// COMMIT found the transaction already failed, so the server rolled it back.
        public static let transactionRolledBack = Code("transactionRolledBack")
        /// The API was used in a way it does not allow (for example a nested pipeline).
        public static let misuse = Code("misuse")

        public var description: String { name }
    }

    public var code: Code
    /// Five-character SQLSTATE, for example `23505` (`PG_DIAG_SQLSTATE`).
    public var sqlState: String?
    /// `ERROR`, `FATAL`, `PANIC` (never localized: `PG_DIAG_SEVERITY_NONLOCALIZED`).
    public var severity: String?
    /// The primary message: the server's (`PG_DIAG_MESSAGE_PRIMARY`) or the client's own.
    public var message: String
    public var detail: String?
    public var hint: String?
    public var constraint: String?
    public var schema: String?
    public var table: String?
    public var column: String?
    public var dataType: String?
    /// 1-based character offset into the statement (`PG_DIAG_STATEMENT_POSITION`).
    public var position: Int?
    /// The call stack inside the server (`PG_DIAG_CONTEXT`), for errors raised by functions.
    public var context: String?
    /// The SQL text of the failing statement. Parameters are never part of it.
    public var query: String?

    public init(code: Code, message: String, sqlState: String? = nil) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
    }

    // MARK: Named conditions (PostgreSQL Appendix A)

    public var isUniqueViolation: Bool { sqlState == "23505" }
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    public var isNotNullViolation: Bool { sqlState == "23502" }
    public var isCheckViolation: Bool { sqlState == "23514" }
    public var isExclusionViolation: Bool { sqlState == "23P01" }
    /// Any integrity constraint violation (class 23).
    public var isIntegrityViolation: Bool { sqlState?.hasPrefix("23") ?? false }
    /// Invalid data: bad input syntax, out-of-range values, … (class 22).
    public var isDataException: Bool { sqlState?.hasPrefix("22") ?? false }
    public var isInsufficientPrivilege: Bool { sqlState == "42501" }
    public var isSerializationFailure: Bool { sqlState == "40001" }
    public var isDeadlock: Bool { sqlState == "40P01" }
    /// A failure that a safe-to-repeat transaction may retry: serialization failure or deadlock.
    public var isTransient: Bool { isSerializationFailure || isDeadlock }
    /// The statement was cancelled (by a Task cancellation or `statement_timeout`).
    public var isQueryCanceled: Bool { sqlState == "57014" }
    public var isLockNotAvailable: Bool { sqlState == "55P03" }
    /// `RAISE EXCEPTION` in PL/pgSQL without an explicit SQLSTATE.
    public var isRaiseException: Bool { sqlState == "P0001" }
    /// The connection is gone: the client saw it close, or the server is shutting it down.
    public var isConnectionFailure: Bool {
        if code == .connectionClosed || code == .connectionFailed { return true }
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }
}

extension PostgresError {
    /// The first line of the message: libpq's connection messages span lines ("…failed:
    /// Connection refused\n\tIs the server running…"), and the first says what happened.
    package var firstLine: String {
        message.split(whereSeparator: \.isNewline).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? message
    }
}

extension PostgresError: CustomStringConvertible {
    public var description: String {
        var text = "PostgresError(\(code)"
        if let sqlState {
            text += ", \(sqlState)"
            if let name = Self.conditionNames[sqlState] { text += " \(name)" }
        }
        // Data exceptions (class 22) quote the rejected input in their message; leave it out.
        if !isDataException { text += ": \(message)" }
        if let constraint { text += ", constraint: \(constraint)" }
        if let table { text += ", table: \(table)" }
        if let column { text += ", column: \(column)" }
        return text + ")"
    }

    /// Condition names of the SQLSTATEs this project meets most, for readable logs.
    static let conditionNames: [String: String] = [
        "08000": "connection_exception", "08003": "connection_does_not_exist",
        "08006": "connection_failure", "0A000": "feature_not_supported",
        "22001": "string_data_right_truncation", "22003": "numeric_value_out_of_range",
        "22007": "invalid_datetime_format", "22008": "datetime_field_overflow",
        "22012": "division_by_zero", "22021": "character_not_in_repertoire",
        "22023": "invalid_parameter_value", "22P02": "invalid_text_representation",
        "23000": "integrity_constraint_violation", "23502": "not_null_violation",
        "23503": "foreign_key_violation", "23505": "unique_violation", "23514": "check_violation",
        "23P01": "exclusion_violation", "25001": "active_sql_transaction",
        "25P02": "in_failed_sql_transaction", "26000": "invalid_sql_statement_name",
        "28000": "invalid_authorization_specification", "28P01": "invalid_password",
        "3D000": "invalid_catalog_name", "40001": "serialization_failure", "40P01": "deadlock_detected",
        "42501": "insufficient_privilege", "42601": "syntax_error", "42703": "undefined_column",
        "42704": "undefined_object", "42710": "duplicate_object", "42883": "undefined_function",
        "42P01": "undefined_table", "42P04": "duplicate_database", "42P07": "duplicate_table",
        "53300": "too_many_connections", "55006": "object_in_use", "55P03": "lock_not_available",
        "57014": "query_canceled", "57P01": "admin_shutdown", "57P02": "crash_shutdown",
        "57P03": "cannot_connect_now", "P0001": "raise_exception", "P0002": "no_data_found",
    ]
}

extension PostgresError: CustomDebugStringConvertible {
    public var debugDescription: String {
        var parts = ["code: \(code)", "message: \(message)"]
        func add(_ label: String, _ value: (any CustomStringConvertible)?) {
            if let value { parts.append("\(label): \(value)") }
        }
        add("sqlState", sqlState)
        add("severity", severity)
        add("detail", detail)
        add("hint", hint)
        add("constraint", constraint)
        add("schema", schema)
        add("table", table)
        add("column", column)
        add("dataType", dataType)
        add("position", position)
        add("context", context)
        add("query", query)
        return "PostgresError(" + parts.joined(separator: ", ") + ")"
    }
}
