import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import OrbitCore
import OrbitPostgres
import OrbitPush
import OrbitTestSupport
import Synchronization
import Testing

/// The team's signing key and the ids APNs knows it by, as in the Apple Developer account.
struct TeamKey {
    let key = P256.Signing.PrivateKey()
    let keyID = "KEY1234567"
    let teamID = "TEAM765432"

    var expectations: TestAPNsServer.Expectations { .init(keyID: keyID, teamID: teamID, publicKey: key.publicKey) }

    /// A sender that trusts the test server's certificate and sends both environments to it.
    func sender(
        for server: TestAPNsServer, requestTimeout: Duration? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) async throws -> APNsSender {
        var configuration = try APNsConfiguration(
            keyPEM: key.pemRepresentation, keyID: keyID, teamID: teamID, environments: [.production, .sandbox])
        if let requestTimeout { configuration.requestTimeout = requestTimeout }
        configuration.hosts = [.production: server.url, .sandbox: server.url]
        configuration.trustRootsPEM = [server.certificatePEM]
        return try await APNsSender(configuration: configuration, now: now)
    }
}

/// A test database, a local APNs and a sender to it; everything closed afterwards.
func withAPNs(
    _ body: (OrbitServices, TestDatabase, TestAPNsServer, APNsSender, TeamKey) async throws -> Void
) async throws {
    let team = TeamKey()
    let server = try await TestAPNsServer.start(expecting: team.expectations)
    do {
        let sender = try await team.sender(for: server)
        try await withTestDatabase { database in
            let pool = database.makePool(maxConnections: 4)
            do {
                try await body(OrbitServices(pool: pool), database, server, sender, team)
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
        try await sender.shutdown()
    } catch {
        try await server.stop()
        throw error
    }
    try await server.stop()
}

func token(_ seed: String) -> String {
    String(repeating: seed, count: 64 / seed.count)
}

@Suite("Pushes to APNs")
struct APNsTests {
    @Test(
        "a post produces one well-formed push per device of every other member: none to the author, none to a muted member, none twice with two servers"
    )
    func onePushPerDevice() async throws {
        try await withAPNs { services, database, server, sender, team in
            let author = try await services.users.create(email: "author@example.com", displayName: "Ann Author").id
            let community = try await services.communities.create(name: "Tigers", as: author).id
            var devices: [String: UserID] = [:]
            func member(_ name: String, tokens: [String]) async throws -> UserID {
                let user = try await services.users.create(email: "\(name)@example.com", displayName: name).id
                if name != "outsider" { _ = try await services.members.add(user, to: community, as: author) }
                for (index, token) in tokens.enumerated() {
                    _ = try await services.devices.register(
                        token: token, environment: index == 0 ? .production : .sandbox, bundleID: "app.orbitcove.ios", locale: "en-US", as: user)
                    devices[token] = user
                }
                return user
            }
            for (index, token) in [token("a1"), token("a2")].enumerated() {
                _ = try await services.devices.register(
                    token: token, environment: index == 0 ? .production : .sandbox, bundleID: "app.orbitcove.ios", locale: nil, as: author)
            }
            _ = try await member("alice", tokens: [token("b1"), token("b2")])
            let muted = try await member("mute", tokens: [token("c1")])
            _ = try await member("carl", tokens: [token("d1")])
            _ = try await member("outsider", tokens: [token("e1")])
            try await database.withConnection { connection in
                try await connection.query(
                    "UPDATE members SET notification_prefs = '{\"new_post\": false}' WHERE community_id = \(community) AND user_id = \(muted)")
            }
            let post = try await services.feed.createPost(in: community, PostDraft(content: "Practice moved to 5pm"), as: author)

            // Two servers: each its own pool and its own APNs connection, delivering at once, twice.
            let second = database.makePool(maxConnections: 4)
            let secondSender = try await team.sender(for: server)
            let reports = try await withThrowingTaskGroup(of: DeliveryReport.self) { group in
                for _ in 0..<2 {
                    group.addTask { try await services.notifications.deliverPending(using: sender, batch: 1) }
                    group.addTask { try await OrbitServices(pool: second).notifications.deliverPending(using: secondSender, batch: 1) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await secondSender.shutdown()
            await second.close()

            #expect(reports.map(\.notifications).reduce(0, +) == 2)
            #expect(reports.map(\.sent).reduce(0, +) == 3)
            #expect(server.received.allSatisfy { $0.status == 200 }, "\(server.received.map { ($0.status, $0.reason) })")
            #expect(server.delivered.map(\.token).sorted() == [token("b1"), token("b2"), token("d1")])
            for push in server.delivered {
                let user = try #require(devices[push.token])
                let notification = try #require(try await services.notifications.list(as: user).items.first)
                #expect(push.headers["apns-topic"] == "app.orbitcove.ios")
                #expect(push.headers["apns-push-type"] == "alert")
                #expect(push.headers["apns-priority"] == "10")
                #expect(push.headers["apns-collapse-id"] == notification.id.description)
                let expiration = try #require(push.headers["apns-expiration"].flatMap(Double.init))
                #expect(abs(expiration - notification.createdAt.addingTimeInterval(86_400).timeIntervalSince1970) < 1)
                let payload = push.payload
                let aps = try #require(payload["aps"] as? [String: Any])
                let alert = try #require(aps["alert"] as? [String: Any])
                #expect(alert["title"] as? String == "New post")
                #expect(alert["body"] as? String == "Practice moved to 5pm")
                #expect(aps["badge"] as? Int == 1)
                #expect(aps["thread-id"] as? String == community.description)
                #expect(payload["community_id"] as? String == community.description)
                #expect(payload["post_id"] as? String == post.id.description)
                #expect(payload["notification_id"] as? String == notification.id.description)
                #expect(payload["type"] as? String == "new_post")
            }
        }
    }

    @Test(
        "APNs' answers: 410, 400 BadDeviceToken and 400 DeviceTokenNotForTopic remove the device; 429 and 503 are tried again with backoff until they give up; another 400 is not tried again"
    )
    func answers() async throws {
        try await withAPNs { services, database, server, sender, _ in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Ada").id
            let member = try await services.users.create(email: "member@example.com", displayName: "Max").id
            let community = try await services.communities.create(name: "Tigers", as: admin).id
            _ = try await services.members.add(member, to: community, as: admin)
            for seed in ["41", "42", "40", "44", "45", "50"] {
                _ = try await services.devices.register(
                    token: token(seed), environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: member)
            }
            server.script(token("41"), [410])
            server.script(token("42"), [429])
            server.script(token("40"), [400])
            server.script(token("44"), [.answer(400, reason: "DeviceTokenNotForTopic")])
            server.script(token("45"), [.answer(400, reason: "BadCollapseId")])
            server.script(token("50"), [503, 503, 503, 503, 503])
            _ = try await services.feed.createPost(in: community, PostDraft(content: "Hi"), as: admin)

            let start = Date()
            func run(minutesLater minutes: Double) async throws -> DeliveryReport {
                var later = services
                later.now = { start.addingTimeInterval(minutes * 60) }
                return try await later.notifications.deliverPending(using: sender)
            }
            let first = try await run(minutesLater: 0)
            #expect((first.sent, first.retrying, first.failed, first.devicesRemoved) == (0, 2, 4, 3))
            let remaining = try await services.devices.list(as: member).map(\.token).sorted()
            #expect(remaining == [token("42"), token("45"), token("50")])
            // Not due yet: nothing is sent.
            let early = try await run(minutesLater: 0.5)
            #expect(early.sent + early.retrying + early.failed == 0)
            #expect(server.received.count == 6)
            // After the first backoff (a minute) the 429 goes through; the 503 waits twice as long each time.
            let second = try await run(minutesLater: 1.5)
            #expect((second.sent, second.retrying) == (1, 1))
            for minutes in [4.0, 8.5, 17.0] {
                let report = try await run(minutesLater: minutes)
                #expect(report.retrying + report.failed == 1, "at \(minutes) minutes: \(report)")
            }
            let attempts = server.received.filter { $0.token == token("50") }.count
            #expect(attempts == 5)
            #expect(try await run(minutesLater: 120).sent == 0)
            #expect(server.received.filter { $0.token == token("45") }.count == 1)
            let states = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT d.token, p.state, p.attempts, p.error FROM push_deliveries p JOIN devices d ON d.id = p.device_id ORDER BY d.token"
                ).map { try $0.decode((String, String, Int, String?).self) }
            }
            #expect(states.map(\.0) == [token("42"), token("45"), token("50")])
            #expect(states.map(\.1) == ["sent", "failed", "failed"])
            #expect(states.map(\.2) == [2, 1, 5])
            #expect(states[1].3 == "APNs 400: BadCollapseId")
            #expect(states[2].3?.hasPrefix("gave up after 5 attempts") == true)
        }
    }

    @Test("a TLS error after the request was written counts as sent without an answer: it is never sent again")
    func tlsErrorAfterWriting() async throws {
        try await withAPNs { services, database, server, sender, team in
            let push = Push(
                notification: AppNotification.sample, deviceID: DeviceID.random(), token: token("ab"), environment: .production,
                bundleID: "app.orbitcove.ios", badge: 1, attempt: 1)
            for (number, failure) in [TestAPNsServer.Scripted.uncleanTLSClose, .brokenTLS].enumerated() {
                // A sender of its own: a connection of its own, which the failure then breaks. Its
                // timeout is long past what a TLS failure takes and short of the 30 s default, so
                // a fault that was not injected shows as a timeout, not as a pass.
                let fresh = try await team.sender(for: server, requestTimeout: .seconds(10))
                server.script(push.token, [failure])
                let outcome = await fresh.send(push)
                try await fresh.shutdown()
                guard case .failed(let reason) = outcome else {
                    Issue.record("a TLS error after the request was written must not be retried (\(failure)): \(outcome)")
                    return
                }
                #expect(server.faultsInjected == number + 1, "the fault \(failure) was not injected")
                #expect(reason.hasPrefix("no answer from APNs after the request was written"), "\(failure): \(reason)")
                // The error is the fault's (the connection ended under the request), not a timeout's.
                #expect(reason.hasSuffix("HTTPClientError.remoteConnectionClosed"), "\(failure): \(reason)")
                #expect(server.received.count == number + 1)
            }
            // Through delivery: recorded as failed after one attempt, and never sent again.
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Ada").id
            let member = try await services.users.create(email: "member@example.com", displayName: "Max").id
            let community = try await services.communities.create(name: "Tigers", as: admin).id
            _ = try await services.members.add(member, to: community, as: admin)
            _ = try await services.devices.register(
                token: token("cd"), environment: .production, bundleID: "app.orbitcove.ios", locale: nil, as: member)
            server.script(token("cd"), [.brokenTLS])
            _ = try await services.feed.createPost(in: community, PostDraft(content: "Hi"), as: admin)
            let report = try await services.notifications.deliverPending(using: sender)
            #expect((report.sent, report.retrying, report.failed) == (0, 0, 1), "\(report)")
            var later = services
            later.now = { Date().addingTimeInterval(7200) }
            _ = try await later.notifications.deliverPending(using: sender)
            #expect(server.received.filter { $0.token == token("cd") }.count == 1)
            let state = try await database.withConnection { connection in
                try await connection.query("SELECT state, attempts FROM push_deliveries").single().decode((String, Int).self)
            }
            #expect(state == ("failed", 1))
        }
    }

    @Test(
        "whatever the error, a send is retried only if its request was not written: a TLS error, a reset or a timeout after it counts as sent without an answer"
    )
    func outcomeOfAnError() {
        let errors: [any Error] = [
            NIOSSLError.uncleanShutdown, NIOSSLError.handshakeFailed(.sslError([])), HTTPClientError.remoteConnectionClosed,
            HTTPClientError.deadlineExceeded, ChannelError.ioOnClosedChannel, ChannelError.connectTimeout(.seconds(1)),
        ]
        for error in errors {
            guard case .failed = APNsSender.outcome(of: error, afterWriting: true) else {
                Issue.record("\(error) after the request was written must not be retried")
                continue
            }
            guard case .retry = APNsSender.outcome(of: error, afterWriting: false) else {
                Issue.record("\(error) before the request was written is retried")
                continue
            }
        }
    }

    @Test("provider tokens: one is reused for 50 minutes, then a new one is made, so APNs never sees one an hour old")
    func providerTokens() async throws {
        let team = TeamKey()
        let server = try await TestAPNsServer.start(expecting: team.expectations)
        let clock = TestClock()
        let sender = try await team.sender(for: server, now: { clock.now })
        let push = Push(
            notification: AppNotification.sample, deviceID: DeviceID.random(), token: token("ab"), environment: .production,
            bundleID: "app.orbitcove.ios", badge: 2, attempt: 1)
        var tokens: [String] = []
        for minutes in [0.0, 49, 55, 104, 110] {
            clock.now = clock.start.addingTimeInterval(minutes * 60)
            server.setNow(clock.now)
            let outcome = await sender.send(push)
            #expect(outcome.sentID?.count == 36, "\(outcome)")
            tokens.append(server.received.last?.headers["authorization"] ?? "")
        }
        #expect(server.received.map(\.status) == [200, 200, 200, 200, 200])
        #expect(tokens[0] == tokens[1] && tokens[1] != tokens[2] && tokens[2] == tokens[3] && tokens[3] != tokens[4])
        // A token an hour old is refused as APNs refuses it: the server's clock runs ahead of ours.
        server.setNow(clock.now.addingTimeInterval(3600))
        let refused = await sender.send(push)
        #expect(refused == .retry(reason: "APNs: ExpiredProviderToken"))
        try await sender.shutdown()
        try await server.stop()
    }

    @Test("a payload is at most 4 KB: a long body is shortened to fit")
    func payloadSize() async throws {
        var notification = AppNotification.sample
        notification.body = String(repeating: "Grüße, ", count: 2000)
        let push = Push(
            notification: notification, deviceID: DeviceID.random(), token: token("ab"), environment: .production,
            bundleID: "app.orbitcove.ios", badge: 1, attempt: 1)
        let payload = try APNsPayload.encode(push)
        #expect(payload.count <= 4096 && payload.count > 3500)
        let json = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let body = try #require(((json["aps"] as? [String: Any])?["alert"] as? [String: Any])?["body"] as? String)
        #expect(body.hasSuffix("…") && body.hasPrefix("Grüße, Grüße"))
    }

    @Test("a push that could not connect is tried again; one that may have arrived is not")
    func connectionFailures() async throws {
        let team = TeamKey()
        var configuration = try APNsConfiguration(
            keyPEM: team.key.pemRepresentation, keyID: team.keyID, teamID: team.teamID, environments: [.production])
        configuration.hosts = [.production: URL(string: "https://localhost:1")!]
        configuration.connectTimeout = .milliseconds(300)
        let sender = try await APNsSender(configuration: configuration)
        let push = Push(
            notification: AppNotification.sample, deviceID: DeviceID.random(), token: token("ab"), environment: .production,
            bundleID: "app.orbitcove.ios", badge: 1, attempt: 1)
        guard case .retry = await sender.send(push) else {
            Issue.record("a refused connection should be retried")
            return
        }
        var sandbox = push
        sandbox.environment = .sandbox
        #expect(await sender.send(sandbox) == .failed(reason: "this server does not send to the sandbox environment"))
        try await sender.shutdown()

        // A server that takes the request and never answers: it may have delivered it.
        let server = try await TestAPNsServer.start(expecting: team.expectations)
        configuration.hosts = [.production: server.url]
        configuration.trustRootsPEM = [server.certificatePEM]
        configuration.requestTimeout = .milliseconds(500)
        let patient = try await APNsSender(configuration: configuration)
        server.script(push.token, [0])
        guard case .failed(let reason) = await patient.send(push) else {
            Issue.record("a request without an answer must not be retried")
            return
        }
        #expect(reason.hasPrefix("no answer from APNs after the request was written"))
        #expect(server.received.count == 1)
        try await patient.shutdown()
        try await server.stop()
    }
}

extension PushOutcome {
    var sentID: String? {
        if case .sent(let id) = self { return id }
        return nil
    }
}

extension AppNotification {
    static let sample = AppNotification(
        id: .random(), userID: .random(), communityID: .random(), type: .newPost, title: "New post", body: "Practice moved",
        data: #"{"post_id": "6f1c7a52-5c8e-4f35-9d57-0b7e2f9f3f11"}"#, createdAt: Date())
}
