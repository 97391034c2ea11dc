import Foundation
import LocalPostgres
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Child processes")
struct SubprocessTests {
    /// SwiftNIO opens sockets without close-on-exec. A server's listening socket open while a test
    /// started postgres lived on in the postmaster: connects to the closed server still
    /// succeeded, and SocketTests' graceful shutdown timed out waiting for it to stop listening.
    @Test("a child inherits no descriptor but its standard streams")
    func noInheritedDescriptors() async throws {
        // A socket as NIO makes one: no SOCK_CLOEXEC.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket > 2)
        defer { close(socket) }
        let result = try await Subprocess.run(
            "/bin/sh", ["-c", "if [ -e /proc/$$/fd/\(socket) ]; then echo inherited; else echo closed; fi"])
        #expect(result.succeeded)
        #expect(result.output == "closed\n")
        // The standard streams still reach the child (it printed through them).
        let streams = try await Subprocess.run("/bin/sh", ["-c", "echo out; echo err >&2"], separateErrors: true)
        #expect(streams.output == "out\n")
        #expect(streams.errors == "err\n")
    }
}
