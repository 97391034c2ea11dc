package import Foundation
import OrbitPostgres

package enum MediaTag {}
package typealias MediaID = Identifier<MediaTag>

/// What an upload is (spec: media_type).
package enum MediaType: String, DatabaseEnum {
    case image, video, document
}

/// An uploaded file's metadata (spec: Media).
package struct Media: Sendable, Codable, Equatable {
    package var id: MediaID
    package var communityID: CommunityID
    package var uploadedBy: UserID
    /// The child who uploaded it on their paired device (`uploadedBy` is then their parent, who
    /// answers for it): a chore's photo proof.
    package var familyMemberID: FamilyMemberID?
    package var type: MediaType
    package var filename: String
    package var mimeType: String
    package var sizeBytes: Int
    package var storagePath: String
    package var thumbnailPath: String?
    package var width: Int?
    package var height: Int?
    package var createdAt: Date
    /// Where the app loads the file from (`MediaStorage.url`); set by the service.
    package var url = ""
    /// Where the app loads the thumbnail from, when there is one.
    package var thumbnailURL: String?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", uploadedBy = "uploaded_by", familyMemberID = "family_member_id", type, filename
        case mimeType = "mime_type", sizeBytes = "size_bytes", storagePath = "storage_path"
        case thumbnailPath = "thumbnail_path", url, thumbnailURL = "thumbnail_url", width, height
        case createdAt = "created_at"
    }

    /// With `url` and `thumbnailURL` from `storage`; without one (a reader such as `orbitctl
    /// media list` that serves no files), the API's routes, relative.
    func linked(by storage: (any MediaStorage)?) -> Media {
        var media = self
        guard let storage else {
            media.url = "/media/\(id)"
            media.thumbnailURL = thumbnailPath.map { _ in "/media/\(id)/thumbnail" }
            return media
        }
        media.url = storage.url(for: id, .original, path: storagePath)
        media.thumbnailURL = thumbnailPath.map { storage.url(for: id, .thumbnail, path: $0) }
        return media
    }

    static let columns = """
        id, community_id, uploaded_by, family_member_id, type::text AS type, filename, mime_type, size_bytes, storage_path, thumbnail_path, width, height, created_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        uploadedBy = try row.decode("uploaded_by")
        familyMemberID = try row.decode("family_member_id")
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

    /// The MIME types accepted, with their media type and size limit in bytes.
    package static let allowedTypes: [String: (type: MediaType, limit: Int)] = [
        "image/jpeg": (.image, 20 << 20), "image/png": (.image, 20 << 20), "image/heic": (.image, 20 << 20),
        "image/gif": (.image, 20 << 20), "image/webp": (.image, 20 << 20),
        "video/mp4": (.video, 200 << 20), "video/quicktime": (.video, 200 << 20),
        "application/pdf": (.document, 20 << 20),
    ]
}
