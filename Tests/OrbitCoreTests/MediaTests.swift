import Foundation
import OrbitCore
import OrbitPostgres
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
                to: cast.community, filename: "rules.pdf", mimeType: "application/pdf", data: bytes, as: cast.admin)
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
        ])
    func refused(field: String, mime: String, filename: String, size: Int) async throws {
        try await withStorage { services, cast, folder in
            let error = await serviceError {
                try await services.media.upload(to: cast.community, filename: filename, mimeType: mime, data: Data(count: size), as: cast.member)
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
                try await services.media.upload(to: cast.community, filename: "a.png", mimeType: "image/png", data: Data([1]), as: cast.outsider)
            }
            #expect(error?.code == .notFound)
            #expect(((try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []).isEmpty)
        }
    }
}
