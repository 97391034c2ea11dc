import Foundation
import Hummingbird
import NIOCore
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

@testable import OrbitAPI

/// `GET /media/{id}` (issue 21, item 3): the file to members of its community only, with its
/// type, an ETag, caching headers and byte ranges.
@Suite("Serving media")
struct MediaServingTests {
    @Test("members get the file, whole or by range; 304 for a known version; 416 past the end; others find nothing")
    func serving() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let bytes = Data(MediaSamples.signature(of: "video/mp4") + (0..<976).map { UInt8($0 % 251) })
            let uploaded = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=clip.mp4", token: cast.memberToken, body: bytes,
                headers: ["Content-Type": "video/mp4"])
            #expect(uploaded.status == 201, "\(uploaded.text)")
            let path = "/media/\(try uploaded.string("id"))"

            let whole = try await harness.request(.get, path, token: cast.adminToken)
            #expect(whole.status == 200)
            #expect(whole.body == bytes)
            #expect(whole.headers[.contentType] == "video/mp4")
            #expect(whole.headers[.acceptRanges] == "bytes")
            #expect(whole.headers[.cacheControl]?.hasPrefix("private") == true)
            let etag = try #require(whole.headers[.eTag])

            let head = try await harness.request(.get, path, token: cast.adminToken, headers: ["Range": "bytes=0-99"])
            #expect(head.status == 206)
            #expect(head.body == bytes.prefix(100))
            #expect(head.headers[.contentRange] == "bytes 0-99/1000")
            let tail = try await harness.request(.get, path, token: cast.adminToken, headers: ["Range": "bytes=-10"])
            #expect(tail.body == bytes.suffix(10))
            let from = try await harness.request(.get, path, token: cast.adminToken, headers: ["Range": "bytes=990-"])
            #expect(from.body == bytes.suffix(10))
            #expect(from.headers[.contentRange] == "bytes 990-999/1000")
            let past = try await harness.request(.get, path, token: cast.adminToken, headers: ["Range": "bytes=1000-"])
            #expect(past.status == 416)
            #expect(past.headers[.contentRange] == "bytes */1000")
            // Another version named in If-Range: the whole file.
            let stale = try await harness.request(.get, path, token: cast.adminToken, headers: ["Range": "bytes=0-9", "If-Range": "\"other\""])
            #expect(stale.status == 200 && stale.body == bytes)

            let cached = try await harness.request(.get, path, token: cast.adminToken, headers: ["If-None-Match": etag])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)

            #expect(try await harness.request(.get, path, token: cast.outsiderToken).status == 404)
            #expect(try await harness.request(.get, path).status == 401)
        }
    }

    @Test("an image gets a libvips thumbnail at upload; media JSON carries URLs the app can load; a PDF has none; delete removes both files")
    func thumbnailsAndURLs() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder, publicURL: "https://api.example.com/")) { harness in
            let cast = try await APICast.make(harness)
            let png = MediaSamples.widePNG
            let uploaded = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=wide.png", token: cast.memberToken, body: png,
                headers: ["Content-Type": "image/png"])
            #expect(uploaded.status == 201, "\(uploaded.text)")
            let id = try uploaded.string("id")
            #expect(try uploaded.string("url") == "https://api.example.com/media/\(id)")
            #expect(try uploaded.string("thumbnail_url") == "https://api.example.com/media/\(id)/thumbnail")

            let thumbnail = try await harness.request(.get, "/media/\(id)/thumbnail", token: cast.adminToken)
            #expect(thumbnail.status == 200)
            #expect(thumbnail.headers[.contentType] == "image/jpeg")
            #expect(thumbnail.body.prefix(3) == Data([0xFF, 0xD8, 0xFF]))
            // JPEG's SOF0 marker holds the height and width: shrunk to 512 on the longer side.
            let marker = try #require(thumbnail.body.firstRange(of: Data([0xFF, 0xC0])))
            let sof = thumbnail.body[marker.lowerBound...].prefix(9).map(Int.init)
            #expect((sof[7] << 8 | sof[8], sof[5] << 8 | sof[6]) == (512, 256))
            #expect(try await harness.request(.get, "/media/\(id)/thumbnail", token: cast.outsiderToken).status == 404)
            let cached = try await harness.request(
                .get, "/media/\(id)/thumbnail", token: cast.adminToken, headers: ["If-None-Match": thumbnail.headers[.eTag] ?? ""])
            #expect(cached.status == 304)

            // A photo post links the route, not a file on the server's disk.
            let post = try await harness.request(
                .post, "/communities/\(cast.community)/posts", token: cast.memberToken, json: ["type": "photo", "media_ids": [id]])
            #expect(post.status == 201, "\(post.text)")
            #expect((try post.json["media_urls"] as? [String]) == ["https://api.example.com/media/\(id)"])

            let pdf = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=rules.pdf", token: cast.memberToken, body: Data("%PDF-1.4".utf8),
                headers: ["Content-Type": "application/pdf"])
            #expect(pdf.status == 201)
            #expect(try pdf.json["thumbnail_url"] is NSNull)
            #expect(try await harness.request(.get, "/media/\(try pdf.string("id"))/thumbnail", token: cast.adminToken).status == 404)

            let files = {
                (try? FileManager.default.subpathsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".png") || $0.hasSuffix(".jpg") } ?? []
            }
            #expect(files().count == 2)
            #expect(try await harness.request(.delete, "/media/\(id)", token: cast.memberToken).status == 204)
            #expect(files().isEmpty)
        }
    }

    @Test("a PNG decompression bomb and an SVG sent as image/png get a clear 400; a truncated JPEG is stored; nothing waits on libvips")
    func hostileImages() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/media?filename="
            let bomb = try await harness.request(
                .post, path + "bomb.png", token: cast.memberToken, body: MediaSamples.pngBomb, headers: ["Content-Type": "image/png"])
            #expect(bomb.status == 400, "\(bomb.text)")
            #expect(try bomb.string("field") == "file" && bomb.string("detail").contains("50000 × 50000 pixels"), "\(bomb.text)")
            let svg = try await harness.request(
                .post, path + "drawing.png", token: cast.memberToken, body: MediaSamples.svg, headers: ["Content-Type": "image/png"])
            #expect(svg.status == 400, "\(svg.text)")
            #expect(try svg.string("field") == "file" && svg.string("detail").contains("image/png"), "\(svg.text)")
            let jpeg = try await MediaSamples.jpeg(in: folder.appending(path: "samples"))
            let cut = try await harness.request(
                .post, path + "cut.jpg", token: cast.memberToken, body: jpeg.prefix(jpeg.count / 2), headers: ["Content-Type": "image/jpeg"])
            #expect(cut.status == 201, "\(cut.text)")
            // Only the truncated JPEG is stored (with or without its thumbnail).
            let rows = try await harness.request(.get, "/communities/\(cast.community)/media", token: cast.memberToken).items
            #expect(rows.map { $0["filename"] as? String } == ["cut.jpg"])
            let stored = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".png") }
            #expect(stored.isEmpty, "\(stored)")
        }
    }

    @Test(
        "Range headers as RFC 9110 reads them",
        arguments: [
            ("bytes=0-0", ByteRange.part(0...0)), ("bytes=5-", .part(5...9)), ("bytes=-3", .part(7...9)), ("bytes=-30", .part(0...9)),
            ("bytes=8-100", .part(8...9)), ("bytes=10-", .unsatisfiable), ("bytes=-0", .unsatisfiable), ("bytes=3-2", .whole),
            ("bytes=0-1,4-5", .whole), ("items=0-1", .whole), ("bytes=a-b", .whole), ("bytes=-", .whole),
        ])
    func byteRanges(header: String, expected: ByteRange) {
        #expect(ByteRange(header, size: 10) == expected)
    }
}

/// Uploads stream to storage (issue 21, item 3): never held in memory, limited by type, and a
/// body cut off halfway leaves no file and no row.
@Suite("Streaming uploads")
struct MediaUploadTests {
    struct CutOff: Error {}

    @Test("a 3 MiB video with an Idempotency-Key is stored once and replayed; over the type's limit is 413; a cut-off body leaves nothing")
    func streamingUploads() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withAPI(storage: LocalDirectoryStorage(root: folder)) { harness in
            let cast = try await APICast.make(harness)
            let path = "/communities/\(cast.community)/media?filename=clip.mp4"
            let video = Data(MediaSamples.signature(of: "video/mp4") + (0..<(3 << 20)).map { UInt8($0 & 0xFF) })
            let key = UUID().uuidString
            let first = try await harness.request(
                .post, path, token: cast.memberToken, body: video, headers: ["Content-Type": "video/mp4", "Idempotency-Key": key])
            #expect(first.status == 201, "\(first.text)")
            let again = try await harness.request(
                .post, path, token: cast.memberToken, body: video, headers: ["Content-Type": "video/mp4", "Idempotency-Key": key])
            #expect(try again.string("id") == first.string("id"))
            let served = try await harness.request(.get, "/media/\(try first.string("id"))", token: cast.adminToken)
            #expect(served.body == video)

            // An image over 20 MiB: refused by its Content-Length before it is read.
            let big = Data(count: (20 << 20) + 1)
            let refused = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=a.png", token: cast.memberToken, body: big,
                headers: ["Content-Type": "image/png"])
            #expect(refused.status == 413)

            // Streamed without a length: over the limit while reading, then cut off halfway.
            let chunk = ByteBuffer(repeating: 7, count: 1 << 20)
            let endless = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                for _ in 0..<21 { continuation.yield(chunk) }
                continuation.finish()
            }
            let over = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=b.png", token: cast.memberToken,
                streaming: RequestBody(asyncSequence: endless), headers: ["Content-Type": "image/png"])
            #expect(over.status == 413)
            let broken = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                continuation.yield(chunk)
                continuation.finish(throwing: CutOff())
            }
            _ = try? await harness.request(
                .post, "/communities/\(cast.community)/media?filename=c.mp4", token: cast.memberToken,
                streaming: RequestBody(asyncSequence: broken), headers: ["Content-Type": "video/mp4"])

            // An outsider is refused before the body is read: a body that would fail if read.
            let unread = AsyncThrowingStream<ByteBuffer, any Error> { $0.finish(throwing: CutOff()) }
            let outsider = try await harness.request(
                .post, "/communities/\(cast.community)/media?filename=d.mp4", token: cast.outsiderToken,
                streaming: RequestBody(asyncSequence: unread), headers: ["Content-Type": "video/mp4"])
            #expect(outsider.status == 404)

            let rows = try await harness.request(.get, "/communities/\(cast.community)/media", token: cast.memberToken).items
            #expect(rows.count == 1)
            let incoming = try FileManager.default.contentsOfDirectory(atPath: folder.appending(path: ".incoming").path)
            #expect(incoming.isEmpty, "left behind: \(incoming)")
            let stored = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter {
                !$0.hasPrefix(".incoming") && $0.hasSuffix(".mp4") || $0.hasSuffix(".png")
            }
            #expect(stored.count == 1, "\(stored)")
        }
    }
}
