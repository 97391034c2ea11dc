import Foundation
import OrbitFuzzTargets

// `orbit-fuzz`: libFuzzer over the input parsers. scripts/fuzz.sh builds it with
// `-sanitize=fuzzer -DFUZZING` and runs each target for a bounded time; ORBIT_FUZZ_TARGET
// names the target. A broken property prints what broke and aborts, which libFuzzer reports
// as a crash and saves as an input to replay. Built without FUZZING (as `swift build` does),
// it replays files instead: `orbit-fuzz TARGET FILE…`.

/// Prints to standard error.
func report(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

#if FUZZING
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    nonisolated(unsafe) var fuzzTarget: FuzzTarget = .amount
    guard let name = ProcessInfo.processInfo.environment["ORBIT_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
        report("Set ORBIT_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")).")
        exit(2)
    }
    fuzzTarget = target
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(
        LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
            if let failure = fuzzTarget.check(input) {
                report("orbit-fuzz \(fuzzTarget.rawValue): \(failure)")
                abort()
            }
            return 0
        }
    )
#else
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
        report("usage: orbit-fuzz TARGET FILE…  (targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")))")
        report("To fuzz, build with scripts/fuzz.sh.")
        exit(2)
    }
    var failures = 0
    for path in arguments.dropFirst() {
        guard let data = FileManager.default.contents(atPath: path) else {
            report("\(path): cannot be read")
            failures += 1
            continue
        }
        if let failure = target.check(Array(data)) {
            report("\(path): \(failure)")
            failures += 1
        }
    }
    print("\(arguments.count - 1) inputs, \(failures) failures")
    exit(failures == 0 ? 0 : 1)
#endif
