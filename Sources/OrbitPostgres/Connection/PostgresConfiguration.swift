import CLibPQ
public import Foundation

/// How to reach the server, in libpq's own terms.
///
/// The connection string is a URL (`postgresql://user@host:5432/db?sslmode=require`) or a
/// key=value conninfo (`host=/tmp port=5432 dbname=app`), handed to libpq as it is; anything it
/// leaves out comes from libpq's `PG*` environment variables and defaults. This type never
/// assembles a connection string from parts.
public struct PostgresConfiguration: Sendable {
    /// The URL or conninfo, or `nil` to use only `parameters` and the `PG*` environment variables.
    public var connectionString: String?
    /// libpq keyword/value pairs applied after the connection string, so they override it
    /// (for example `dbname` to reach another database on the same server).
    public var parameters: [(keyword: String, value: String)] = []
    /// Seconds libpq waits for the server before giving up (libpq `connect_timeout`), unless the
    /// connection string sets its own.
    public var connectTimeout: Int = 10
    /// Reported to the server (`pg_stat_activity.application_name`) unless the string sets one.
    public var applicationName: String = "orbitcove"
    /// Prepared statements kept per connection. 0 sends every statement unnamed, which is
    /// what a transaction-mode pooler such as pgbouncer needs.
    public var statementCacheCapacity: Int = 256

    /// A configuration from a URL or conninfo string, checked for syntax without connecting.
    /// - Throws: `PostgresError` `.connectionFailed` with libpq's reason (never the password).
    public init(connectionString: String) throws {
        self.connectionString = connectionString
        _ = try Self.parse(connectionString)
    }

    /// A configuration from libpq keyword/value pairs (`host`, `port`, `user`, `dbname`, …).
    public init(parameters: [(keyword: String, value: String)]) {
        self.connectionString = nil
        self.parameters = parameters
    }

    /// Only the `PG*` environment variables and libpq's defaults.
    public init() {
        self.connectionString = nil
    }

    /// `DATABASE_URL` if it is set and not empty; otherwise libpq's `PG*` variables.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> PostgresConfiguration {
        if let url = environment["DATABASE_URL"], !url.isEmpty {
            return try PostgresConfiguration(connectionString: url)
        }
        return PostgresConfiguration()
    }

    /// The same server and credentials, another database.
    public func database(_ name: String) -> PostgresConfiguration {
        var copy = self
        copy.parameters.append((keyword: "dbname", value: name))
        return copy
    }

    /// The keyword/value pairs for `PQconnectdbParams`, in order (libpq keeps the last value of a
    /// repeated keyword): our defaults first so that the connection string overrides them, the
    /// connection string as the first `dbname` (the only one libpq expands), the explicit
    /// parameters, then `client_encoding`, which this client relies on.
    var connectParameters: (pairs: [(String, String)], expandDatabaseName: Bool) {
        var pairs = [
            ("connect_timeout", String(connectTimeout)),
            ("application_name", applicationName),
        ]
        if let connectionString { pairs.append(("dbname", connectionString)) }
        pairs.append(contentsOf: parameters.map { ($0.keyword, $0.value) })
        pairs.append(("client_encoding", "UTF8"))
        return (pairs, connectionString != nil)
    }

    /// The password in the connection string or `PGPASSWORD`, to keep it out of messages.
    var secrets: [String] {
        var secrets = parameters.filter { $0.keyword == "password" && !$0.value.isEmpty }.map(\.value)
        if let connectionString, let options = try? Self.parse(connectionString),
            let password = options["password"], !password.isEmpty
        {
            secrets.append(password)
            if let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics),
                encoded != password
            {
                secrets.append(encoded)
            }
        }
        if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
            secrets.append(password)
        }
        return secrets
    }

    /// Replaces every secret in `text` with `****`.
    func redact(_ text: String) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "****") }
    }

    /// The options libpq reads from `string`.
    static func parse(_ string: String) throws -> [String: String] {
        var errorMessage: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(string, &errorMessage) else {
            var reason = "the connection string is not valid"
            if let errorMessage {
                reason = String(cString: errorMessage).trimmingCharacters(in: .whitespacesAndNewlines)
                PQfreemem(errorMessage)
            }
            // libpq's message may quote part of the string; a password must not leak through it.
            let redacted = Self.redactPasswordLike(reason, in: string)
            throw PostgresError(code: .connectionFailed, message: "invalid connection string: \(redacted)")
        }
        defer { PQconninfoFree(options) }
        var result: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                result[String(cString: keyword)] = String(cString: value)
            }
            option += 1
        }
        return result
    }

    /// Best effort for a string libpq cannot parse: mask what looks like a password in it.
    private static func redactPasswordLike(_ message: String, in string: String) -> String {
        var message = message
        // URL form: scheme://user:password@host
        if let schemeEnd = string.range(of: "://"),
            let at = string[schemeEnd.upperBound...].firstIndex(of: "@"),
            let colon = string[schemeEnd.upperBound..<at].firstIndex(of: ":")
        {
            let password = String(string[string.index(after: colon)..<at])
            if !password.isEmpty { message = message.replacingOccurrences(of: password, with: "****") }
        }
        // conninfo form: password=secret
        if let range = string.range(of: "password=") {
            let password = string[range.upperBound...].prefix { !$0.isWhitespace }
            if !password.isEmpty { message = message.replacingOccurrences(of: String(password), with: "****") }
        }
        return message
    }
}

extension PostgresConfiguration: CustomStringConvertible {
    /// The connection settings with the password masked.
    public var description: String {
        var options: [String: String] = [:]
        if let connectionString {
            guard let parsed = try? Self.parse(connectionString) else {
                return "PostgresConfiguration(<invalid connection string>)"
            }
            options = parsed
        }
        for (keyword, value) in parameters { options[keyword] = value }
        if options.isEmpty { return "PostgresConfiguration(PG* environment)" }
        let shown = options.keys.sorted().compactMap { key -> String? in
            guard let value = options[key], !value.isEmpty else { return nil }
            return "\(key)=\(key == "password" ? "****" : value)"
        }
        return "PostgresConfiguration(" + shown.joined(separator: " ") + ")"
    }
}
