package import Foundation
import OrbitPostgres

/// Uploads (spec: Media): files kept in `MediaStorage` with their metadata in the database, in
/// step (a failed insert removes the file). An upload is stored only when its content is of its
/// declared type, and an image only within `MediaContent.maxPixels` (`MediaContent.inspect`).
/// The file is stored and its thumbnail made before the row's transaction begins: work that can
/// take unbounded time never holds a pooled connection or a transaction (issue 37, item 3).
package struct MediaService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Stores an upload and records its metadata (members of the community).
    package func upload(
        to community: CommunityID, filename: String, mimeType: String, data: Data, width: Int? = nil, height: Int? = nil, as actor: UserID
    ) async throws -> Media {
        try await upload(to: community, filename: filename, mimeType: mimeType, data: data, width: width, height: height, as: .user(actor))
    }

    /// Stores an upload and records its metadata: members of the community, or a child on their
    /// paired device (an image, for a chore's photo proof; recorded as their parent's upload).
    package func upload(
        to community: CommunityID, filename: String, mimeType: String, data: Data, width: Int? = nil, height: Int? = nil,
        as actor: Principal
    ) async throws -> Media {
        let storage = try runner.requireStorage()
        let checked = try Self.check(filename: filename, mimeType: mimeType, size: data.count, width: width, height: height, by: actor)
        let image = try MediaContent.inspect(data.prefix(MediaContent.prefixLength), declaredAs: checked.mime)
        try await requireUploader(in: community, as: actor)
        return try await record(checked, image: image, in: community, width: width, height: height, as: actor) { path in
            try await storage.store(data, at: path)
        }
    }

    /// Records an upload already written to `file` (`MediaStorage.incomingFile()`, streamed there
    /// by the API: a file never has to fit in memory) and stores it; `file` is gone afterwards,
    /// stored or deleted.
    package func upload(
        to community: CommunityID, filename: String, mimeType: String, file: URL, size: Int, width: Int? = nil, height: Int? = nil,
        as actor: Principal
    ) async throws -> Media {
        defer { try? FileManager.default.removeItem(at: file) }
        let storage = try runner.requireStorage()
        let checked = try Self.check(filename: filename, mimeType: mimeType, size: size, width: width, height: height, by: actor)
        let handle = try FileHandle(forReadingFrom: file)
        let prefix = try handle.read(upToCount: MediaContent.prefixLength) ?? Data()
        try handle.close()
        let image = try MediaContent.inspect(prefix, declaredAs: checked.mime)
        try await requireUploader(in: community, as: actor)
        return try await record(checked, image: image, in: community, width: width, height: height, as: actor) { path in
            try await storage.store(contentsOf: file, at: path)
        }
    }

    /// Refuses, before a byte of the file is read, someone who could not record an upload in
    /// `community` (not an active member; a child, in another community than their device's):
    /// the same check the recording makes again.
    package func requireUploader(in community: CommunityID, as actor: Principal) async throws {
        try await runner.run(as: actor) { connection in try await runner.requireAccess(actor, to: community, on: connection) }
    }

    /// The most an upload of `mimeType` may hold, or nil for a type that is not accepted.
    package static func sizeLimit(of mimeType: String) -> Int? {
        Media.allowedTypes[mimeType.lowercased().trimmingCharacters(in: .whitespaces)]?.limit
    }

    private struct CheckedUpload {
        var filename: String
        var mime: String
        var type: MediaType
        var size: Int
    }

    private static func check(
        filename: String, mimeType: String, size: Int, width: Int?, height: Int?, by actor: Principal
    ) throws -> CheckedUpload {
        let filename = try Validate.text(filename, field: "filename", limit: 255)
        guard !filename.contains("/"), filename != ".", filename != ".." else {
            throw ServiceError.invalidInput(field: "filename", reason: "must be a file name, not a path")
        }
        let mime = mimeType.lowercased().trimmingCharacters(in: .whitespaces)
        guard let allowed = Media.allowedTypes[mime] else {
            throw ServiceError.invalidInput(field: "mime_type", reason: "must be one of \(Media.allowedTypes.keys.sorted().joined(separator: ", "))")
        }
        if case .child = actor, allowed.type != .image {
            throw ServiceError.invalidInput(field: "mime_type", reason: "must be an image type: a child's device uploads photos only")
        }
        guard size > 0, size <= allowed.limit else {
            throw ServiceError.invalidInput(field: "size_bytes", reason: "must be between 1 byte and \(allowed.limit >> 20) MB for \(mime)")
        }
        for (field, value) in [("width", width), ("height", height)] {
            if let value, !(1...100_000).contains(value) { throw ServiceError.invalidInput(field: field, reason: "must be between 1 and 100000") }
        }
        return CheckedUpload(filename: filename, mime: mime, type: allowed.type, size: size)
    }

    /// Where an upload's file is kept: `<community>/<media id>/<its name in safe characters>`
    /// (`media_storage_path_in_its_folder`); never the thumbnail's name.
    static func storagePath(of id: MediaID, in community: CommunityID, filename: String) -> String {
        var safeName = String(
            filename.unicodeScalars.map {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ".-_".unicodeScalars.contains($0)) ? Character($0) : "_"
            })
        if safeName == Thumbnailer.fileName || safeName == "." || safeName == ".." { safeName = "original_" + safeName }
        return "\(community)/\(id)/\(safeName)"
    }

    /// Stores the file (`store`, given the storage path) and makes an image's thumbnail, both
    /// outside any transaction and without a pooled connection; then inserts the row in a
    /// transaction of its own. A failure removes the files again.
    private func record(
        _ upload: CheckedUpload, image: MediaContent.ImageSize?, in community: CommunityID, width: Int?, height: Int?, as actor: Principal,
        store: (String) async throws -> Void
    ) async throws -> Media {
        let storage = try runner.requireStorage()
        let id = MediaID.new(in: .media)
        let path = Self.storagePath(of: id, in: community, filename: upload.filename)
        var stored: [String] = []
        do {
            do {
                try await store(path)
            } catch let error as CocoaError where error.code == .fileWriteFileExists && RequestRunner.clientCreate != nil {
                // The client's id, uploaded by another request at this moment (storing never
                // replaces a file): that one's file stays.
                throw ServiceError.conflict(field: "id", reason: "is being uploaded by another request at this moment: retry shortly")
            }
            stored.append(path)
            let thumbnail = try await makeThumbnail(of: path, id: id, in: community, upload: upload, image: image, storage: storage)
            if let thumbnail { stored.append(thumbnail) }
            // An image's own size when the app did not say.
            let (width, height) = (width ?? image?.width, height ?? image?.height)
            // A user uploads as themselves; a child on behalf of their parent, who answers for it.
            let (user, child): (UserID?, FamilyMemberID?) =
                switch actor {
                case .user(let user): (user, nil)
                case .child(let session): (nil, session.child)
                }
            return try await runner.run(as: actor) { connection in
                try await runner.requireAccess(actor, to: community, on: connection)
                let row = try await connection.query(
                    """
                    INSERT INTO media (id, community_id, uploaded_by, family_member_id, type, filename, mime_type, size_bytes, storage_path,
                        thumbnail_path, width, height)
                    VALUES (\(id), \(community), coalesce(\(user), orbit.app_child_parent_id()), \(child), \(upload.type)::media_type,
                        \(upload.filename), \(upload.mime), \(Int32(upload.size)), \(path), \(thumbnail), \(width.map(Int32.init)),
                        \(height.map(Int32.init)))
                    RETURNING \(unescaped: Media.columns)
                    """
                ).single()
                return try Media(row: row).linked(by: storage)
            }
        } catch {
            for file in stored.reversed() { try? await storage.remove(at: file) }
            throw error
        }
    }

    /// The thumbnail of an image whose header `MediaContent` read, when the storage keeps files
    /// on this disk: its storage path, or nil when none was made (not an image, the header not
    /// found, no libvips, a decoding error or the time limit).
    private func makeThumbnail(
        of path: String, id: MediaID, in community: CommunityID, upload: CheckedUpload, image: MediaContent.ImageSize?,
        storage: any MediaStorage
    ) async throws -> String? {
        guard upload.type == .image, image != nil, let original = storage.localFile(for: path) else { return nil }
        let made = try storage.incomingFile().appendingPathExtension("jpg")
        guard await runner.thumbnailer.makeThumbnail(of: URL(fileURLWithPath: original), to: made) else {
            try? FileManager.default.removeItem(at: made)
            return nil
        }
        let thumbnail = "\(community)/\(id)/\(Thumbnailer.fileName)"
        try await storage.store(contentsOf: made, at: thumbnail)
        return thumbnail
    }

    /// The order of media: newest first.
    static let mediaOrder = Paging.Keyset.timeAndID("media")

    /// A community's media, newest first.
    package func list(of community: CommunityID, limit: Int = 50, cursor: String? = nil, as actor: UserID) async throws -> Page<Media> {
        try Validate.limit(limit, in: 1...200)
        let storage = runner.storage
        let after = try Self.mediaOrder.decode(cursor)
        return try await runner.asUserReading(actor) { connection in
            let rows = try await runner.queryAsMember(
                actor, of: community, on: connection,
                """
                SELECT \(unescaped: Media.columns), \(unescaped: Self.mediaOrder.columns) FROM media
                WHERE community_id = \(community)
                  AND \(try Self.mediaOrder.after(after))
                ORDER BY \(unescaped: Self.mediaOrder.order) LIMIT \(limit + 1)
                """
            )
            return try Self.mediaOrder.page(rows, limit: limit, item: { try Media(row: $0).linked(by: storage) })
        }
    }

    /// An upload's metadata, for members of its community (row-level security: anyone else
    /// finds nothing), and where its file (or its thumbnail) is on this machine, when the
    /// storage keeps it here.
    package func file(_ id: MediaID, _ variant: MediaVariant = .original, as actor: UserID) async throws -> (media: Media, localPath: String?) {
        try await file(id, variant, as: .user(actor))
    }

    /// An upload's metadata and file, as `file(_:_:as:)` for a user; a child finds their own.
    package func file(_ id: MediaID, _ variant: MediaVariant = .original, as actor: Principal) async throws -> (media: Media, localPath: String?) {
        let storage = try runner.requireStorage()
        let read: @Sendable ((PostgresConnection) async throws -> Media) async throws -> Media = { body in
            switch actor {
            case .user(let user): try await runner.asUserReading(user, body)
            case .child: try await runner.run(as: actor, body)
            }
        }
        let media = try await read { connection in
            guard let row = try await connection.query("SELECT \(unescaped: Media.columns) FROM media WHERE id = \(id)").first else {
                throw ServiceError.notFound("Media \(id)")
            }
            return try Media(row: row).linked(by: storage)
        }
        switch variant {
        case .original:
            return (media, storage.localFile(for: media.storagePath))
        case .thumbnail:
            guard let thumbnail = media.thumbnailPath else { throw ServiceError.notFound("A thumbnail of media \(id)") }
            return (media, storage.localFile(for: thumbnail))
        }
    }

    /// Deletes an upload (its uploader or an admin): the row, then the file.
    package func delete(_ id: MediaID, as actor: UserID) async throws {
        let storage = try runner.requireStorage()
        let paths: [String] = try await runner.asUser(actor) { connection in
            guard let row = try await connection.query("SELECT \(unescaped: Media.columns) FROM media WHERE id = \(id)").first else {
                throw ServiceError.notFound("Media \(id)")
            }
            let media = try Media(row: row)
            if media.uploadedBy != actor {
                try await runner.requireAdmin(actor, of: media.communityID, rule: "members can delete only their own uploads", on: connection)
            }
            try await connection.query("DELETE FROM media WHERE id = \(id)")
            return [media.thumbnailPath, media.storagePath].compactMap { $0 }
        }
        for path in paths { try await storage.remove(at: path) }
    }

    /// The URLs of a community's media, for a photo post; every id must be an upload of it.
    func urls(of ids: [MediaID], in community: CommunityID, on connection: PostgresConnection) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        let storage = try runner.requireStorage()
        var paths: [MediaID: String] = [:]
        for row in try await connection.query(
            "SELECT id, storage_path FROM media WHERE community_id = \(community) AND id = ANY(\(ids.map(\.uuid)))"
        ) {
            paths[try row.decode("id", as: MediaID.self)] = try row.decode("storage_path", as: String.self)
        }
        return try ids.map { id in
            guard let path = paths[id] else { throw ServiceError.notFound("Media \(id) in this community") }
            return storage.url(for: id, .original, path: path)
        }
    }
}
