import Foundation

/// A finished child process: its exit status and what it printed.
package struct ProcessOutput: Sendable {
    package var status: Int32
    package var output: String
    /// Standard error, when it was captured apart (`separateErrors`); otherwise empty, as it is
    /// part of `output`.
    package var errors: String = ""

    package var succeeded: Bool { status == 0 }
}

/// Runs programs to completion without blocking Swift's cooperative pool: the wait happens on a
/// Dispatch thread.
package enum Subprocess {
    /// Runs `executable` with `arguments`; stdout and stderr are captured together, or apart
    /// with `separateErrors`.
    package static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false
    ) async throws -> ProcessOutput {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(executable, arguments, environment: environment, separateErrors: separateErrors) })
            }
        }
    }

    /// Runs `executable` and waits for it on the calling thread.
    ///
    /// Uses `posix_spawn` and `waitpid` directly: Foundation's `Process` relies on a run loop to
    /// notice that a child exited, which does not turn on every thread.
    package static func runBlocking(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, separateErrors: Bool = false
    ) throws -> ProcessOutput {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw LocalPostgresError("could not create a pipe: \(String(cString: strerror(errno)))")
        }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Close-on-exec, so that no other child (and no daemon it starts) keeps the pipe open.
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // dup2 clears close-on-exec on the copies: the child writes both streams to the pipe.
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        // Standard error goes to a file when kept apart: two pipes read one after the other
        // could deadlock on a full buffer.
        let errorFile = separateErrors ? FileManager.default.temporaryDirectory.appending(path: "orbit-stderr-\(UUID().uuidString)").path : nil
        if let errorFile {
            posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        }
        defer { if let errorFile { unlink(errorFile) } }
        // Nothing else of ours reaches the child: SwiftNIO opens its sockets without
        // close-on-exec, so a server's listening socket lived on in every postgres or pgbouncer
        // started while it ran (connects still succeeded after the server had closed it).
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        let environmentPairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environmentPairs.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // The calling thread (a Dispatch worker) blocks most signals and the child would inherit
        // that mask: pgbench -T would never see its SIGALRM. Start it with none blocked and
        // default handlers for the signals we may ignore (SIGINT, SIGTERM, SIGPIPE).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(writeEnd)
        guard spawned == 0 else {
            close(readEnd)
            throw LocalPostgresError("could not run \(executable): \(String(cString: strerror(spawned)))")
        }
        var output = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(readEnd, &chunk, chunk.count)
            if count > 0 {
                output.append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(readEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED/WEXITSTATUS are macros: exit code in bits 8-15 when the low 7 bits are 0.
        let exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let errors = errorFile.flatMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return ProcessOutput(status: exitStatus, output: String(decoding: output, as: UTF8.self), errors: errors)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later): the child closes
    /// every descriptor from the given one up. Swift's Glibc module leaves it out (it is a GNU
    /// extension), so it is looked up once; nil where the C library has none.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        // A nil handle is RTLD_DEFAULT: the symbol as the program's own libraries define it.
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The full path of `name` found on `PATH`, if any.
    package static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A local PostgreSQL cluster could not be found, created, started or stopped.
package struct LocalPostgresError: Error, CustomStringConvertible, Sendable {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
