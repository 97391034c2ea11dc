/// The parameter values of one statement, laid out the way libpq takes them.
///
/// All values share one byte buffer; text values are NUL-terminated there (libpq reads text
/// parameters up to the NUL), binary values are counted by their length. The values are never
/// printed: `description` shows each as `****`.
public struct PostgresBindings: Sendable, Hashable {
    /// Where one parameter's bytes are and how they travel.
    @usableFromInline
    struct Parameter: Sendable, Hashable {
        @usableFromInline var type: UInt32
        @usableFromInline var format: Int32
        /// Offset in `buffer`, or -1 for NULL.
        @usableFromInline var offset: Int32
        @usableFromInline var length: Int32

        @inlinable init(type: UInt32, format: Int32, offset: Int32, length: Int32) {
            self.type = type
            self.format = format
            self.offset = offset
            self.length = length
        }
    }

    @usableFromInline var buffer = PostgresEncodingBuffer(bytes: [])
    @usableFromInline var parameters: [Parameter] = []
    /// The first value that could not be encoded; the statement throws it instead of running.
    @usableFromInline var encodingError: PostgresError?

    public init() {}

    public init(capacity: Int) {
        parameters.reserveCapacity(capacity)
    }

    public var count: Int { parameters.count }

    /// The parameters' type OIDs, in order.
    public var types: [UInt32] { parameters.map(\.type) }

    /// Appends a value; `nil` is sent as SQL NULL.
    @inlinable
    public mutating func append<Value: PostgresEncodable>(_ value: Value?) {
        guard let value else {
            appendNull()
            return
        }
        append(value)
    }

    @inlinable
    public mutating func append<Value: PostgresEncodable>(_ value: Value) {
        let start = buffer.count
        do {
            try value.encode(into: &buffer)
        } catch {
            buffer.bytes.removeSubrange(start...)
            if encodingError == nil {
                encodingError =
                    (error as? PostgresError)
                    ?? PostgresError(code: .encoding, message: "parameter $\(count + 1): \(error)")
            }
            appendNull()
            return
        }
        let length = buffer.count - start
        if Value.postgresFormat == .text { buffer.append(0) }
        parameters.append(
            Parameter(
                type: Value.postgresType.oid,
                format: Value.postgresFormat.rawValue,
                offset: Int32(truncatingIfNeeded: start),
                length: Int32(truncatingIfNeeded: length)
            )
        )
    }

    /// Appends another statement's parameters after these (a fragment spliced into a query).
    public mutating func append(contentsOf other: PostgresBindings) {
        let shift = Int32(truncatingIfNeeded: buffer.count)
        buffer.append(contentsOf: other.buffer.bytes)
        for parameter in other.parameters {
            var moved = parameter
            if moved.offset >= 0 { moved.offset += shift }
            parameters.append(moved)
        }
        if encodingError == nil { encodingError = other.encodingError }
    }

    /// Appends SQL NULL with a type the server infers from the context.
    @inlinable
    public mutating func appendNull() {
        parameters.append(Parameter(type: PostgresType.unspecified.oid, format: PostgresFormat.text.rawValue, offset: -1, length: 0))
    }

    /// Calls `body` with the parallel arrays `PQexecParams` and friends take, built on the stack.
    func withLibpqArguments<Result>(
        _ body: (
            _ count: Int32,
            _ types: UnsafePointer<UInt32>?,
            _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?,
            _ formats: UnsafePointer<Int32>?
        ) throws -> Result
    ) rethrows -> Result {
        let count = parameters.count
        if count == 0 { return try body(0, nil, nil, nil, nil) }
        return try buffer.bytes.withUnsafeBufferPointer { bytes in
            try parameters.withUnsafeBufferPointer { parameters in
                try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
                    try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: count) { types in
                        try withUnsafeTemporaryAllocation(of: Int32.self, capacity: 2 * count) { integers in
                            // An empty buffer (only NULLs or empty binary values) has no base
                            // address; libpq still wants a non-NULL pointer for an empty value.
                            let base = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(Self.emptyValue)
                            for index in 0..<count {
                                let parameter = parameters[index]
                                values[index] =
                                    parameter.offset < 0
                                    ? nil : (base + Int(parameter.offset)).assumingMemoryBound(to: CChar.self)
                                types[index] = parameter.type
                                integers[index] = parameter.length
                                integers[count + index] = parameter.format
                            }
                            let lengths = UnsafePointer(integers.baseAddress)
                            return try body(
                                Int32(count),
                                UnsafePointer(types.baseAddress),
                                UnsafePointer(values.baseAddress),
                                lengths,
                                lengths.map { $0 + count }
                            )
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with the parameter type OIDs (for `PQprepare`).
    func withTypes<Result>(_ body: (_ count: Int32, _ types: UnsafePointer<UInt32>?) throws -> Result) rethrows -> Result {
        try withLibpqArguments { count, types, _, _, _ in try body(count, types) }
    }

    // Immutable after its one-time initialization.
    nonisolated(unsafe) private static let emptyValue: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.buffer.bytes == rhs.buffer.bytes && lhs.parameters == rhs.parameters
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(buffer.bytes)
        hasher.combine(parameters)
    }

    /// True when both have the same parameter types (what a prepared statement depends on).
    func hasSameTypes(as other: Self) -> Bool {
        parameters.count == other.parameters.count
            && zip(parameters, other.parameters).allSatisfy { $0.type == $1.type }
    }

    func hashTypes(into hasher: inout Hasher) {
        hasher.combine(parameters.count)
        for parameter in parameters { hasher.combine(parameter.type) }
    }
}

extension PostgresBindings: CustomStringConvertible {
    /// The parameter types, never the values: `[$1 bigint ****, $2 unspecified NULL]`.
    public var description: String {
        let items = parameters.enumerated().map { index, parameter in
            "$\(index + 1) \(PostgresType(oid: parameter.type)) \(parameter.offset < 0 ? "NULL" : "****")"
        }
        return "[" + items.joined(separator: ", ") + "]"
    }
}
