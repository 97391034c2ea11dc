import Foundation
import HummingbirdWSClient
import Logging
import OrbitCore
import OrbitRuntime
import OrbitTestSupport
import ServiceLifecycle
import Testing

@testable import OrbitAPI

@Suite("Chat on live sockets: messages, receipts, typing and presence, across servers")
struct ChatLiveTests {
    /// A WebSocket client on `/live` that records what it receives and sends what `outbox` yields.
    static func connect(port: Int, token: String, into received: Received, outbox: AsyncStream<String>) async throws {
        var logger = Logger(label: "ws-client")
        logger.logLevel = .warning
        try await WebSocketClient.connect(
            url: "ws://127.0.0.1:\(port)/live", configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: logger
        ) { inbound, outbound, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await text in outbox { try await outbound.write(.text(text)) }
                }
                group.addTask {
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        if case .text(let text) = message { received.append(text) }
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        received.close()
    }

    /// The chat messages of `type` a socket received, as JSON objects.
    static func messages(_ received: Received, _ type: String) -> [[String: Any]] {
        received.all.compactMap { text in
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], object["type"] as? String == type
            else { return nil }
            return object
        }
    }

    @Test(
        "a message, an edit, a read receipt and typing reach the other participants' sockets on another server, never a non-participant's; presence follows the socket"
    )
    func liveChat() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let third = try await harness.services.users.create(email: "third@example.com", displayName: "Tia Third").id
            _ = try await harness.services.members.add(third, to: cast.community, as: cast.admin)
            let thirdToken = try await harness.token(for: third)
            let start = try await harness.request(
                .post, "/communities/\(cast.community)/chats", token: cast.adminToken,
                json: ["kind": "group", "user_ids": [cast.member.description], "title": "Coaches"])
            let group = try start.string("id")

            try await LiveTests().withServer(harness, heartbeat: .milliseconds(200)) { portA in
                try await LiveTests().withServer(harness, heartbeat: .milliseconds(200)) { portB in
                    let (admin, member, outsider) = (Received(), Received(), Received())
                    let (memberOutbox, memberSend) = AsyncStream<String>.makeStream()
                    let (thirdOutbox, thirdSend) = AsyncStream<String>.makeStream()
                    let (adminOutbox, _) = AsyncStream<String>.makeStream()
                    try await withThrowingTaskGroup(of: Void.self) { sockets in
                        sockets.addTask { try await Self.connect(port: portA, token: cast.adminToken, into: admin, outbox: adminOutbox) }
                        sockets.addTask { try await Self.connect(port: portB, token: cast.memberToken, into: member, outbox: memberOutbox) }
                        sockets.addTask { try await Self.connect(port: portB, token: thirdToken, into: outsider, outbox: thirdOutbox) }
                        try await waitUntil("the sockets are open") { admin.heartbeats > 0 && member.heartbeats > 0 && outsider.heartbeats > 0 }
                        let online = try await harness.request(.get, "/users/\(cast.member)/presence", token: cast.adminToken)
                        #expect(try online.json["online"] as? Bool == true, "\(online.text)")

                        // A message through server A reaches the member's socket on server B, with the message.
                        let sent = try await rawRequest(
                            port: portA, "POST", "/chats/\(group)/messages", token: cast.adminToken, json: #"{"text": "Nets at 5"}"#)
                        #expect(sent.hasPrefix("HTTP/1.1 201"), "\(sent)")
                        try await waitUntil("the member's socket has the message") { !Self.messages(member, "message").isEmpty }
                        let live = try #require(Self.messages(member, "message").first)
                        #expect(live["conversation_id"] as? String == group && live["community_id"] as? String == cast.community.description)
                        let message = try #require(live["message"] as? [String: Any])
                        #expect(message["text"] as? String == "Nets at 5" && message["position"] as? Int == 1)
                        let messageID = try #require(message["id"] as? String)

                        // An edit, then a read receipt back to the sender's socket on server A.
                        let edited = try await harness.request(.patch, "/messages/\(messageID)", token: cast.adminToken, json: ["text": "Nets at 6"])
                        #expect(edited.status == 200)
                        try await waitUntil("the member's socket has the edit") {
                            Self.messages(member, "message").contains { ($0["message"] as? [String: Any])?["text"] as? String == "Nets at 6" }
                        }
                        let read = try await harness.request(.put, "/chats/\(group)/read", token: cast.memberToken, json: ["message_id": messageID])
                        #expect(read.status == 200)
                        try await waitUntil("the sender's socket has the receipt") {
                            Self.messages(admin, "receipts").contains { message in
                                (message["receipts"] as? [[String: Any]] ?? []).contains {
                                    $0["user_id"] as? String == cast.member.description && $0["read_position"] as? Int == 1
                                }
                            }
                        }

                        // Typing from the member's socket reaches the admin, not the member; the
                        // third (not in the group) cannot type into it.
                        thirdSend.yield(#"{"type": "typing", "conversation_id": "\#(group)"}"#)
                        memberSend.yield(#"{"type": "typing", "conversation_id": "\#(group)"}"#)
                        try await waitUntil("the admin's socket has the typing") { !Self.messages(admin, "typing").isEmpty }
                        let seen = admin.heartbeats
                        try await waitUntil("two more heartbeats") { admin.heartbeats >= seen + 2 }
                        #expect(Self.messages(admin, "typing").map { $0["user_id"] as? String } == [cast.member.description])
                        #expect(Self.messages(member, "typing").isEmpty)
                        // The third heard nothing of the group (the community's conversation is another).
                        #expect(!outsider.all.contains { $0.contains(group) }, "\(outsider.all.filter { !$0.contains("heartbeat") })")

                        // The member's socket closes (the app went away): offline, last seen now.
                        memberSend.finish()
                        try await waitUntil("the member is offline") {
                            try await harness.request(.get, "/users/\(cast.member)/presence", token: cast.adminToken).json["online"] as? Bool == false
                        }
                        let away = try await harness.request(.get, "/users/\(cast.member)/presence", token: cast.adminToken)
                        #expect(try away.json["last_seen_at"] is String, "\(away.text)")
                        let outsiderView = try await harness.request(.get, "/users/\(cast.member)/presence", token: cast.outsiderToken)
                        #expect(outsiderView.status == 404)
                        let hide = try await harness.request(.put, "/users/me/presence", token: cast.memberToken, json: ["visible": false])
                        #expect(hide.status == 200)
                        let hidden = try await harness.request(.get, "/users/\(cast.member)/presence", token: cast.adminToken)
                        #expect(try hidden.json["visible"] as? Bool == false, "\(hidden.text)")
                        #expect(try hidden.json["last_seen_at"] is NSNull, "\(hidden.text)")
                        let typing = try await harness.request(.post, "/chats/\(group)/typing", token: thirdToken)
                        #expect(typing.status == 404)
                        thirdSend.finish()
                        sockets.cancelAll()
                    }
                }
            }
        }
    }

    actor Pushes: PushSender {
        var sent: [Push] = []
        func send(_ push: Push) async -> PushOutcome {
            sent.append(push)
            return .sent(id: nil)
        }
    }

    @Test("a chat message wakes push delivery at once (the scheduled tick is an hour away): the away participant's device gets it")
    func pushWakesDelivery() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            _ = try await harness.services.devices.register(
                token: String(repeating: "ab", count: 32), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: nil, as: cast.member)
            let (direct, _) = try await harness.services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            // Pending before the server starts: the first tick sends it (and so shows it has run).
            _ = try await harness.services.chat.send(to: direct.id, text: "Hello", as: cast.admin)
            let pushes = Pushes()
            var configuration = harness.api.configuration
            configuration.port = 0
            let api = try OrbitAPI(
                services: harness.services, configuration: configuration, tokens: harness.api.tokens, appleVerifier: harness.api.appleVerifier)
            var logger = Logger(label: "test")
            logger.logLevel = .warning
            let jobs = ScheduledJobs(services: harness.services, pushes: pushes, logger: logger, tick: .seconds(3600), pushSignal: api.pushSignal)
            let (ports, continuation) = AsyncStream<Int>.makeStream()
            let app = api.makeApplication(logger: logger, services: [jobs], onRunning: { continuation.yield($0) })
            let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.makeAsyncIterator()
                _ = try #require(await iterator.next())
                // The first tick has handed out what was pending (its pushes are being sent); the next is an hour away.
                try await waitUntil("the first tick's push is sent") { await pushes.sent.count == 1 }
                // The wake comes from the listener's LISTEN, which a server just started has a
                // moment later than its first tick.
                try await waitUntil("the server reads the change log") { await api.live.isListening }
                _ = try await harness.services.chat.send(to: direct.id, text: "Are you coming?", as: cast.admin)
                try await waitUntil("the new message's push is sent") { await pushes.sent.count == 2 }
                let push = try #require(await pushes.sent.last)
                #expect(push.notification.type == .chatMessage && push.notification.body == "Are you coming?" && push.badge == 2)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }

    @Test(
        "a delivered mark sent on the socket raises the watermark and reaches the sender as a receipt; a non-participant's mark, or one naming another conversation's message, changes nothing"
    )
    func deliveredOnTheSocket() async throws {
        try await withAPI { harness in
            let cast = try await APICast.make(harness)
            let chat = harness.services.chat
            let third = try await harness.services.users.create(email: "third@example.com", displayName: "Tia Third").id
            _ = try await harness.services.members.add(third, to: cast.community, as: cast.admin)
            let thirdToken = try await harness.token(for: third)
            let (group, _) = try await chat.start(in: cast.community, kind: .group, with: [cast.member], title: "Coaches", as: cast.admin)
            let first = try await chat.send(to: group.id, text: "Nets at 5", as: cast.admin).message
            _ = try await chat.send(to: group.id, text: "Cones too", as: cast.admin)
            // The community's conversation, with a message further along than the group's.
            let everyone = try #require(try await chat.list(in: cast.community, as: cast.admin).items.first { $0.kind == .community })
            var further = first
            for text in ["one", "two", "three"] { further = try await chat.send(to: everyone.id, text: text, as: cast.admin).message }
            let elsewhere = further
            @Sendable func delivered() async throws -> [String: Int64] {
                try await harness.database.withConnection { connection in
                    var positions: [String: Int64] = [:]
                    for row in try await connection.query(
                        "SELECT user_id, delivered_position FROM conversation_participants WHERE conversation_id = \(group.id)")
                    {
                        let (user, position) = try row.decode((UserID, Int64).self)
                        positions[user.description] = position
                    }
                    return positions
                }
            }

            try await LiveTests().withServer(harness, heartbeat: .milliseconds(200)) { port in
                let (admin, member, outsider) = (Received(), Received(), Received())
                let (memberOutbox, memberSend) = AsyncStream<String>.makeStream()
                let (thirdOutbox, thirdSend) = AsyncStream<String>.makeStream()
                let (adminOutbox, _) = AsyncStream<String>.makeStream()
                try await withThrowingTaskGroup(of: Void.self) { sockets in
                    sockets.addTask { try await Self.connect(port: port, token: cast.adminToken, into: admin, outbox: adminOutbox) }
                    sockets.addTask { try await Self.connect(port: port, token: cast.memberToken, into: member, outbox: memberOutbox) }
                    sockets.addTask { try await Self.connect(port: port, token: thirdToken, into: outsider, outbox: thirdOutbox) }
                    try await waitUntil("the sockets are open") { admin.heartbeats > 0 && member.heartbeats > 0 && outsider.heartbeats > 0 }
                    let before = try await delivered()
                    thirdSend.yield(#"{"type": "delivered", "conversation_id": "\#(group.id)", "message_id": "\#(first.id)"}"#)
                    memberSend.yield(#"{"type": "delivered", "conversation_id": "\#(group.id)", "message_id": "\#(elsewhere.id)"}"#)
                    memberSend.yield(#"{"type": "delivered", "conversation_id": "\#(group.id)", "message_id": "\#(first.id)"}"#)
                    try await waitUntil("the sender's socket has the receipt") {
                        Self.messages(admin, "receipts").contains { message in
                            (message["receipts"] as? [[String: Any]] ?? []).contains {
                                $0["user_id"] as? String == cast.member.description && $0["delivered_position"] as? Int == 1
                            }
                        }
                    }
                    // Anything written late would be in by two heartbeats later.
                    let seen = admin.heartbeats
                    try await waitUntil("two more heartbeats") { admin.heartbeats >= seen + 2 }
                    var expected = before
                    expected[cast.member.description] = 1
                    let after = try await delivered()
                    #expect(after == expected)
                    // From the server's rows, not the test's own expectation: no row for the non-participant.
                    #expect(after[third.description] == nil, "a non-participant's mark made them a participant")
                    memberSend.finish()
                    thirdSend.finish()
                    sockets.cancelAll()
                }
            }
        }
    }
}
