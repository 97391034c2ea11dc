import Foundation

/// What an upload's first bytes say it is (issue 37, item 3; docs/security.md). An upload is
/// stored only when its content begins as its declared type's does (an SVG or a PDF sent as
/// `image/png` is refused, so libvips never picks a loader by sniffing what we did not accept),
/// and an image only when its header's pixel count is within `maxPixels` (a decompression bomb —
/// a small file that claims 50,000 × 50,000 pixels — is refused before anything decodes it).
package enum MediaContent {
    /// The most pixels an image may have: 100 megapixels (a phone's largest photos are 48–200 MP
    /// raw, stored at 12–50 MP).
    package static let maxPixels = 100_000_000

    /// How many of a file's first bytes are read to check its type and find an image's size.
    package static let prefixLength = 1 << 20

    /// An image's size as its header gives it.
    package struct ImageSize: Sendable, Equatable {
        package var width: Int
        package var height: Int

        package init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }

    /// Checks `prefix` (the first `prefixLength` bytes, or all of a shorter file) against
    /// `mime`, an accepted type (`Media.allowedTypes`): its signature, and for an image the
    /// pixel count of its header. Returns the image's size when the header was found.
    /// - Throws: `invalidInput(field: "file")` when the content is not of the declared type, or
    ///   is an image of more than `maxPixels` pixels.
    package static func inspect(_ prefix: some Collection<UInt8>, declaredAs mime: String) throws -> ImageSize? {
        let bytes = Array(prefix)
        guard matches(bytes, mime: mime) else {
            throw ServiceError.invalidInput(field: "file", reason: "does not hold \(mime) content (its first bytes are not those of that type)")
        }
        guard let size = imageSize(bytes, mime: mime) else { return nil }
        let pixels = size.width.multipliedReportingOverflow(by: size.height)
        guard size.width > 0, size.height > 0, !pixels.overflow, pixels.partialValue <= maxPixels else {
            throw ServiceError.invalidInput(
                field: "file",
                reason: "is an image of \(size.width) × \(size.height) pixels; at most \(maxPixels / 1_000_000) megapixels are accepted")
        }
        return size
    }

    /// Whether `bytes` begin as content of `mime` does.
    static func matches(_ bytes: [UInt8], mime: String) -> Bool {
        switch mime {
        case "image/jpeg": return bytes.starts(with: [0xFF, 0xD8, 0xFF])
        case "image/png": return bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case "image/gif": return bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8))
        case "image/webp": return bytes.starts(with: Array("RIFF".utf8)) && ascii(bytes, 8, 4) == "WEBP"
        case "image/heic": return fileTypeBrands(bytes).contains { heifBrands.contains($0) }
        case "video/mp4": return !fileTypeBrands(bytes).isEmpty
        // QuickTime: an ISO file type box, or one of the atoms that begin older files.
        case "video/quicktime":
            return !fileTypeBrands(bytes).isEmpty || ["moov", "mdat", "wide", "free", "skip", "pnot"].contains(ascii(bytes, 4, 4))
        case "application/pdf": return bytes.starts(with: Array("%PDF-".utf8))
        default: return false
        }
    }

    /// The brands of an ISO base media file's `ftyp` box (the major brand and the compatible
    /// ones); empty when the file does not begin with one.
    static func fileTypeBrands(_ bytes: [UInt8]) -> [String] {
        guard ascii(bytes, 4, 4) == "ftyp", let size = bigEndian(bytes, 0, 4), size >= 16 else { return [] }
        let end = min(size, bytes.count)
        var brands = [ascii(bytes, 8, 4)].compactMap { $0 }
        var offset = 16
        while offset + 4 <= end {
            if let brand = ascii(bytes, offset, 4) { brands.append(brand) }
            offset += 4
        }
        return brands
    }

    static let heifBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]

    /// An image's width and height from its header, or nil when `bytes` do not hold it.
    static func imageSize(_ bytes: [UInt8], mime: String) -> ImageSize? {
        switch mime {
        case "image/png":
            // The IHDR chunk comes first: width and height, big-endian, at 16 and 20.
            guard ascii(bytes, 12, 4) == "IHDR", let width = bigEndian(bytes, 16, 4), let height = bigEndian(bytes, 20, 4) else { return nil }
            return ImageSize(width: width, height: height)
        case "image/gif":
            guard let width = littleEndian(bytes, 6, 2), let height = littleEndian(bytes, 8, 2) else { return nil }
            return ImageSize(width: width, height: height)
        case "image/webp": return webPSize(bytes)
        case "image/jpeg": return jpegSize(bytes)
        case "image/heic": return heifSize(bytes)
        default: return nil
        }
    }

    /// The frame header (SOFn) of a JPEG: markers are walked from the start of image, skipping
    /// each segment by its length.
    static func jpegSize(_ bytes: [UInt8]) -> ImageSize? {
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return nil }
            let marker = bytes[offset + 1]
            // Fill bytes, and markers without a segment (TEM, RSTn).
            if marker == 0xFF {
                offset += 1
                continue
            }
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                offset += 2
                continue
            }
            guard let length = bigEndian(bytes, offset + 2, 2), length >= 2 else { return nil }
            // SOF0–SOF15, but DHT (C4), JPG (C8) and DAC (CC): P, then height and width.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard let height = bigEndian(bytes, offset + 5, 2), let width = bigEndian(bytes, offset + 7, 2) else { return nil }
                return ImageSize(width: width, height: height)
            }
            // The start of scan or the end of image before a frame header: none.
            if marker == 0xDA || marker == 0xD9 { return nil }
            offset += 2 + length
        }
        return nil
    }

    /// The canvas of a WebP: lossy (VP8), lossless (VP8L) or extended (VP8X).
    static func webPSize(_ bytes: [UInt8]) -> ImageSize? {
        switch ascii(bytes, 12, 4) {
        case "VP8 ":
            guard bytes.count >= 30, bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A,
                let width = littleEndian(bytes, 26, 2), let height = littleEndian(bytes, 28, 2)
            else { return nil }
            return ImageSize(width: width & 0x3FFF, height: height & 0x3FFF)
        case "VP8L":
            guard bytes.count >= 25, bytes[20] == 0x2F else { return nil }
            let (b0, b1, b2, b3) = (Int(bytes[21]), Int(bytes[22]), Int(bytes[23]), Int(bytes[24]))
            return ImageSize(width: 1 + (b0 | (b1 & 0x3F) << 8), height: 1 + (b1 >> 6 | b2 << 2 | (b3 & 0x0F) << 10))
        case "VP8X":
            guard let width = littleEndian(bytes, 24, 3), let height = littleEndian(bytes, 27, 3) else { return nil }
            return ImageSize(width: width + 1, height: height + 1)
        default:
            return nil
        }
    }

    /// The largest image spatial extent (`ispe`) of a HEIF's item properties: meta → iprp →
    /// ipco → ispe (a grid's full size, not its tiles').
    static func heifSize(_ bytes: [UInt8]) -> ImageSize? {
        guard let meta = box("meta", in: bytes, from: 0, to: bytes.count),
            let iprp = box("iprp", in: bytes, from: meta.lowerBound + 4, to: meta.upperBound),
            let ipco = box("ipco", in: bytes, from: iprp.lowerBound, to: iprp.upperBound)
        else { return nil }
        var largest: ImageSize?
        var offset = ipco.lowerBound
        while let found = box("ispe", in: bytes, from: offset, to: ipco.upperBound) {
            // Both at most 2³² − 1: their product fits in 64 bits.
            if let width = bigEndian(bytes, found.lowerBound + 4, 4), let height = bigEndian(bytes, found.lowerBound + 8, 4),
                UInt64(width) * UInt64(height) >= largest.map({ UInt64($0.width) * UInt64($0.height) }) ?? 0
            {
                largest = ImageSize(width: width, height: height)
            }
            offset = max(found.upperBound, offset + 1)
        }
        return largest
    }

    /// The content (after the header) of the first box of `type` among the boxes that follow
    /// one another in `bytes[from..<to]`.
    static func box(_ type: String, in bytes: [UInt8], from: Int, to: Int) -> Range<Int>? {
        var offset = from
        while offset + 8 <= to {
            guard var size = bigEndian(bytes, offset, 4), let name = ascii(bytes, offset + 4, 4) else { return nil }
            var header = 8
            if size == 1 {
                guard let large = bigEndian(bytes, offset + 8, 8) else { return nil }
                size = large
                header = 16
            } else if size == 0 {
                size = to - offset
            }
            guard size >= header else { return nil }
            size = min(size, to - offset)
            if name == type { return min(offset + header, offset + size)..<(offset + size) }
            offset += size
        }
        return nil
    }

    private static func ascii(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> String? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        let slice = bytes[offset..<offset + count]
        guard slice.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: slice, as: UTF8.self)
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count, count <= 7 || bytes[offset] < 0x80 else { return nil }
        return bytes[offset..<offset + count].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<offset + count].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
