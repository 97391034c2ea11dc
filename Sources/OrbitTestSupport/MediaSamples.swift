package import Foundation

/// Files of every accepted type, real and hostile, for the media tests (issue 37, item 3).
package enum MediaSamples {
    /// A black 2000×1000 PNG (made by `vips black big.png 2000 1000`).
    package static let widePNG =
        Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAB9AAAAPoCAAAAACjNTp2AAAACXBIWXMAAAPoAAAD6AG1e1JrAAAHqUlEQVR4nO3BAQ0AAADCoPdPbQ8HFAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAPBmiioAAcbPhlIAAAAASUVORK5CYII="
        ) ?? Data()

    /// A JPEG of `widePNG`, 512×256, made by libvips (`vipsthumbnail`) in `folder`.
    package static func jpeg(in folder: URL) async throws -> Data {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let png = folder.appending(path: "sample-\(UUID().uuidString).png")
        let jpeg = folder.appending(path: "sample-\(UUID().uuidString).jpg")
        try widePNG.write(to: png)
        defer {
            try? FileManager.default.removeItem(at: png)
            try? FileManager.default.removeItem(at: jpeg)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["vipsthumbnail", png.path, "--size", "512x512", "-o", jpeg.path + "[Q=90]"]
        try process.run()
        process.waitUntilExit()
        return try Data(contentsOf: jpeg)
    }

    /// An SVG: what must never reach libvips as an "image/png".
    package static let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="9000" height="9000"><rect width="9" height="9"/></svg>"#.utf8)

    /// A PNG decompression bomb: a valid signature and IHDR chunk claiming 50,000 × 50,000
    /// pixels, and a few bytes of image data (a few hundred bytes that would decode to 2.5 GB).
    package static let pngBomb =
        png(width: 50_000, height: 50_000) + chunk("IDAT", [0x78, 0x9C] + [UInt8](repeating: 0, count: 64)) + chunk("IEND", [])

    /// A header of an image of some size, as its type writes it.
    package struct Header: Sendable, CustomStringConvertible {
        package var mime: String
        package var width: Int
        package var height: Int
        package var bytes: [UInt8]
        package var description: String { "\(mime) \(width)×\(height)" }
    }

    package static let headers: [Header] = [
        Header(mime: "image/png", width: 2000, height: 1000, bytes: Array(widePNG)),
        Header(mime: "image/png", width: 50_000, height: 50_000, bytes: Array(pngBomb)),
        Header(mime: "image/png", width: 10_000, height: 10_000, bytes: Array(png(width: 10_000, height: 10_000))),
        Header(mime: "image/png", width: 10_000, height: 10_001, bytes: Array(png(width: 10_000, height: 10_001))),
        Header(mime: "image/gif", width: 640, height: 480, bytes: Array("GIF89a".utf8) + le(640, 2) + le(480, 2) + [0xF7, 0, 0]),
        Header(mime: "image/gif", width: 65_535, height: 65_535, bytes: Array("GIF87a".utf8) + le(65_535, 2) + le(65_535, 2) + [0, 0, 0]),
        Header(mime: "image/webp", width: 800, height: 600, bytes: riff("VP8 ", le(0, 3) + [0x9D, 0x01, 0x2A] + le(800, 2) + le(600, 2))),
        Header(mime: "image/webp", width: 300, height: 200, bytes: riff("VP8L", [0x2F] + vp8l(width: 300, height: 200))),
        Header(mime: "image/webp", width: 4000, height: 3000, bytes: riff("VP8X", [0, 0, 0, 0] + le(3999, 3) + le(2999, 3))),
        Header(mime: "image/webp", width: 16_384, height: 16_384, bytes: riff("VP8X", [0, 0, 0, 0] + le(16_383, 3) + le(16_383, 3))),
        Header(mime: "image/jpeg", width: 4032, height: 3024, bytes: jpegHeader(width: 4032, height: 3024)),
        Header(mime: "image/jpeg", width: 60_000, height: 60_000, bytes: jpegHeader(width: 60_000, height: 60_000)),
        Header(mime: "image/heic", width: 4032, height: 3024, bytes: heic(sizes: [(512, 512), (4032, 3024)])),
        Header(mime: "image/heic", width: 60_000, height: 60_000, bytes: heic(sizes: [(60_000, 60_000), (512, 512)])),
    ]

    /// The first bytes of content of each accepted type.
    package static func signature(of mime: String) -> [UInt8] {
        switch mime {
        case "image/jpeg": [0xFF, 0xD8, 0xFF]
        case "image/png": Array(widePNG.prefix(8))
        case "image/gif": Array("GIF89a".utf8)
        case "image/webp": Array("RIFF".utf8) + le(100, 4) + Array("WEBP".utf8)
        case "image/heic": Array(heic(sizes: []).prefix(24))
        case "video/mp4": box("ftyp", Array("isom".utf8) + le(0, 4) + Array("isommp41".utf8))
        case "video/quicktime": box("ftyp", Array("qt  ".utf8) + le(0, 4) + Array("qt  ".utf8))
        default: Array("%PDF-".utf8)
        }
    }

    // MARK: - Writing headers

    static func png(width: Int, height: Int) -> Data {
        Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + chunk("IHDR", be(width, 4) + be(height, 4) + [1, 0, 0, 0, 0])
    }

    /// A PNG chunk: length, type, data and the CRC-32 of type and data.
    static func chunk(_ type: String, _ data: [UInt8]) -> Data {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return Data(be(data.count, 4) + body + be(Int(crc ^ 0xFFFF_FFFF), 4))
    }

    static func riff(_ chunk: String, _ payload: [UInt8]) -> [UInt8] {
        let inner = Array("WEBP".utf8) + Array(chunk.utf8) + le(payload.count, 4) + payload
        return Array("RIFF".utf8) + le(inner.count, 4) + inner
    }

    static func vp8l(width: Int, height: Int) -> [UInt8] {
        let bits = (width - 1) | (height - 1) << 14
        return le(bits, 4)
    }

    /// SOI, a JFIF APP0, a quantization table and a baseline frame header (SOF0).
    static func jpegHeader(width: Int, height: Int) -> [UInt8] {
        let app0: [UInt8] = [0xFF, 0xE0] + be(16, 2) + Array("JFIF".utf8) + [0, 1, 1, 0] + be(1, 2) + be(1, 2) + [0, 0]
        let dqt: [UInt8] = [0xFF, 0xDB] + be(67, 2) + [0] + [UInt8](repeating: 1, count: 64)
        let sof: [UInt8] = [0xFF, 0xC0] + be(11, 2) + [8] + be(height, 2) + be(width, 2) + [1, 1, 0x11, 0]
        return [0xFF, 0xD8] + app0 + dqt + sof
    }

    /// An ISO box: size, type, content.
    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be(8 + content.count, 4) + Array(type.utf8) + content }

    /// A HEIF's file type box and its item properties, with an image spatial extent per size.
    static func heic(sizes: [(Int, Int)]) -> [UInt8] {
        let ftyp = box("ftyp", Array("heic".utf8) + be(0, 4) + Array("mif1heic".utf8))
        let extents = sizes.flatMap { box("ispe", [0, 0, 0, 0] + be($0.0, 4) + be($0.1, 4)) }
        let hdlr = box("hdlr", [0, 0, 0, 0] + be(0, 4) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        let meta = box("meta", [0, 0, 0, 0] + hdlr + box("iprp", box("ipco", extents)))
        return ftyp + meta
    }

    static func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    static func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
}
