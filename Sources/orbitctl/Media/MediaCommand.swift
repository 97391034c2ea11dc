import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl media …`
struct MediaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media",
        abstract: "Uploads: store a file for a community, list, delete.",
        subcommands: [Upload.self, List.self, Delete.self]
    )

    struct StorageOptions: ParsableArguments {
        @Option(help: ArgumentHelp("Folder the files are kept in (default: ./.orbit/media).", valueName: "path"))
        var mediaDir: String = ".orbit/media"

        var storage: LocalDirectoryStorage {
            LocalDirectoryStorage(root: URL(fileURLWithPath: mediaDir, isDirectory: true).standardizedFileURL)
        }
    }

    struct Upload: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Upload a file (images, videos, PDF).")
        @OptionGroup var storage: StorageOptions
        @Option(help: "Community id.") var community: CommunityID
        @Argument(help: "The file to upload.") var file: String
        @Option(help: "MIME type, e.g. image/jpeg (default: from the file's extension).") var mimeType: String?
        @Option(help: "Width in pixels.") var width: Int?
        @Option(help: "Height in pixels.") var height: Int?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        private var url: URL { URL(fileURLWithPath: file) }

        /// The file's MIME type: `--mime-type`, else from its extension.
        private var mime: String {
            get throws {
                let byExtension = [
                    "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "heic": "image/heic", "gif": "image/gif", "webp": "image/webp",
                    "mp4": "video/mp4", "mov": "video/quicktime", "pdf": "application/pdf",
                ]
                guard let mime = mimeType ?? byExtension[url.pathExtension.lowercased()] else {
                    throw CommandFailure("Give --mime-type: the type of \(url.lastPathComponent) is not known from its name.")
                }
                return mime
            }
        }

        /// The file and its type are checked before anything connects: a file that cannot be read
        /// or whose type is unknown is said first, whatever the database.
        func validate() throws {
            guard FileManager.default.isReadableFile(atPath: url.path) else { throw CommandFailure("Cannot read \(file).") }
            _ = try mime
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Media {
            let url = url
            let mime = try mime
            let data: Data
            do {
                data = try Data(contentsOf: url)
            } catch {
                throw CommandFailure("Cannot read \(file).")
            }
            var services = services
            services.storage = storage.storage
            return try await services.media.upload(
                to: community, filename: url.lastPathComponent, mimeType: mime, data: data, width: width, height: height,
                as: actor
            )
        }

        func tell(_ media: Media) {
            print("Uploaded \(media.id) (\(media.type), \(media.sizeBytes) bytes).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "A community's uploads, newest first.")
        @Option(help: "Community id.") var community: CommunityID
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<Media> {
            try await services.media.list(
                of: community, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ items: Page<Media>) {
            printPage(items, ["ID", "TYPE", "FILE", "BYTES", "UPLOADED BY", "WHEN"]) {
                [$0.id.description, $0.type.rawValue, $0.filename, String($0.sizeBytes), $0.uploadedBy.description, show($0.createdAt)]
            }
        }
    }

    struct Delete: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an upload and its file (its uploader or an admin).")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "Media id.") var media: MediaID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            var services = services
            services.storage = storage.storage
            try await services.media.delete(media, as: actor)
            return DoneOutput(id: media.description, deleted: true)
        }

        func tell(_ done: DoneOutput) {
            print("Deleted media \(media).")
        }
    }
}
