/// The parameter values of one statement, laid out the way libpq takes them.
///
/// All values share one byte buffer; text values are NUL-terminated there (libpq reads text
/// parameters up to the NUL), binary values are counted by their length. The values are never
/// printed: `description` shows each as `****`.
public struct PostgresBindings: Sendable, Hashable {
    @usableFromInline var buffer = PostgresEncodingBuffer(bytes: [])
    @usableFromInline var types: [UInt32] = []
    @usableFromInline var formats: [Int32] = []
    /// Offset of each value in `buffer`, or -1 for NULL.
    @usableFromInline var offsets: [Int32] = []
    @usableFromInline var lengths: [Int32] = []
    /// The first value that could not be encoded; the statement throws it instead of running.
    @usableFromInline var encodingError: PostgresError?

    public init() {}

    public init(capacity: Int) {
        types.reserveCapacity(capacity)
        formats.reserveCapacity(capacity)
        offsets.reserveCapacity(capacity)
        lengths.reserveCapacity(capacity)
    }

    public var count: Int { types.count }

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
                encodingError = (error as? PostgresError)
                    ?? PostgresError(code: .encoding, message: "parameter $\(count + 1): \(error)")
            }
            appendNull()
            return
        }
        let length = buffer.count - start
        if Value.postgresFormat == .text { buffer.append(0) }
        types.append(Value.postgresType.oid)
        formats.append(Value.postgresFormat.rawValue)
        offsets.append(Int32(truncatingIfNeeded: start))
        lengths.append(Int32(truncatingIfNeeded: length))
    }

    /// Appends SQL NULL with a type the server infers from the context.
    @inlinable
    public mutating func appendNull() {
        types.append(PostgresType.unspecified.oid)
        formats.append(PostgresFormat.text.rawValue)
        offsets.append(-1)
        lengths.append(0)
    }

    /// Calls `body` with the four parallel arrays `PQexecParams` and friends take.
    func withLibpqArguments<Result>(
        _ body: (
            _ count: Int32,
            _ values: UnsafePointer<UnsafePointer<CChar>?>?,
            _ lengths: UnsafePointer<Int32>?,
            _ formats: UnsafePointer<Int32>?
        ) throws -> Result
    ) rethrows -> Result {
        let count = offsets.count
        if count == 0 { return try body(0, nil, nil, nil) }
        return try buffer.bytes.withUnsafeBufferPointer { bytes in
            try withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { values in
                // An empty buffer (only NULLs or empty binary values) has no base address; libpq
                // still wants a non-NULL pointer for a zero-length binary value.
                let base = UnsafeRawPointer(bytes.baseAddress) ?? UnsafeRawPointer(Self.emptyValue)
                for index in 0..<count {
                    let offset = offsets[index]
                    values[index] = offset < 0 ? nil : (base + Int(offset)).assumingMemoryBound(to: CChar.self)
                }
                return try lengths.withUnsafeBufferPointer { lengths in
                    try formats.withUnsafeBufferPointer { formats in
                        try body(Int32(count), UnsafePointer(values.baseAddress), lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }

    // Immutable after its one-time initialization.
    nonisolated(unsafe) private static let emptyValue: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.buffer.bytes == rhs.buffer.bytes && lhs.types == rhs.types && lhs.formats == rhs.formats
            && lhs.offsets == rhs.offsets && lhs.lengths == rhs.lengths
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(buffer.bytes)
        hasher.combine(types)
        hasher.combine(offsets)
    }
}

extension PostgresBindings: CustomStringConvertible {
    /// The parameter types, never the values: `[$1 bigint ****, $2 unspecified NULL]`.
    public var description: String {
        let items = (0..<count).map { index in
            "$\(index + 1) \(PostgresType(oid: types[index])) \(offsets[index] < 0 ? "NULL" : "****")"
        }
        return "[" + items.joined(separator: ", ") + "]"
    }
}
