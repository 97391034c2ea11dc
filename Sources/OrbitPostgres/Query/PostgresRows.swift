import CLibPQ
import Foundation

/// The result of one statement: its rows (possibly none) and its command tag.
///
/// Owns the libpq `PGresult` and clears it exactly once, when the last reference goes away.
public final class PostgresRows: @unchecked Sendable {
    // @unchecked Sendable: a PGresult is read-only after creation and libpq allows reading it
    // from any thread; this class never mutates it and clears it only in deinit.
    let result: OpaquePointer
    /// The SQL text that produced these rows, for error messages.
    let sql: String
    public let count: Int
    public let columnCount: Int

    init(result: OpaquePointer, sql: String) {
        self.result = result
        self.sql = sql
        self.count = Int(PQntuples(result))
        self.columnCount = Int(PQnfields(result))
    }

    deinit { PQclear(result) }

    /// The command tag, for example `INSERT 0 1` or `SELECT 3`.
    public var commandTag: String { String(cString: PQcmdStatus(result)) }

    /// Rows inserted, updated, deleted, selected, … by the statement (`PQcmdTuples`), if it says.
    public var affectedRows: Int? { Int(String(cString: PQcmdTuples(result))) }

    /// The columns' names and types, in order.
    public var columns: [PostgresColumn] {
        (0..<Int32(columnCount)).map { index in
            PostgresColumn(name: String(cString: PQfname(result, index)), type: PostgresType(oid: PQftype(result, index)))
        }
    }

    /// The 0-based index of the column named exactly `name`, if there is one.
    public func columnIndex(named name: String) -> Int? {
        name.withCString { wanted in
            for index in 0..<Int32(columnCount) where strcmp(PQfname(result, index), wanted) == 0 {
                return Int(index)
            }
            return nil
        }
    }

    /// The only row, or an error naming what was found instead (`noRow` for none).
    public func single() throws -> PostgresRow {
        guard count != 0 else { throw PostgresError(code: .noRow, message: "expected exactly one row, got 0") }
        guard count == 1 else {
            throw PostgresError(code: .unexpectedResponse, message: "expected exactly one row, got \(count)")
        }
        return self[0]
    }
}

public struct PostgresColumn: Sendable, Hashable {
    public var name: String
    public var type: PostgresType
}

extension PostgresRows: RandomAccessCollection {
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }
    public subscript(position: Int) -> PostgresRow {
        precondition(position >= 0 && position < count, "row index \(position) out of range 0..<\(count)")
        return PostgresRow(rows: self, index: Int32(position))
    }
}

/// One row of a `PostgresRows`. Decode columns by name or by 0-based index.
public struct PostgresRow: Sendable {
    public let rows: PostgresRows
    @usableFromInline let index: Int32

    /// Decodes the column named `column`; NULL decodes only into an `Optional`.
    /// - Throws: `PostgresError` with code `.decoding`, naming the column, the expected Swift
    ///   type and the column's type, if the column is missing or its value does not fit.
    @inlinable
    public func decode<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        guard let position = rows.columnIndex(named: column) else {
            let names = rows.columns.map(\.name).joined(separator: ", ")
            throw PostgresError(
                code: .decoding,
                message: "no column named \"\(column)\" (the row has: \(names))"
            )
        }
        return try decode(position, as: Value.self)
    }

    /// Decodes the column at the 0-based `column` index.
    @inlinable
    public func decode<Value: PostgresDecodable>(_ column: Int, as type: Value.Type = Value.self) throws -> Value {
        guard column >= 0, column < rows.columnCount else {
            throw PostgresError(
                code: .decoding,
                message: "no column at index \(column) (the row has \(rows.columnCount) columns)"
            )
        }
        return try rows.decodeValue(row: index, column: Int32(column), as: Value.self)
    }

    /// Decodes the leading columns positionally: `let (id, name) = try row.decode((UUID, String?).self)`.
    public func decode<each Value: PostgresDecodable>(_ types: (repeat each Value).Type) throws -> (repeat each Value) {
        var column = 0
        func next<V: PostgresDecodable>(_ type: V.Type) throws -> V {
            defer { column += 1 }
            return try decode(column, as: V.self)
        }
        return (repeat try next((each Value).self))
    }

    /// Whether the named column is SQL NULL (false if there is no such column).
    public func isNull(_ column: String) -> Bool {
        guard let position = rows.columnIndex(named: column) else { return false }
        return PQgetisnull(rows.result, index, Int32(position)) != 0
    }
}

extension PostgresRows {
    @inlinable
    func decodeValue<Value: PostgresDecodable>(row: Int32, column: Int32, as: Value.Type) throws -> Value {
        do {
            guard let value = cell(row: row, column: column) else { return try Value.decodeNull() }
            return try Value(from: value)
        } catch let failure as PostgresDecodingFailure {
            throw decodingError(column: column, expected: Value.self, reason: failure.reason)
        }
    }

    /// One cell's bytes and type, or nil for SQL NULL. Valid while these rows live.
    @usableFromInline
    func cell(row: Int32, column: Int32) -> PostgresValue? {
        if PQgetisnull(result, row, column) != 0 { return nil }
        let length = Int(PQgetlength(result, row, column))
        let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
        let format: PostgresFormat = PQfformat(result, column) == 1 ? .binary : .text
        return PostgresValue(bytes: bytes, type: PostgresType(oid: PQftype(result, column)), format: format)
    }

    @usableFromInline
    func decodingError<Value>(column: Int32, expected: Value.Type, reason: String) -> PostgresError {
        let name = String(cString: PQfname(result, column))
        let type = PostgresType(oid: PQftype(result, column))
        var error = PostgresError(
            code: .decoding,
            message: "cannot decode column \"\(name)\" (\(type)) as \(Value.self): \(reason)"
        )
        error.column = name
        error.dataType = type.description
        error.query = sql
        return error
    }
}
