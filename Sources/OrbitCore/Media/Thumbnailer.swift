package import Foundation
import Logging

/// Thumbnails of images, made by libvips (`vipsthumbnail`, Debian's libvips-tools): it decodes
/// with shrink-on-load, so a 12-megapixel JPEG takes about 80 ms and little memory. JPEG,
/// PNG, GIF, WebP and (with libheif) HEIC; videos and PDFs get none.
package enum Thumbnailer {
    /// The longest side of a thumbnail, in pixels; smaller images are not enlarged.
    package static let size = 512

    /// The file name of a thumbnail beside its original.
    package static let fileName = "thumbnail.jpg"

    /// Where `vipsthumbnail` is, or nil when it is not installed.
    static let program: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/bin"])
            .map { "\($0)/vipsthumbnail" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    private static let logger = Logger(label: "orbit.media")

    /// Makes a JPEG thumbnail of the image at `source` at `destination`. Returns false, and
    /// logs why, when there is none: libvips is not installed, or the image did not decode.
    package static func make(from source: URL, to destination: URL) async -> Bool {
        guard let program else {
            logger.warning("no thumbnail: vipsthumbnail (libvips-tools) is not installed")
            return false
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        // "WxH>": only shrink; Q=80 and no metadata (a thumbnail carries no GPS position).
        process.arguments = [source.path, "--size", "\(size)x\(size)>", "-o", "\(destination.path)[Q=80,strip]"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                process.terminationHandler = { _ in continuation.resume() }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
        } catch {
            logger.warning("no thumbnail: vipsthumbnail did not start", metadata: ["error": "\(error)"])
            return false
        }
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            logger.notice("no thumbnail: the image did not decode", metadata: ["vips": "\(message.prefix(300))"])
            try? FileManager.default.removeItem(at: destination)
            return false
        }
        return FileManager.default.fileExists(atPath: destination.path)
    }
}
