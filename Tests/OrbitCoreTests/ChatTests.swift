import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Chat: conversations, messages, receipts and who may reach them")
struct ChatTests {
    /// The cast with one more member, and the community's own conversation.
    static func setUp(_ services: OrbitServices) async throws -> (Cast, UserID) {
        let cast = try await Cast.make(services)
        let third = try await services.users.create(email: "third@example.com", displayName: "Tia Third").id
        _ = try await services.members.add(third, to: cast.community, as: cast.admin)
        return (cast, third)
    }

    @Test("every community has its conversation with every active member in it; a direct conversation is one per pair")
    func conversations() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await Self.setUp(services)
            let mine = try await services.chat.list(as: cast.member)
            let community = try #require(mine.items.first { $0.kind == .community })
            #expect(community.communityID == cast.community)
            #expect(community.participantCount == 3)  // admin, member, third; not the former member
            #expect(try await services.chat.list(as: cast.former).items.isEmpty)
            #expect(try await services.chat.list(as: cast.outsider).items.isEmpty)

            let (direct, created) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.admin], as: cast.member)
            #expect(created)
            #expect(direct.withUserID == cast.admin)
            let (again, createdAgain) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            #expect(!createdAgain)
            #expect(again.id == direct.id)
            #expect(again.withUserID == cast.member)

            let (group, _) = try await services.chat.start(
                in: cast.community, kind: .group, with: [cast.admin, third], title: "Carpool", as: cast.member)
            #expect(group.participantCount == 3)
            #expect(group.title == "Carpool")

            // Refused: a non-member, the former member, a direct with oneself, too many people.
            #expect(
                await serviceError { try await services.chat.start(in: cast.community, kind: .direct, with: [cast.outsider], as: cast.member) }?
                    .code == .conflict)
            #expect(
                await serviceError { try await services.chat.start(in: cast.community, kind: .group, with: [cast.former], as: cast.member) }?
                    .code == .conflict)
            #expect(
                await serviceError { try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.member) }?
                    .field == "user_ids")
            let crowd = (0..<256).map { _ in UserID.random() }
            #expect(
                await serviceError { try await services.chat.start(in: cast.community, kind: .group, with: crowd, as: cast.member) }?.field
                    == "user_ids")
            #expect(
                await serviceError { try await services.chat.start(in: cast.community, kind: .direct, with: [cast.admin], as: cast.outsider) }?
                    .code == .notFound)
        }
    }

    @Test("receipts come from watermarks: sent, delivered when every other participant has it, read likewise; unread counts")
    func receipts() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await Self.setUp(services)
            let (group, _) = try await services.chat.start(
                in: cast.community, kind: .group, with: [cast.admin, third], title: "Kit", as: cast.member)
            var sent: [ChatMessage] = []
            for text in ["one", "two", "three"] {
                sent.append(try await services.chat.send(to: group.id, text: text, as: cast.member).message)
            }
            #expect(sent.map(\.position) == [1, 2, 3])
            #expect(sent.allSatisfy { $0.status == .sent })
            #expect(try await services.chat.get(group.id, as: cast.admin).unreadCount == 3)
            #expect(try await services.chat.get(group.id, as: cast.member).unreadCount == 0)
            #expect(try await services.chat.get(group.id, as: cast.admin).lastMessage?.text == "three")

            // The admin's phone has them all, the third's up to "two"; the admin read "one".
            _ = try await services.chat.mark(.delivered, upTo: sent[2].id, in: group.id, as: cast.admin)
            _ = try await services.chat.mark(.delivered, upTo: sent[1].id, in: group.id, as: third)
            let afterRead = try await services.chat.mark(.read, upTo: sent[0].id, in: group.id, as: cast.admin)
            #expect(afterRead.unreadCount == 2)
            var history = try await services.chat.history(of: group.id, as: cast.member)
            #expect(history.items.map(\.text) == ["three", "two", "one"])
            #expect(history.items.map(\.status) == [.sent, .delivered, .delivered])
            // The reader sees no status on others' messages.
            #expect(try await services.chat.history(of: group.id, as: cast.admin).items.allSatisfy { $0.status == nil })

            // Read by both: read. A watermark never goes back.
            _ = try await services.chat.mark(.read, upTo: sent[2].id, in: group.id, as: third)
            _ = try await services.chat.mark(.read, upTo: sent[2].id, in: group.id, as: cast.admin)
            _ = try await services.chat.mark(.read, upTo: sent[0].id, in: group.id, as: cast.admin)
            history = try await services.chat.history(of: group.id, as: cast.member)
            #expect(history.items.map(\.status) == [.read, .read, .read])
            #expect(try await services.chat.get(group.id, as: cast.admin).unreadCount == 0)

            // Pages, newest first, by cursor.
            let first = try await services.chat.history(of: group.id, limit: 2, as: third)
            #expect(first.items.map(\.text) == ["three", "two"])
            let second = try await services.chat.history(of: group.id, limit: 2, cursor: first.nextCursor, as: third)
            #expect(second.items.map(\.text) == ["one"])
            #expect(second.nextCursor == nil)
        }
    }

    @Test("the same client_message_id sent 10 times at once stores one message")
    func resendsStoreOne() async throws {
        try await withServices { services, database in
            let (cast, _) = try await Self.setUp(services)
            let community = try #require(try await services.chat.list(as: cast.member).items.first)
            let results = try await withThrowingTaskGroup(of: (MessageID, Bool).self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        let (message, created) = try await services.chat.send(
                            to: community.id, text: "On my way", clientMessageID: "phone-42", as: cast.member)
                        return (message.id, created)
                    }
                }
                return try await group.reduce(into: [(MessageID, Bool)]()) { $0.append($1) }
            }
            #expect(Set(results.map(\.0)).count == 1)
            #expect(results.filter(\.1).count == 1)
            let stored: Int64 = try await database.withConnection {
                try await $0.query("SELECT count(*) FROM messages WHERE client_message_id = 'phone-42'").single().decode(0, as: Int64.self)
            }
            #expect(stored == 1)
            #expect(try await services.chat.get(community.id, as: cast.admin).unreadCount == 1)
            #expect(try await services.chat.history(of: community.id, as: cast.admin).items.map(\.position) == [1])
        }
    }

    @Test("only the sender edits, for 15 minutes; the sender deletes, and an admin in the community conversation")
    func editAndDelete() async throws {
        try await withServices { services, database in
            let (cast, third) = try await Self.setUp(services)
            let community = try #require(try await services.chat.list(as: cast.member).items.first)
            let message = try await services.chat.send(to: community.id, text: "Practice at 5", as: cast.member).message
            let edited = try await services.chat.edit(message.id, text: "Practice at 6", as: cast.member)
            #expect(edited.text == "Practice at 6")
            #expect(edited.editedAt != nil)
            #expect(await serviceError { try await services.chat.edit(message.id, text: "No", as: cast.admin) }?.code == .forbidden)
            let later = OrbitServices(pool: services.pool, now: { Date().addingTimeInterval(16 * 60) })
            #expect(await serviceError { try await later.chat.edit(message.id, text: "Too late", as: cast.member) }?.code == .forbidden)

            // Others may not delete it; an admin may, in the community conversation.
            #expect(await serviceError { try await services.chat.delete(message.id, as: third) }?.code == .forbidden)
            try await services.chat.delete(message.id, as: cast.admin)
            let gone = try #require(try await services.chat.history(of: community.id, as: cast.member).items.first)
            #expect(gone.deletedAt != nil)
            #expect(gone.text == nil)
            let preview = try await services.chat.get(community.id, as: cast.member).lastMessage
            #expect(preview?.id == message.id)
            #expect(preview?.text == nil)

            // In a group, an admin is one participant among others.
            let (group, _) = try await services.chat.start(in: cast.community, kind: .group, with: [cast.admin], title: "Two", as: cast.member)
            let inGroup = try await services.chat.send(to: group.id, text: "Secret", as: cast.member).message
            #expect(await serviceError { try await services.chat.delete(inGroup.id, as: cast.admin) }?.code == .forbidden)
            // Even past the service, the database refuses an update by someone else.
            let changed = try await database.withConnection { connection in
                try await connection.asApp(cast.admin.uuid) { connection in
                    try await connection.query("UPDATE messages SET text = 'x' WHERE id = \(inGroup.id)").affectedRows
                }
            }
            #expect(changed == 0)
        }
    }

    @Test("leaving the community, or being removed from a group, ends access at once")
    func accessEnds() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await Self.setUp(services)
            let (group, _) = try await services.chat.start(in: cast.community, kind: .group, with: [third], title: "Pair", as: cast.member)
            _ = try await services.chat.send(to: group.id, text: "Hi", as: third)
            let (direct, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [third], as: cast.admin)

            try await services.chat.remove(third, from: group.id, as: cast.member)
            #expect(await serviceError { try await services.chat.history(of: group.id, as: third) }?.code == .notFound)
            #expect(await serviceError { try await services.chat.send(to: group.id, text: "Back?", as: third) }?.code == .notFound)
            #expect(try await services.chat.list(as: third).items.map(\.id).contains(group.id) == false)

            try await services.members.leave(cast.community, as: third)
            #expect(try await services.chat.list(as: third).items.isEmpty)
            #expect(await serviceError { try await services.chat.history(of: direct.id, as: third) }?.code == .notFound)
            #expect(try await services.chat.get(direct.id, as: cast.admin).participantCount == 1)

            // Rejoining brings back the community conversation only.
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            #expect(try await services.chat.list(as: third).items.map(\.kind) == [.community])

            // Leaving: a group yes; the community conversation and a direct one, no.
            let (other, _) = try await services.chat.start(in: cast.community, kind: .group, with: [cast.admin], title: "X", as: cast.member)
            try await services.chat.leave(other.id, as: cast.admin)
            #expect(await serviceError { try await services.chat.get(other.id, as: cast.admin) }?.code == .notFound)
            #expect(try await services.chat.get(other.id, as: cast.member).participantCount == 1)
            let community = try #require(try await services.chat.list(in: cast.community, as: cast.member).items.first { $0.kind == .community })
            #expect(await serviceError { try await services.chat.leave(community.id, as: cast.member) }?.code == .conflict)
        }
    }

    @Test("the list is newest activity first, paged; mute is one's own")
    func listAndMute() async throws {
        try await withServices { services, _ in
            let (cast, third) = try await Self.setUp(services)
            let (a, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [third], as: cast.member)
            let (b, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.admin], as: cast.member)
            _ = try await services.chat.send(to: a.id, text: "latest", as: third)
            let first = try await services.chat.list(limit: 2, as: cast.member)
            #expect(first.items.map(\.id).first == a.id)
            let rest = try await services.chat.list(limit: 2, cursor: first.nextCursor, as: cast.member)
            #expect(Set((first.items + rest.items).map(\.id)).count == 3)
            #expect((first.items + rest.items).map(\.id).contains(b.id))

            let until = Date().addingTimeInterval(3600)
            let muted = try await services.chat.mute(a.id, until: until, as: cast.member)
            #expect(abs((muted.mutedUntil?.timeIntervalSince1970 ?? 0) - until.timeIntervalSince1970) < 0.001)
            #expect(try await services.chat.get(a.id, as: third).mutedUntil == nil)
        }
    }
}
