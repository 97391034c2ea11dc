import ArgumentParser
import Foundation
import Logging
import OrbitCore

/// `--now`: the time the jobs act as of (tests, catching up); default the clock.
struct ClockOptions: ParsableArguments {
    @Option(help: "Act as if it were this time (RFC 3339).") var now: Timestamp?

    func apply(to services: OrbitServices) -> OrbitServices {
        guard let now else { return services }
        var copy = services
        let date = now.date
        copy.now = { date }
        return copy
    }
}
