package import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Makes an image's thumbnail; `MediaService` calls it outside any transaction, without a
/// pooled connection (issue 37, item 3): it may take unbounded time.
package protocol ThumbnailMaking: Sendable {
    /// Makes a JPEG thumbnail of the image at `source` at `destination`. Returns false, having
    /// left no file at `destination`, when there is none.
    func makeThumbnail(of source: URL, to destination: URL) async -> Bool
}

/// Thumbnails of images, made by libvips (`vipsthumbnail`, Debian's libvips-tools): it decodes
/// with shrink-on-load, so a 12-megapixel JPEG takes about 80 ms and little memory. JPEG,
/// PNG, GIF, WebP and (with libheif) HEIC; videos and PDFs get none.
///
/// It only ever sees content that `MediaContent` checked to be of an accepted image type
/// within `MediaContent.maxPixels`, and runs with `VIPS_BLOCK_UNTRUSTED=1` (libvips refuses its
/// loaders that are not fuzzed for hostile input, such as ImageMagick's), one thread, and a
/// time limit after which it is killed and the image stored without a thumbnail.
package struct Thumbnailer: ThumbnailMaking {
    /// The longest side of a thumbnail, in pixels; smaller images are not enlarged.
    package static let size = 512

    /// The file name of a thumbnail beside its original.
    package static let fileName = "thumbnail.jpg"

    /// Where `vipsthumbnail` is, or nil when it is not installed.
    package static let installedProgram: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/bin"])
            .map { "\($0)/vipsthumbnail" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// The program run as `program SOURCE --size 512x512> -o DESTINATION[Q=80,strip]`.
    package var program: String?
    /// How long it may run before it is killed (and the image stored without a thumbnail).
    package var timeLimit: Duration

    package init(program: String? = Thumbnailer.installedProgram, timeLimit: Duration = .seconds(10)) {
        self.program = program
        self.timeLimit = timeLimit
    }

    private static let logger = Logger(label: "orbit.media")

    /// What the program runs with: the server's environment, libvips's untrusted loaders
    /// blocked, and one worker thread (a thumbnail never takes every core).
    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["VIPS_BLOCK_UNTRUSTED"] = "1"
        environment["VIPS_CONCURRENCY"] = "1"
        return environment
    }

    package func makeThumbnail(of source: URL, to destination: URL) async -> Bool {
        guard let program else {
            Self.logger.warning("no thumbnail: vipsthumbnail (libvips-tools) is not installed")
            return false
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        // "WxH>": only shrink; Q=80 and no metadata (a thumbnail carries no GPS position).
        process.arguments = [source.path, "--size", "\(Self.size)x\(Self.size)>", "-o", "\(destination.path)[Q=80,strip]"]
        process.environment = Self.environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let outcome = await Self.run(process, timeLimit: timeLimit)
        // Read what it said only after it ended (it writes little: a warning or an error line).
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile().prefix(300), as: UTF8.self)
        switch outcome {
        case .failedToStart(let error):
            Self.logger.warning("no thumbnail: vipsthumbnail did not start", metadata: ["error": "\(error)"])
        case .timedOut:
            Self.logger.warning(
                "no thumbnail: vipsthumbnail took longer than \(timeLimit) and was stopped", metadata: ["source": "\(source.lastPathComponent)"])
        case .exited(let status) where status != 0:
            Self.logger.notice("no thumbnail: the image did not decode", metadata: ["vips": "\(message)"])
        case .exited:
            if FileManager.default.fileExists(atPath: destination.path) { return true }
        }
        try? FileManager.default.removeItem(at: destination)
        return false
    }

    enum Outcome {
        case exited(Int32)
        case timedOut
        case failedToStart(any Error)
    }

    /// Runs `process` until it exits, or kills it (SIGKILL) once `timeLimit` has passed.
    static func run(_ process: Process, timeLimit: Duration) async -> Outcome {
        let ended = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in ended.continuation.finish() }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            return .failedToStart(error)
        }
        let pid = process.processIdentifier
        // A Dispatch timer, not a task: a cooperative pool kept busy by other requests (two threads
        // on two cores) must not let a hung thumbnailer outlive its limit.
        let timer = DispatchWorkItem {
            if process.isRunning { kill(pid, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeLimit.seconds, execute: timer)
        for await _ in ended.stream {}
        timer.cancel()
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL { return .timedOut }
        return .exited(process.terminationStatus)
    }
}
