import Foundation

/// The time zones of the system's tz database (issue 52, item 7; docs/operations.md): every zone
/// and every link (an old name such as `Asia/Calcutta` for `Asia/Kolkata`), as the server's
/// tzdata lists them in `tzdata.zi`. Foundation's own list (`TimeZone.knownTimeZoneIdentifiers`)
/// is ICU's on Linux and lacks zones that tzdata has (`Asia/Kolkata`, which an iPhone in India
/// reports), although `TimeZone(identifier:)` reads them from tzdata all the same.
package enum TimeZoneDatabase {
    /// Where tzdata lives: `TZDIR`, else the system's.
    static var directory: String {
        ProcessInfo.processInfo.environment["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
    }

    /// The zone and link names of `tzdata.zi` (`Z NAME …`, `L TARGET NAME`); nil when the
    /// system has no such file.
    package static func names(inDirectory directory: String = directory) -> (zones: Set<String>, links: Set<String>)? {
        guard let data = FileManager.default.contents(atPath: directory + "/tzdata.zi") else { return nil }
        var zones: Set<String> = [], links: Set<String> = []
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 2, fields[0] == "Z" {
                zones.insert(String(fields[1]))
            } else if fields.count >= 3, fields[0] == "L" {
                links.insert(String(fields[2]))
            }
        }
        return zones.isEmpty ? nil : (zones, links)
    }

    /// The names a community's zone may have: UTC, and each Area/Location name of tzdata (zones
    /// and links) that Foundation can open; where the system has no `tzdata.zi`, Foundation's
    /// own list. Bare abbreviations (`EST`) and the `Etc/` offsets are not places.
    package static let acceptedNames: Set<String> = {
        let listed = names().map { $0.zones.union($0.links) } ?? Set(TimeZone.knownTimeZoneIdentifiers)
        let places = listed.filter { $0.contains("/") && !$0.hasPrefix("Etc/") && TimeZone(identifier: $0) != nil }
        return places.union(["UTC"])
    }()
}
