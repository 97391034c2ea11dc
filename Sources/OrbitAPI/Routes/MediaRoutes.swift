import Foundation
import Hummingbird
import NIOCore
import OrbitCore

extension OrbitAPI {
    func addMediaRoutes(to router: RouterGroup<APIContext>) {
        // The file is the raw body; its type is Content-Type, its name the `filename` query.
        router.post("communities/:community_id/media") { request, context in
            let community: CommunityID = try context.id("community_id")
            guard let filename = request.query("filename") else {
                throw APIProblem.validation(field: "filename", "filename is required (a query parameter).")
            }
            guard let mimeType = request.headers[.contentType] else {
                throw APIProblem.validation(field: "Content-Type", "Content-Type must name the file's type, such as image/jpeg.")
            }
            var request = request
            let buffer: ByteBuffer
            do {
                buffer = try await request.collectBody(upTo: configuration.mediaUploadLimit)
            } catch is NIOTooManyBytesError {
                throw APIProblem(
                    "payload-too-large", title: "Payload too large", status: .contentTooLarge,
                    detail: "Uploads are limited to \(configuration.mediaUploadLimit >> 20) MiB.", field: "body"
                )
            }
            let width = request.query("width") == nil ? nil : try request.queryInt("width", default: 0, range: 1...100_000)
            let height = request.query("height") == nil ? nil : try request.queryInt("height", default: 0, range: 1...100_000)
            return Created(
                try await services.media.upload(
                    to: community, filename: filename, mimeType: mimeType, data: Data(buffer: buffer), width: width, height: height,
                    as: try context.requireUser()
                )
            )
        }
        router.get("communities/:community_id/media") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(
                try await services.media.list(
                    of: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        router.delete("media/:media_id") { _, context in
            try await services.media.delete(try context.id("media_id", as: MediaID.self), as: try context.requireUser())
            return NoContent()
        }
    }
}
