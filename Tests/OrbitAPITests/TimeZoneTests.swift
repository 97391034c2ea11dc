import Foundation
import OrbitAPI
import OrbitCore
import OrbitTestSupport
import Testing

/// Every real time zone (issue 52, item 7): a community's zone is any zone or link of the system's
/// tz database, kept as the user gave it. Foundation's own list on Linux lacks `Asia/Kolkata`, the
/// zone an iPhone in India reports.
@Suite("Every real time zone")
struct TimeZoneTests {
    @Test("every canonical zone of the system's tzdata is accepted as a community's zone, and opens as itself")
    func everyCanonicalZone() throws {
        let database = try #require(TimeZoneDatabase.names(), "the system has no tzdata.zi")
        let places = database.zones.filter { $0.contains("/") && !$0.hasPrefix("Etc/") }
        #expect(places.count > 300)
        for zone in places.sorted() {
            #expect(throws: Never.self, "\(zone)") { try CommunitySettings(timezone: zone).validate() }
            #expect(CommunitySettings(timezone: zone).timeZone.identifier == zone)
        }
        // Links are accepted too; abbreviations and offsets are not places.
        #expect(throws: Never.self) { try CommunitySettings(timezone: "Asia/Calcutta").validate() }
        for name in ["EST", "Etc/GMT+5", "Asia/Atlantis", "asia/kolkata"] {
            #expect(throws: ServiceError.self, "\(name)") { try CommunitySettings(timezone: name).validate() }
        }
    }

    @Test("an app that sends the device's zone: Asia/Kolkata is taken and kept as sent, and so is its old name")
    func kolkataThroughTheAPI() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            for zone in ["Asia/Kolkata", "Asia/Calcutta"] {
                let created = try await harness.request(
                    .post, "/communities", token: cast.memberToken, json: ["name": "Mumbai Mavericks", "settings": ["timezone": zone]])
                #expect(created.status == 201, "\(created.text)")
                let id = try created.string("id")
                let read = try await harness.request(.get, "/communities/\(id)", token: cast.memberToken)
                #expect(try (read.json["settings"] as? [String: Any])?["timezone"] as? String == zone)
            }
            let refused = try await harness.request(
                .post, "/communities", token: cast.memberToken, json: ["name": "Nowhere", "settings": ["timezone": "Asia/Atlantis"]])
            #expect(refused.status == 400, "\(refused.text)")
        }
    }
}
