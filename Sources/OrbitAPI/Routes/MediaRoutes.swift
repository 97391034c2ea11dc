import Crypto
import Foundation
import Hummingbird
import NIOCore
import OrbitCore

extension OrbitAPI {
    func addMediaRoutes(to router: RouterGroup<APIContext>) {
        // The file is the raw body; its type is Content-Type, its name the `filename` query. The
        // body is streamed to a file next to the storage (never held in memory), up to the
        // type's limit (images and PDFs 20 MB, videos 200 MB); a body cut off halfway, or over
        // the limit, leaves no file and no row.
        router.post("communities/:community_id/media") { request, context in
            let community: CommunityID = try context.id("community_id")
            guard let filename = request.query("filename") else {
                throw APIProblem.validation(field: "filename", "filename is required (a query parameter).")
            }
            guard let mimeType = request.headers[.contentType] else {
                throw APIProblem.validation(field: "Content-Type", "Content-Type must name the file's type, such as image/jpeg.")
            }
            let width = request.query("width") == nil ? nil : try request.queryInt("width", default: 0, range: 1...100_000)
            let height = request.query("height") == nil ? nil : try request.queryInt("height", default: 0, range: 1...100_000)
            guard let typeLimit = MediaService.sizeLimit(of: mimeType) else {
                throw APIProblem.validation(
                    field: "mime_type", "Content-Type must be one of \(Media.allowedTypes.keys.sorted().joined(separator: ", ")).")
            }
            let limit = min(typeLimit, configuration.mediaUploadLimit)
            let tooLarge = APIProblem(
                "payload-too-large", title: "Payload too large", status: .contentTooLarge,
                detail: "Uploads of \(mimeType) are limited to \(limit >> 20) MiB.", field: "body"
            )
            if let length = request.headers[.contentLength].flatMap(Int.init), length > limit { throw tooLarge }
            // The client's own id for the upload (docs/sync.md, "Offline writes"): a replay of any
            // age is 200 with the upload; the id used by another upload, 409.
            let clientID: UUID? = try request.query("id").map { text in
                guard let id = UUID(uuidString: text) else {
                    throw APIProblem.validation(field: "id", "id must be a UUID (the one the client made for the upload), or left out.")
                }
                return id
            }
            guard let storage = services.storage else { throw APIProblem(ServiceError.conflict("Media storage is not configured on this server.")) }
            // Someone who may not upload here is refused before the file is read. A child's token
            // uploads a photo (a chore's proof) to the community their device reaches.
            let user = try context.requirePrincipal()
            try await services.media.requireUploader(in: community, as: user)
            let file = try storage.incomingFile()
            // Gone once stored (moved into place) or answered from what is stored.
            defer { try? FileManager.default.removeItem(at: file) }
            var size = 0
            var digest = SHA256()
            do {
                guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                    throw APIProblem.internalError
                }
                let handle = try FileHandle(forWritingTo: file)
                defer { try? handle.close() }
                for try await buffer in request.body {
                    size += buffer.readableBytes
                    if size > limit { throw tooLarge }
                    let bytes = Data(buffer: buffer)
                    if clientID != nil { digest.update(data: bytes) }
                    try handle.write(contentsOf: bytes)
                }
            } catch {
                try? FileManager.default.removeItem(at: file)
                throw error
            }
            // The service records the row and stores the file, or removes it.
            func upload() async throws -> (Media, created: Bool) {
                let media = try await services.media.upload(
                    to: community, filename: filename, mimeType: mimeType, file: file, size: size, width: width, height: height, as: user)
                return (media, true)
            }
            guard let clientID else { return try APIJSON.response(try await upload().0, status: .created) }
            return try await creating(
                .media, id: clientID, fingerprint: RequestFingerprint.of(request, bodyDigest: Array(digest.finalize())), context: context,
                stored: { try await services.media.file(MediaID($0), as: user).media }, upload)
        }
        router.get("communities/:community_id/media") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.media.list(
                    of: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        // The file itself, to members of its community: streamed from disk, with its type, an
        // ETag (an upload never changes, so its id is its version), long private caching, and
        // single byte ranges for video seeking.
        router.get("media/:media_id") { request, context in
            let (media, path) = try await services.media.file(try context.id("media_id", as: MediaID.self), as: try context.requirePrincipal())
            guard let path else { throw APIProblem.notFound("The file of media \(media.id) is not kept by this server.") }
            return try await Self.serveFile(
                at: path, size: media.sizeBytes, type: media.mimeType, etag: "\"\(media.id)\"", request: request, context: context)
        }
        // Its thumbnail (images only; JPEG, at most 512 pixels on the longer side), the same way.
        router.get("media/:media_id/thumbnail") { request, context in
            let (media, path) = try await services.media.file(
                try context.id("media_id", as: MediaID.self), .thumbnail, as: try context.requirePrincipal())
            guard let path, let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else {
                throw APIProblem.notFound("The thumbnail of media \(media.id) is not kept by this server.")
            }
            return try await Self.serveFile(
                at: path, size: size, type: "image/jpeg", etag: "\"\(media.id)-thumbnail\"", request: request, context: context)
        }
        router.delete("media/:media_id") { _, context in
            try await services.media.delete(try context.id("media_id", as: MediaID.self), as: try context.requireUser())
            return NoContent()
        }
    }

    /// A stored file, streamed from disk, with its type, an ETag (an upload never changes, so its
    /// id is its version), long private caching, `If-None-Match` and single byte ranges (video
    /// seeking, `If-Range`).
    static func serveFile(
        at path: String, size: Int, type: String, etag: String, request: Request, context: APIContext
    ) async throws -> Response {
        var headers: HTTPFields = [
            .contentType: type, .eTag: etag, .cacheControl: "private, max-age=31536000, immutable", .acceptRanges: "bytes",
        ]
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { ["*", etag, "W/" + etag].contains($0.trimmingCharacters(in: .whitespaces)) })
        {
            return Response(status: .notModified, headers: headers)
        }
        // If-Range naming another version means: the whole file.
        let ifRange = request.headers[.ifRange]
        switch ByteRange(request.headers[.range], size: size, applies: ifRange == nil || ifRange == etag) {
        case .whole:
            headers[.contentLength] = String(size)
            return Response(status: .ok, headers: headers, body: try await FileIO().loadFile(path: path, context: context))
        case .part(let range):
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
            headers[.contentLength] = String(range.count)
            return Response(
                status: .partialContent, headers: headers, body: try await FileIO().loadFile(path: path, range: range, context: context))
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
    }
}

/// What a `Range` header asks of a file of `size` bytes (RFC 9110, section 14): one range of
/// bytes, served with 206; a range wholly past the end, 416; anything else — no header, another
/// unit, several ranges, a malformed one, or an `If-Range` for another version — the whole file.
enum ByteRange: Equatable {
    case whole
    case part(ClosedRange<Int>)
    case unsatisfiable

    init(_ header: String?, size: Int, applies: Bool = true) {
        guard applies, let header, header.hasPrefix("bytes="), !header.contains(",") else {
            self = .whole
            return
        }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else {
            self = .whole
            return
        }
        switch (Int(parts[0]), Int(parts[1])) {
        case (let first?, let last?) where first <= last:
            self = first < size ? .part(first...min(last, size - 1)) : .unsatisfiable
        case (let first?, nil) where parts[1].isEmpty:
            self = first < size ? .part(first...(size - 1)) : .unsatisfiable
        case (nil, let suffix?) where parts[0].isEmpty:
            self = suffix > 0 && size > 0 ? .part(max(0, size - suffix)...(size - 1)) : .unsatisfiable
        default:
            self = .whole
        }
    }
}
