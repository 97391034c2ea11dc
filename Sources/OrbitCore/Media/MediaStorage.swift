package import Foundation

/// Which file of an upload: the original or its thumbnail.
package enum MediaVariant: Sendable {
    case original, thumbnail
}

/// Where uploaded bytes live. `orbitctl dev` and the tests use a local directory; object
/// storage comes later behind the same protocol.
package protocol MediaStorage: Sendable {
    /// Stores `data` at `path` (relative, made of safe characters), replacing nothing.
    func store(_ data: Data, at path: String) async throws
    /// Removes the file at `path`; removing a missing file is not an error.
    func remove(at path: String) async throws
    /// The URL the app loads a file of upload `id` from (stored at `path`): for a local folder
    /// the authenticated route `GET /media/{id}` (or `/media/{id}/thumbnail`) of the API; an
    /// object store would sign a short-lived URL of its own.
    func url(for id: MediaID, _ variant: MediaVariant, path: String) -> String
    /// Where the file is on this machine's disk, for the API to stream it (`GET /media/{id}`,
    /// with ranges); nil for a storage whose files are elsewhere.
    func localFile(for path: String) -> String?
    /// Stores the file at `source` (which it may move away) at `path`, replacing nothing.
    func store(contentsOf source: URL, at path: String) async throws
    /// A file name, on the same file system as the stored files when they are local, where an
    /// upload can be written before it is stored (so storing it is a rename).
    func incomingFile() throws -> URL
}

extension MediaStorage {
    package func localFile(for path: String) -> String? { nil }

    /// Reads the file and stores its bytes: for storages that are not on this disk.
    package func store(contentsOf source: URL, at path: String) async throws {
        try await store(try Data(contentsOf: source), at: path)
        try? FileManager.default.removeItem(at: source)
    }

    package func incomingFile() throws -> URL {
        FileManager.default.temporaryDirectory.appending(path: "orbit-upload-\(UUID().uuidString)")
    }
}

/// A storage path that would resolve outside the storage's folder (absolute, `..`, or through
/// a symbolic link): never read, written or removed.
package struct StoragePathOutsideRoot: Error, CustomStringConvertible {
    package let path: String
    package var description: String { "The storage path \(path) resolves outside the media folder." }
}

/// Media in a folder of the local file system, served by the API. Every path it is given is
/// checked to stay inside the folder (`file(at:)`): a path from the database is not trusted to.
package struct LocalDirectoryStorage: MediaStorage {
    package let root: URL
    /// The API's address as the app reaches it (`https://api.example.com`), without a trailing
    /// slash; media URLs are relative (`/media/{id}`) when nil.
    package let publicURL: String?

    package init(root: URL, publicURL: String? = nil) {
        self.root = root.standardizedFileURL
        self.publicURL = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    }

    /// The file at `path` inside the folder. Refused: an empty or absolute path, a `.` or `..`
    /// component, a NUL, and a path whose existing part leads elsewhere through a symbolic link.
    /// - Throws: `StoragePathOutsideRoot`.
    package func file(at path: String) throws -> URL {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard !path.isEmpty, !path.hasPrefix("/"), !path.contains("\0"), components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else { throw StoragePathOutsideRoot(path: path) }
        let file = root.appending(path: path).standardizedFileURL
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        guard file.path.hasPrefix(rootPath) else { throw StoragePathOutsideRoot(path: path) }
        // No step of the path that exists already may be a symbolic link.
        var step = root
        for component in components {
            step = step.appending(path: String(component))
            guard let type = try? FileManager.default.attributesOfItem(atPath: step.path)[.type] as? FileAttributeType else { break }
            if type == .typeSymbolicLink { throw StoragePathOutsideRoot(path: path) }
        }
        return file
    }

    package func store(_ data: Data, at path: String) async throws {
        let file = try file(at: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file, options: [.withoutOverwriting])
    }

    package func remove(at path: String) async throws {
        let file = try file(at: path)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
        // The per-media folder is empty now.
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    package func url(for id: MediaID, _ variant: MediaVariant, path: String) -> String {
        "\(publicURL ?? "")/media/\(id)\(variant == .thumbnail ? "/thumbnail" : "")"
    }

    /// nil for a path outside the folder: nothing is served from there.
    package func localFile(for path: String) -> String? {
        try? file(at: path).path
    }

    package func store(contentsOf source: URL, at path: String) async throws {
        let file = try file(at: path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        // A rename within the folder: the file appears whole or not at all, and never replaces one.
        try FileManager.default.moveItem(at: source, to: file)
    }

    /// `.incoming/` in the folder: uploads in progress, renamed into place when stored.
    package func incomingFile() throws -> URL {
        let incoming = root.appending(path: ".incoming")
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        return incoming.appending(path: UUID().uuidString)
    }
}
