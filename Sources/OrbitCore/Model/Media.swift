public import Foundation
import OrbitPostgres

public enum MediaTag {}
public typealias MediaID = Identifier<MediaTag>

/// Where uploaded bytes live. `orbitctl dev` and the tests use a local directory; object
/// storage comes later behind the same protocol.
public protocol MediaStorage: Sendable {
    /// Stores `data` at `path` (relative, made of safe characters), replacing nothing.
    func store(_ data: Data, at path: String) async throws
    /// Removes the file at `path`; removing a missing file is not an error.
    func remove(at path: String) async throws
    /// The URL a client fetches the file from.
    func url(for path: String) -> String
}

/// Media in a folder of the local file system.
public struct LocalDirectoryStorage: MediaStorage {
    public let root: URL

    public init(root: URL) {
        self.root = root
    }

    public func store(_ data: Data, at path: String) async throws {
        let file = root.appending(path: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file, options: [.withoutOverwriting])
    }

    public func remove(at path: String) async throws {
        let file = root.appending(path: path)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
        // The per-media folder is empty now.
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    public func url(for path: String) -> String {
        root.appending(path: path).absoluteString
    }
}

/// An uploaded file's metadata (spec: Media).
public struct Media: Sendable, Codable, Equatable {
    public var id: MediaID
    public var communityID: CommunityID
    public var uploadedBy: UserID
    public var type: String
    public var filename: String
    public var mimeType: String
    public var sizeBytes: Int
    public var storagePath: String
    public var thumbnailPath: String?
    public var width: Int?
    public var height: Int?
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", uploadedBy = "uploaded_by", type, filename, mimeType = "mime_type", sizeBytes = "size_bytes"
        case storagePath = "storage_path", thumbnailPath = "thumbnail_path", width, height, createdAt = "created_at"
    }

    static let columns = """
        id, community_id, uploaded_by, type::text AS type, filename, mime_type, size_bytes, storage_path, thumbnail_path, width, height, created_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        uploadedBy = try row.decode("uploaded_by")
        type = try row.decode("type")
        filename = try row.decode("filename")
        mimeType = try row.decode("mime_type")
        sizeBytes = Int(try row.decode("size_bytes", as: Int32.self))
        storagePath = try row.decode("storage_path")
        thumbnailPath = try row.decode("thumbnail_path")
        width = try row.decode("width", as: Int32?.self).map(Int.init)
        height = try row.decode("height", as: Int32?.self).map(Int.init)
        createdAt = try row.decode("created_at")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(communityID, forKey: .communityID)
        try container.encode(uploadedBy, forKey: .uploadedBy)
        try container.encode(type, forKey: .type)
        try container.encode(filename, forKey: .filename)
        try container.encode(mimeType, forKey: .mimeType)
        try container.encode(sizeBytes, forKey: .sizeBytes)
        try container.encode(storagePath, forKey: .storagePath)
        try container.encode(thumbnailPath, forKey: .thumbnailPath)
        try container.encode(width, forKey: .width)
        try container.encode(height, forKey: .height)
        try container.encode(createdAt, forKey: .createdAt)
    }

    /// The MIME types accepted, with their media type and size limit in bytes.
    public static let allowedTypes: [String: (type: String, limit: Int)] = [
        "image/jpeg": ("image", 20 << 20), "image/png": ("image", 20 << 20), "image/heic": ("image", 20 << 20),
        "image/gif": ("image", 20 << 20), "image/webp": ("image", 20 << 20),
        "video/mp4": ("video", 200 << 20), "video/quicktime": ("video", 200 << 20),
        "application/pdf": ("document", 20 << 20),
    ]
}
