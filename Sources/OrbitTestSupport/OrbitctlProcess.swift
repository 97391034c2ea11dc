package import Foundation

/// What tests that run the `orbitctl` executable share: where it is, and the first line it prints.
package enum OrbitctlProcess {
    /// `ORBITCTL` when set; else the `orbitctl` beside the test bundle; else the package's debug build.
    package static var path: String {
        if let path = ProcessInfo.processInfo.environment["ORBITCTL"], !path.isEmpty { return path }
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appending(path: "orbitctl").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appending(path: ".build/debug/orbitctl").path
    }

    /// The first line written to `output` (as `orbitctl serve`'s "OrbitCove API listening on
    /// http://127.0.0.1:PORT"), or what came before it closed. Read on a Dispatch thread:
    /// blocking reads on the cooperative pool can starve other tests.
    package static func firstLine(of output: Pipe) async -> String {
        let reader = output.fileHandleForReading
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var banner = ""
                while !banner.contains("\n") {
                    let chunk = reader.availableData
                    guard !chunk.isEmpty else { break }
                    banner += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: banner)
            }
        }
    }
}
