/// A SQL statement and its parameters.
///
/// Write it as a string literal; every interpolated value becomes a parameter:
///
/// ```swift
/// let rows = try await connection.query("SELECT name FROM users WHERE id = \(userID) AND age > \(18)")
/// // sends: SELECT name FROM users WHERE id = $1 AND age > $2   with binds [uuid ****, bigint ****]
/// ```
///
/// Text can only be spliced into the SQL with the explicit `\(unescaped:)`, for trusted
/// constants such as an isolation level or an identifier already quoted by
/// `PostgresConnection.escapeIdentifier`.
public struct PostgresQuery: Sendable, Hashable {
    /// The SQL text with `$n` placeholders.
    public var sql: String
    public var binds: PostgresBindings

    /// A statement whose parameters are given separately; `sql` refers to them as `$1`, `$2`, ….
    public init(unsafeSQL sql: String, binds: PostgresBindings = PostgresBindings()) {
        self.sql = sql
        self.binds = binds
    }
}

extension PostgresQuery: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self.sql = value
        self.binds = PostgresBindings()
    }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.binds = stringInterpolation.binds
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        @usableFromInline var sql: String
        @usableFromInline var binds: PostgresBindings

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + 3 * interpolationCount)
            binds = PostgresBindings(capacity: interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql.append(literal)
        }

        /// A parameter: appends `$n` to the SQL and the value to the binds.
        @inlinable
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            binds.append(value)
            sql.append("$\(binds.count)")
        }

        /// A parameter that is NULL when `value` is `nil`.
        @inlinable
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            binds.append(value)
            sql.append("$\(binds.count)")
        }

        /// Another query built the same way (a fragment: a predicate several statements share),
        /// spliced in with its parameters: its `$n` become `$(n + the parameters before it)`.
        /// A fragment's SQL has no `$` but its placeholders (no dollar quoting in fragments).
        public mutating func appendInterpolation(_ fragment: PostgresQuery) {
            let offset = binds.count
            var digits = ""
            var afterDollar = false
            func flush() {
                if afterDollar { sql.append(digits.isEmpty ? "$" : "$\((Int(digits) ?? 0) + offset)") }
                afterDollar = false
                digits = ""
            }
            for character in fragment.sql {
                if afterDollar, character.isASCII, character.isNumber {
                    digits.append(character)
                    continue
                }
                flush()
                if character == "$" {
                    afterDollar = true
                } else {
                    sql.append(character)
                }
            }
            flush()
            binds.append(contentsOf: fragment.binds)
        }

        /// Splices trusted text into the SQL. Never pass user input here.
        public mutating func appendInterpolation(unescaped text: String) {
            sql.append(text)
        }
    }
}

extension PostgresQuery: CustomStringConvertible {
    /// The SQL and the parameter types; values are shown as `****`.
    public var description: String { binds.count == 0 ? sql : "\(sql) \(binds)" }
}
