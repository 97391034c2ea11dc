import Foundation

/// `./.orbit/dev.pid`: which `orbitctl dev` process looks after the local cluster. The first one
/// stops the cluster when it ends; later ones reuse the cluster and leave it running.
struct DevLock {
    let path: String

    init(directory: String) {
        path = (directory as NSString).appendingPathComponent("dev.pid")
    }

    /// The live process recorded in the file, if any.
    var holder: Int32? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)),
            pid != getpid(), kill(pid, 0) == 0 || errno == EPERM
        else { return nil }
        return pid
    }

    /// Records this process unless another live one is recorded. Returns whether we own it now.
    func acquire() -> Bool {
        guard holder == nil else { return false }
        do {
            try "\(getpid())\n".write(toFile: path, atomically: true, encoding: .utf8)
            return true
        } catch {
            // Without the file a second orbitctl dev would stop the cluster under us; say so.
            FileHandle.standardError.write(Data("warning: could not write \(path): \(error.localizedDescription)\n".utf8))
            return true
        }
    }

    func release() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
