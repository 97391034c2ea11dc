import OrbitPostgres

/// What goes into the log for an unexpected error, wherever it is caught (a request, a job, the
/// listener): the server's first line for database errors (never bound values), the type name
/// otherwise.
package enum ErrorLog {
    package static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresError { return "PostgresError \(error.sqlState ?? "") \(error.message)" }
        return String(describing: type(of: error))
    }
}
