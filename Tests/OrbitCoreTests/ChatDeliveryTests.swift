import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Chat: the change feed, pushes to who is away, presence")
struct ChatDeliveryTests {
    /// Every change of the feed for `user` from the start (the state, then the log).
    static func pull(_ services: OrbitServices, _ community: CommunityID, cursor: String? = nil, as user: UserID) async throws
        -> (changes: [Change], cursor: String)
    {
        var all: [Change] = []
        var cursor = cursor
        while true {
            let page = try await services.sync.changes(of: community, cursor: cursor, as: user)
            all += page.changes
            cursor = page.nextCursor
            if !page.hasMore { return (all, page.nextCursor) }
        }
    }

    static func entities(_ changes: [Change], _ entity: SyncEntity) -> [(UUID, ChangeOp)] {
        changes.filter { $0.entity == entity }.map { ($0.id, $0.op) }
    }

    @Test("conversations and messages are in the feed of their participants only; a receipt changes the conversation; leaving a group is its delete")
    func feed() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await ChatTests.setUp(services)
            let (group, _) = try await services.chat.start(in: cast.community, kind: .group, with: [cast.member], title: "Coaches", as: cast.admin)
            // The state: the community conversation and the group, for those in them.
            let (memberState, memberCursor) = try await Self.pull(services, cast.community, as: cast.member)
            let (thirdState, thirdCursor) = try await Self.pull(services, cast.community, as: third)
            #expect(Set(Self.entities(memberState, .conversation).map(\.0)).contains(group.id.uuid))
            #expect(!Self.entities(thirdState, .conversation).map(\.0).contains(group.id.uuid))
            #expect(Self.entities(thirdState, .conversation).count == 1)  // the community's

            let (message, _) = try await services.chat.send(to: group.id, text: "Nets at 5", as: cast.admin)
            let (memberLog, memberNext) = try await Self.pull(services, cast.community, cursor: memberCursor, as: cast.member)
            let sent = try #require(memberLog.first { $0.entity == .message && $0.id == message.id.uuid })
            #expect((sent.data as? ChatMessage)?.text == "Nets at 5")
            let conversation = try #require(memberLog.first { $0.entity == .conversation && $0.id == group.id.uuid }?.data as? Conversation)
            #expect(conversation.unreadCount == 1 && conversation.lastMessage?.text == "Nets at 5")
            let (thirdLog, _) = try await Self.pull(services, cast.community, cursor: thirdCursor, as: third)
            #expect(thirdLog.filter { $0.entity == .message || $0.entity == .conversation }.isEmpty, "\(thirdLog.map(\.entity))")

            // The member reads it: the admin's feed has the conversation with the receipt, and
            // the admin's own message in it is read.
            let (_, adminCursor) = try await Self.pull(services, cast.community, as: cast.admin)
            _ = try await services.chat.mark(.read, upTo: message.id, in: group.id, as: cast.member)
            let (adminLog, _) = try await Self.pull(services, cast.community, cursor: adminCursor, as: cast.admin)
            let receipt = try #require(adminLog.first { $0.entity == .conversation && $0.id == group.id.uuid }?.data as? Conversation)
            #expect(receipt.othersReadPosition == message.position)

            // Removed from the group: the member's feed says delete, and nothing of it follows.
            try await services.chat.remove(cast.member, from: group.id, as: cast.admin)
            _ = try await services.chat.send(to: group.id, text: "Just us now", as: cast.admin)
            let (removedLog, _) = try await Self.pull(services, cast.community, cursor: memberNext, as: cast.member)
            let groupChanges = removedLog.filter { $0.id == group.id.uuid || ($0.data as? ChatMessage)?.conversationID == group.id }
            #expect(groupChanges.map(\.op) == [.delete], "\(groupChanges.map { "\($0.entity) \($0.op)" })")
        }
    }

    @Test(
        "a message is pushed to participants without a live socket, not the sender, not the muted; the badge is the unread total; reading clears it")
    func pushes() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await ChatTests.setUp(services)
            let away = try await services.users.create(email: "away@example.com", displayName: "Ava Away").id
            _ = try await services.members.add(away, to: cast.community, as: cast.admin)
            for (index, user) in [cast.admin, cast.member, third, away].enumerated() {
                _ = try await services.devices.register(
                    token: String(repeating: String(index + 1), count: 64), environment: .sandbox, bundleID: "app.orbitcove.ios", locale: nil,
                    as: user)
            }
            let everyone = try #require(try await services.chat.list(as: cast.admin).items.first { $0.kind == .community })
            // The member has a live socket; the third muted the conversation; `away` is away.
            try await services.chat.socketOpened(UUID(), of: cast.member, on: UUID())
            _ = try await services.chat.mute(everyone.id, until: Date().addingTimeInterval(3600), as: third)
            _ = try await services.notifications.deliverPending(using: Recorder())  // earlier notifications (joining)

            let (first, _) = try await services.chat.send(to: everyone.id, text: "Bus leaves at 8", as: cast.admin)
            _ = try await services.chat.send(to: everyone.id, text: "Bring water", as: cast.admin)
            let recorder = Recorder()
            let report = try await services.notifications.deliverPending(using: recorder)
            #expect(report.sent == 2, "\(report)")
            #expect(await recorder.tokens == [String(repeating: "4", count: 64), String(repeating: "4", count: 64)])
            let unreadOther = try await services.notifications.list(unreadOnly: true, as: away).items.filter { $0.type != .chatMessage }.count
            #expect(await recorder.badges.sorted() == [unreadOther + 2, unreadOther + 2])
            let pushed = try await services.notifications.list(as: away).items.filter { $0.type == .chatMessage }
            #expect(pushed.count == 2 && pushed.allSatisfy { $0.title == "Ada Admin in Tigers U10" })

            // Reading the first reads its push; the second stays unread.
            _ = try await services.chat.mark(.read, upTo: first.id, in: everyone.id, as: away)
            let unread = try await services.notifications.list(unreadOnly: true, as: away).items.filter { $0.type == .chatMessage }
            #expect(unread.map(\.body) == ["Bring water"])
        }
    }

    @Test(
        "presence: online while a socket is open, last seen when the last closes, a stale socket (its server stopped) ends; hidden on request; co-members only"
    )
    func presence() async throws {
        try await withServices { services, database in
            let (cast, _) = try await ChatTests.setUp(services)
            let server = UUID()
            let (phone, tablet) = (UUID(), UUID())
            try await services.chat.socketOpened(phone, of: cast.member, on: server)
            try await services.chat.socketOpened(tablet, of: cast.member, on: server)
            #expect(try await services.chat.presence(of: cast.member, as: cast.admin).online)
            try await services.chat.socketClosed(phone)
            #expect(try await services.chat.presence(of: cast.member, as: cast.admin).online)
            try await services.chat.socketClosed(tablet)
            let away = try await services.chat.presence(of: cast.member, as: cast.admin)
            #expect(!away.online && away.visible && away.lastSeenAt != nil)

            // A socket whose server stopped refreshing it: offline after 90 s, cleared after 5 minutes.
            try await services.chat.socketOpened(UUID(), of: cast.member, on: UUID())
            try await database.withConnection { connection in
                try await connection.query("UPDATE live_connections SET seen_at = now() - interval '10 minutes' WHERE user_id = \(cast.member)")
            }
            #expect(try await services.chat.presence(of: cast.member, as: cast.admin).online == false)
            try await services.chat.refreshSockets(on: server)
            let stale = try await database.withConnection {
                try await $0.query("SELECT count(*)::int AS n FROM live_connections").single().decode("n", as: Int32.self)
            }
            #expect(stale == 0)

            // Hidden: others see only that; oneself sees it all. Outsiders: not found.
            let hidden = try await services.chat.setPresenceVisible(false, as: cast.member)
            #expect(hidden.visible && hidden.lastSeenAt != nil)
            let seen = try await services.chat.presence(of: cast.member, as: cast.admin)
            #expect(!seen.visible && !seen.online && seen.lastSeenAt == nil)
            #expect(await serviceError { try await services.chat.presence(of: cast.member, as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.chat.presence(of: cast.member, as: cast.former) }?.code == .notFound)
        }
    }

    @Test(
        "delivered marks written together raise each participant's watermark once, as one statement: one change of the conversation, one notification per 100 participants; their receipts come at most 100 a message"
    )
    func deliveredTogether() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var people = [cast.admin, cast.member]
            for index in 0..<148 {
                let user = try await services.users.create(email: "p\(index)@example.com", displayName: "P\(index)").id
                _ = try await services.members.add(user, to: cast.community, as: cast.admin)
                people.append(user)
            }
            let conversation = try #require(try await services.chat.list(in: cast.community, as: cast.admin).items.first { $0.kind == .community })
            let first = try await services.chat.send(to: conversation.id, text: "Nets at 5", as: cast.admin).message
            let second = try await services.chat.send(to: conversation.id, text: "Cones too", as: cast.admin).message
            // Each mark twice, the later message's first: the watermark is the highest.
            let marks = people.flatMap { user in
                [second, first].map { DeliveredMark(user: user, conversation: conversation.id, message: $0.id) }
            }
            let listener = try await PostgresConnection.connect(database.configuration)
            try await listener.query("LISTEN orbit_chat")
            let logged = { () async throws -> Int in
                try await database.withConnection { connection in
                    try await connection.query(
                        "SELECT count(*) FROM changes WHERE entity = 'conversation' AND entity_id = \(conversation.id) AND user_id IS NULL"
                    ).single().decode(Int.self)
                }
            }
            let before = try await logged()
            #expect(try await services.chat.markDelivered(marks) == 150)
            #expect(try await logged() == before + 1, "the conversation once for the statement, not once a row")
            var notes: [PostgresNotification] = []
            // Delivered at commit; waited for (at most 10 s) as they arrive.
            for _ in 0..<200 where notes.flatMap({ ChatEvent.events(payload: $0.payload) }).count < 150 {
                notes += try await listener.notifications(waitingUpTo: .milliseconds(50))
            }
            await listener.close()
            #expect(notes.count == 2, "100 participants a notification")
            #expect(Set(notes.flatMap { ChatEvent.events(payload: $0.payload) }) == Set(people.map { .participant(conversation.id, $0) }))
            #expect(ChatEvent.events(payload: "\(conversation.id) participants not-a-user") == [])
            #expect(try await services.chat.markDelivered(marks) == 0)
            let messages = try await services.chat.liveMessages(
                for: people.map { .participant(conversation.id, $0) }, among: people)
            let receipts = messages.compactMap(\.message.receipts)
            #expect(receipts.map(\.count) == [100, 50])
            #expect(Set(receipts.joined().map(\.userID)) == Set(people))
            #expect(receipts.joined().allSatisfy { $0.deliveredPosition == second.position })
        }
    }
}
