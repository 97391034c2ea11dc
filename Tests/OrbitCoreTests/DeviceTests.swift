import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

/// APNs device tokens (issue 21, item 1): each user sees and changes only their own; a token
/// re-registered under another user moves to them; signing out on a phone and deleting the
/// account remove its devices.
@Suite("Devices: where a user's pushes go")
struct DeviceTests {
    static let tokenA = String(repeating: "ab", count: 32)
    static let tokenB = String(repeating: "0f", count: 32)

    @Test("register, refresh, list and remove one's own tokens; malformed input refused")
    func registerAndRemove() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let first = try await services.devices.register(
                token: Self.tokenA.uppercased(), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: "en-US", as: cast.member)
            #expect(first.token == Self.tokenA)
            #expect(first.userID == cast.member)
            let refreshed = try await services.devices.register(
                token: Self.tokenA, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            #expect(refreshed.id == first.id && refreshed.environment == .production && refreshed.locale == nil)
            _ = try await services.devices.register(
                token: Self.tokenB, environment: .production, bundleID: "app.orbitcove.ios", locale: "de_CH", as: cast.member)
            #expect(Set(try await services.devices.list(as: cast.member).map(\.token)) == [Self.tokenA, Self.tokenB])
            #expect(try await services.devices.list(as: cast.admin).isEmpty)

            for (token, bundle, locale, field) in [
                ("abc", "app.x", nil, "token"), (String(repeating: "g", count: 64), "app.x", nil, "token"),
                (String(repeating: "a", count: 65), "app.x", nil, "token"), (Self.tokenA, "app..x", nil, "bundle_id"),
                (Self.tokenA, "app x", nil, "bundle_id"), (Self.tokenA, "app.x", "english", "locale"),
            ] as [(String, String, String?, String)] {
                let error = await serviceError {
                    try await services.devices.register(token: token, environment: .sandbox, bundleID: bundle, locale: locale, as: cast.member)
                }
                #expect(error?.code == .invalidInput && error?.field == field, "\(token) \(bundle) \(locale ?? "")")
            }

            // Someone else's token is not theirs to remove.
            let notTheirs = await serviceError { try await services.devices.remove(token: Self.tokenB, as: cast.admin) }
            #expect(notTheirs?.code == .notFound)
            try await services.devices.remove(token: Self.tokenB, as: cast.member)
            #expect(try await services.devices.list(as: cast.member).map(\.token) == [Self.tokenA])
        }
    }

    @Test("a token registered under another user moves to them: the previous owner gets no more pushes on that phone")
    func tokenMoves() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.devices.register(
                token: Self.tokenA, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            let moved = try await services.devices.register(
                token: Self.tokenA, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.admin)
            #expect(moved.userID == cast.admin)
            #expect(try await services.devices.list(as: cast.member).isEmpty)
            #expect(try await services.devices.list(as: cast.admin).map(\.token) == [Self.tokenA])
        }
    }

    @Test("signing out with the phone's token removes it; deleting the account removes every device")
    func signOutAndDeletion() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            _ = try await services.devices.register(
                token: Self.tokenA, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            _ = try await services.devices.register(
                token: Self.tokenB, environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            let session = try await services.sessions.start(for: cast.member, device: "iPhone", lifetime: .seconds(3600))
            // Another user's token named at sign-out is ignored.
            _ = try await services.devices.register(
                token: String(repeating: "cd", count: 32), environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: cast.admin)
            try await services.sessions.revoke(session.token, deviceToken: String(repeating: "CD", count: 32))
            #expect(try await services.devices.list(as: cast.admin).count == 1)
            let other = try await services.sessions.start(for: cast.member, device: "iPad", lifetime: .seconds(3600))
            try await services.sessions.revoke(other.token, deviceToken: Self.tokenB.uppercased())
            #expect(try await services.devices.list(as: cast.member).map(\.token) == [Self.tokenA])

            _ = try await services.lifecycle.requestAccountDeletion(as: cast.member)
            var later = services
            later.now = { Date().addingTimeInterval(8 * 86_400) }
            let (deleted, _) = try await later.lifecycle.deleteDueAccounts()
            #expect(deleted == 1)
            let left = try await database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n FROM devices WHERE user_id = \(cast.member)").single().decode("n", as: Int.self)
            }
            #expect(left == 0)
        }
    }
}
