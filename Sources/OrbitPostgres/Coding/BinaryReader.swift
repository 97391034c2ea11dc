/// Reads PostgreSQL's binary wire forms front to back: big-endian integers and counted bytes.
/// Every read checks the length first, so malformed bytes throw instead of reading past the end.
struct BinaryReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var remaining: Int { bytes.count - position }
    var isAtEnd: Bool { position == bytes.count }

    mutating func read<Integer: FixedWidthInteger>(_: Integer.Type) throws -> Integer {
        let size = MemoryLayout<Integer>.size
        guard remaining >= size else { throw PostgresDecodingFailure("the binary value is truncated") }
        defer { position += size }
        return Integer(bigEndian: bytes.loadUnaligned(fromByteOffset: position, as: Integer.self))
    }

    mutating func read(count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw PostgresDecodingFailure("the binary value is truncated") }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
    }

    /// Throws unless every byte was read: trailing bytes mean the value is not what it claims.
    func expectEnd() throws {
        guard isAtEnd else { throw PostgresDecodingFailure("the binary value has \(remaining) bytes too many") }
    }
}
