import Foundation
import OrbitCore
import OrbitPostgres
import OrbitScaleData
import OrbitTestSupport
import Testing

@Suite("Media: uploads behind a storage protocol")
struct MediaTests {
    /// The cast's services with a fresh local media folder, removed afterwards.
    private func withStorage(_ body: (OrbitServices, Cast, URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-media-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withServices { services, _ in
            var services = services
            services.storage = LocalDirectoryStorage(root: folder)
            try await body(services, try await Cast.make(services), folder)
        }
    }

    @Test("an upload is stored and listed newest first; a photo post references it; deleting removes the file")
    func lifecycle() async throws {
        try await withStorage { services, cast, folder in
            let bytes = Data([0xFF, 0xD8, 0xFF, 0x00, 0x01])
            let first = try await services.media.upload(
                to: cast.community, filename: "team photo.jpg", mimeType: "image/jpeg", data: bytes, width: 800, height: 600, as: cast.member
            )
            #expect(first.type == .image && first.sizeBytes == 5 && first.storagePath.hasSuffix("/team_photo.jpg"))
            #expect(FileManager.default.contents(atPath: folder.appending(path: first.storagePath).path) == bytes)
            let second = try await services.media.upload(
                to: cast.community, filename: "rules.pdf", mimeType: "application/pdf", data: Data("%PDF-1.7".utf8), as: cast.admin)
            #expect((try await services.media.list(of: cast.community, as: cast.member)).items.map(\.id) == [second.id, first.id])

            let photo = try await services.feed.createPost(in: cast.community, PostDraft(type: .photo, mediaIDs: [first.id]), as: cast.member)
            #expect(photo.mediaURLs == ["/media/\(first.id)"])

            let notYours = await serviceError { try await services.media.delete(second.id, as: cast.member) }
            #expect(notYours?.code == .forbidden)
            try await services.media.delete(first.id, as: cast.admin)
            #expect(!FileManager.default.fileExists(atPath: folder.appending(path: first.storagePath).path))
            #expect((try await services.media.list(of: cast.community, as: cast.member)).items.map(\.id) == [second.id])
        }
    }

    @Test(
        "uploads are refused for other MIME types, empty or oversized files, paths as names, and non-members",
        arguments: [
            ("mime_type", "text/html", "a.html", 10),
            ("size_bytes", "image/png", "a.png", 0),
            ("size_bytes", "image/png", "a.png", (20 << 20) + 1),
            ("filename", "image/png", "../etc/passwd", 10),
            ("file", "image/png", "a.png", 10),
        ])
    func refused(field: String, mime: String, filename: String, size: Int) async throws {
        try await withStorage { services, cast, folder in
            // A PNG's signature, then zeros: only the content check (the last case) sees the zeros.
            let content =
                Data(field == "file" ? [0, 0] : [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]).prefix(size) + Data(count: max(0, size - 8))
            let error = await serviceError {
                try await services.media.upload(to: cast.community, filename: filename, mimeType: mime, data: content.prefix(size), as: cast.member)
            }
            #expect(error?.code == .invalidInput && error?.field == field)
            let files = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
            #expect(files.isEmpty)
        }
    }

    @Test("a non-member cannot upload and nothing is written")
    func outsider() async throws {
        try await withStorage { services, cast, folder in
            let error = await serviceError {
                try await services.media.upload(
                    to: cast.community, filename: "a.pdf", mimeType: "application/pdf", data: Data("%PDF-".utf8), as: cast.outsider)
            }
            #expect(error?.code == .notFound)
            #expect(((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
        }
    }

    @Test(
        "content must be of its declared type: an SVG or HTML sent as an image, random bytes as a video or a PDF are refused, and nothing is stored",
        arguments: [
            ("image/png", #"<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"><rect width="9" height="9"/></svg>"#),
            ("image/jpeg", "<html><body>hi</body></html>"), ("image/gif", "%PDF-1.4 a PDF"), ("image/webp", "RIFF\u{0}\u{0}\u{0}\u{0}AVI LIST"),
            ("image/heic", "\u{0}\u{0}\u{0}\u{18}ftypmp42\u{0}\u{0}\u{0}\u{0}mp42isom"), ("video/mp4", "just some text, not a movie"),
            ("application/pdf", "<svg/>"),
        ])
    func contentMustBeTheDeclaredType(mime: String, content: String) async throws {
        try await withStorage { services, cast, folder in
            let error = await serviceError {
                try await services.media.upload(to: cast.community, filename: "x", mimeType: mime, data: Data(content.utf8), as: cast.member)
            }
            #expect(error?.code == .invalidInput && error?.field == "file", "\(String(describing: error))")
            #expect(((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
        }
    }

    @Test("an image's header gives its size; over 100 megapixels is refused before anything decodes it", arguments: MediaSamples.headers)
    func imageHeaders(sample: MediaSamples.Header) throws {
        if sample.width * sample.height > MediaContent.maxPixels {
            #expect(throws: ServiceError.self) { try MediaContent.inspect(sample.bytes, declaredAs: sample.mime) }
        } else {
            #expect(try MediaContent.inspect(sample.bytes, declaredAs: sample.mime) == .init(width: sample.width, height: sample.height))
        }
    }

    @Test("random bytes never crash the content check, whatever type they are declared as")
    func randomContent() {
        var random = SplitMix64(seed: 37)
        for round in 0..<20_000 {
            let mime = Media.allowedTypes.keys.sorted()[round % Media.allowedTypes.count]
            var bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            // Half of them begin with a real signature, so the header parsers run on garbage.
            if round % 2 == 0 { bytes = MediaSamples.signature(of: mime) + bytes }
            _ = try? MediaContent.inspect(bytes, declaredAs: mime)
        }
    }

    @Test("the thumbnail is made outside the transaction: no pooled connection is held meanwhile, and the row appears with it")
    func thumbnailHoldsNoConnection() async throws {
        try await withStorage { services, cast, _ in
            var services = services
            let watcher = ThumbnailWatcher(pool: services.pool)
            services.thumbnailer = watcher
            let media = try await services.media.upload(
                to: cast.community, filename: "wide.png", mimeType: "image/png", data: MediaSamples.widePNG, as: cast.member)
            #expect(await watcher.lentDuringThumbnail == [0], "connections lent while the thumbnail was made")
            #expect(media.thumbnailPath != nil && media.width == 2000 && media.height == 1000)
        }
    }

    @Test("a thumbnailer that hangs is killed after its time limit: the image is stored without a thumbnail")
    func thumbnailTimeLimit() async throws {
        let script = FileManager.default.temporaryDirectory.appending(path: "orbit-hang-\(UUID().uuidString).sh")
        defer { try? FileManager.default.removeItem(at: script) }
        // It would make a "thumbnail" after 3 seconds (-o is its fourth argument, the path its fifth).
        try Data("#!/bin/sh\nsleep 3\nout=\"$5\"\nprintf x > \"${out%%[*}\"\n".utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        try await withStorage { services, cast, _ in
            var services = services
            services.thumbnailer = Thumbnailer(program: script.path, timeLimit: .milliseconds(300))
            let media = try await services.media.upload(
                to: cast.community, filename: "wide.png", mimeType: "image/png", data: MediaSamples.widePNG, as: cast.member)
            #expect(media.thumbnailPath == nil)
        }
    }

    @Test("a truncated JPEG is stored, with or without a thumbnail, and with the size its header gives")
    func truncatedJPEG() async throws {
        try await withStorage { services, cast, folder in
            let jpeg = try await MediaSamples.jpeg(in: folder)
            let media = try await services.media.upload(
                to: cast.community, filename: "cut.jpg", mimeType: "image/jpeg", data: jpeg.prefix(jpeg.count / 2), as: cast.member)
            #expect(media.sizeBytes == jpeg.count / 2 && media.width == 512 && media.height == 256)
        }
    }

    @Test("libvips runs with its untrusted loaders blocked: an SVG handed straight to the thumbnailer makes no thumbnail")
    func untrustedLoadersBlocked() async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "orbit-svg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appending(path: "drawing.svg")
        try MediaSamples.svg.write(to: svg)
        let png = folder.appending(path: "wide.png")
        try MediaSamples.widePNG.write(to: png)
        // The same thumbnailer makes one of a PNG: it is the loader that is refused.
        #expect(await Thumbnailer().makeThumbnail(of: png, to: folder.appending(path: "png.jpg")))
        #expect(await Thumbnailer().makeThumbnail(of: svg, to: folder.appending(path: "svg.jpg")) == false)
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "svg.jpg").path))
    }

    @Test("the file layer refuses any path that resolves outside its folder, and an upload named like the thumbnail keeps its own file")
    func pathsStayInside() async throws {
        try await withStorage { services, cast, folder in
            // The storage two levels down in the test's folder: a path that escaped it (as the
            // old `remove` did with "", which removed the folder's parent too) stays in the test's.
            let root = folder.appending(path: "outer/media")
            let outside = folder.appending(path: "outside")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            let storage = LocalDirectoryStorage(root: root)
            try FileManager.default.createSymbolicLink(at: root.appending(path: "link"), withDestinationURL: outside)
            for path in ["../x", "/x", "a/../../x", "a/./b", "", "a//b", "link/x", "x\u{0}y"] {
                #expect(storage.localFile(for: path) == nil, "\(path)")
                await #expect(throws: StoragePathOutsideRoot.self, "\(path)") { try await storage.store(Data([1]), at: path) }
                await #expect(throws: StoragePathOutsideRoot.self, "\(path)") { try await storage.remove(at: path) }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
            #expect(FileManager.default.fileExists(atPath: root.path))
            #expect(storage.localFile(for: "a/b.jpg") == root.appending(path: "a/b.jpg").path)

            let named = try await services.media.upload(
                to: cast.community, filename: "thumbnail.jpg", mimeType: "image/jpeg", data: try await MediaSamples.jpeg(in: folder), as: cast.member)
            #expect(named.storagePath.hasSuffix("/original_thumbnail.jpg") && named.thumbnailPath?.hasSuffix("/thumbnail.jpg") == true)
        }
    }

    @Test("the database keeps each upload's files in its own folder: a row pointing elsewhere is refused, whoever writes it")
    func pathsInTheDatabase() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            try await database.withConnection { connection in
                for (path, thumbnail) in [
                    ("../../etc/passwd", nil), ("{other}/{id}/a.jpg", nil), ("{community}/{other}/a.jpg", nil), ("{community}/{id}/..", nil),
                    ("{community}/{id}/thumbnail.jpg", nil), ("{community}/{id}/a.jpg", "{community}/{other}/thumbnail.jpg"),
                ] as [(String, String?)] {
                    let id = UUID()
                    func fill(_ text: String) -> String {
                        text.replacingOccurrences(of: "{community}", with: cast.community.description)
                            .replacingOccurrences(of: "{id}", with: id.uuidString.lowercased())
                            .replacingOccurrences(of: "{other}", with: UUID().uuidString.lowercased())
                    }
                    let error = await #expect(throws: PostgresError.self) {
                        try await connection.query(
                            """
                            INSERT INTO media (id, community_id, uploaded_by, type, filename, mime_type, size_bytes, storage_path, thumbnail_path)
                            VALUES (\(id), \(cast.community), \(cast.member), 'image', 'a.jpg', 'image/jpeg', 10, \(fill(path)), \(thumbnail.map(fill)))
                            """)
                    }
                    #expect(error?.sqlState == "23514", "\(path) \(String(describing: thumbnail))")
                }
            }
        }
    }
}

/// A thumbnailer that records how many pooled connections are lent while it works, then makes
/// a thumbnail with libvips.
private actor ThumbnailWatcher: ThumbnailMaking {
    let pool: ConnectionPool
    var lentDuringThumbnail: [Int] = []

    init(pool: ConnectionPool) { self.pool = pool }

    nonisolated func makeThumbnail(of source: URL, to destination: URL) async -> Bool {
        let statistics = pool.statistics
        await record(statistics.open - statistics.idle)
        return await Thumbnailer().makeThumbnail(of: source, to: destination)
    }

    private func record(_ lent: Int) { lentDuringThumbnail.append(lent) }
}
