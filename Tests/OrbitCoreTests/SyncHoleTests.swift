import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

@testable import OrbitCore

/// The holes review found in the change feed (issue 38, item 1): each of these failed before it
/// was fixed.
@Suite("Sync: no silent gaps")
struct SyncHoleTests {
    @Test("a follower paging a window is refused (410) once compaction passes where it began, not only where the window began")
    func retentionMidWindow() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            for index in 1...12 {
                _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Backlog \(index)"), as: cast.admin)
            }
            // Between the follower's `since` (its last pull) and the window's snapshot (next pull).
            let between: Date = try await database.withConnection { try await $0.query("SELECT clock_timestamp() AS now").single().decode("now") }
            let first = try await services.sync.changes(of: cast.community, cursor: follower.cursor, limit: 4, as: cast.member)
            #expect(first.hasMore && first.changes.count == 4)
            // The retention job runs (30 days after `between`) while the follower is in the middle
            // of the window: the posts written before `between` are compacted away, the rest of
            // the window with them.
            var later = services
            later.now = { between.addingTimeInterval(Double(SyncService.retentionDays) * 86_400) }
            let report = try await later.lifecycle.runRetention()
            #expect((report.counts["changes"] ?? 0) >= 12)
            let resumed = await serviceError {
                try await services.sync.changes(of: cast.community, cursor: first.nextCursor, limit: 4, as: cast.member)
            }
            #expect(resumed?.code == .gone, "the rest of the window is gone; resuming must say so, not skip it")
        }
    }

    @Test("a member who leaves and rejoins gets everything again, including what did not change meanwhile")
    func leaveAndRejoin() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kept = try await services.feed.createPost(in: cast.community, PostDraft(content: "Unchanged while they were away"), as: cast.admin)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            #expect(follower.has(.post, kept.id.uuid))

            try await services.members.leave(cast.community, as: cast.member)
            try await follower.pull(services)
            #expect(follower.droppedCommunity && follower.copy.isEmpty)
            // Pulling again while away changes nothing and keeps a cursor that works.
            try await follower.pull(services)
            #expect(follower.copy.isEmpty)

            _ = try await services.members.add(cast.member, to: cast.community, as: cast.admin)
            try await follower.pull(services)
            #expect(follower.has(.post, kept.id.uuid), "the post written before they left comes again")
            #expect(follower.has(.community, cast.community.uuid))
            var fresh = Follower(cast.member, of: cast.community)
            try await fresh.pull(services)
            #expect(follower.copy == fresh.copy)
        }
    }

    @Test("a community deleted and restored comes back whole")
    func deletedAndRestored() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kept = try await services.feed.createPost(in: cast.community, PostDraft(content: "Still here after the restore"), as: cast.admin)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            try await services.communities.delete(cast.community, as: cast.admin)
            try await follower.pull(services)
            #expect(follower.droppedCommunity && follower.copy.isEmpty)
            _ = try await services.communities.restore(cast.community, as: cast.admin)
            try await follower.pull(services)
            #expect(follower.has(.post, kept.id.uuid) && follower.has(.community, cast.community.uuid))
        }
    }

    @Test("renaming a user or a family member reaches followers: the member and the expenses that show the name")
    func renames() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member)
            let tickets = try await services.expenses.addExpense(
                in: cast.community, description: "Tickets", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([.user(cast.admin), .user(cast.member), .familyMember(tim.id)]), as: cast.admin)
            var follower = Follower(cast.admin, of: cast.community)
            try await follower.pull(services)

            _ = try await services.users.updateProfile(displayName: "Maxine Member", as: cast.member)
            _ = try await services.family.rename(tim.id, to: "Timothy", as: cast.member)
            try await follower.pull(services)
            let memberID = try #require(
                try await services.members.list(of: cast.community, as: cast.admin).items.first { $0.userID == cast.member }?.id)
            #expect(follower.data(.member, memberID.uuid)?.contains("Maxine Member") == true, "the member shows the new name")
            #expect(follower.data(.expense, tickets.id.uuid)?.contains("Timothy") == true, "the expense shows the child's new name")
            var fresh = Follower(cast.admin, of: cast.community)
            try await fresh.pull(services)
            #expect(follower.copy == fresh.copy)
        }
    }

    @Test("many transactions in flight: every cursor the server issues is one it accepts, and their writes arrive when they commit")
    func manyTransactionsInFlight() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            var follower = Follower(cast.member, of: cast.community)
            try await follower.pull(services)
            var open: [PostgresConnection] = []
            var pending: [UUID] = []
            do {
                for index in 0..<40 {
                    let connection = try await database.connect()
                    open.append(connection)
                    let id = UUID()
                    try await connection.query("BEGIN")
                    try await connection.query(
                        "INSERT INTO posts (id, community_id, author_id, content) VALUES (\(id), \(cast.community), \(cast.admin), \("In flight \(index)"))"
                    )
                    pending.append(id)
                    _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Committed \(index)"), as: cast.admin)
                }
                // Small pages: each cursor carries two snapshots with every one of them in flight.
                try await follower.pull(services, limit: 3)
                #expect(pending.allSatisfy { !follower.has(.post, $0) })
                for connection in open { try await connection.query("COMMIT") }
            } catch {
                for connection in open { await connection.close() }
                throw error
            }
            for connection in open { await connection.close() }
            try await follower.pull(services, limit: 3)
            #expect(pending.allSatisfy { follower.has(.post, $0) })
            var fresh = Follower(cast.member, of: cast.community)
            try await fresh.pull(services)
            #expect(follower.copy == fresh.copy)
        }
    }
}

@Suite("Sync: cursors")
struct SyncCursorTests {
    static func snapshot(xmin: UInt64, inFlight count: Int) -> String {
        let xips = (0..<UInt64(count)).map { xmin + $0 * 3 }
        return "\(xmin):\(xmin + UInt64(count) * 3 + 5):" + xips.map(String.init).joined(separator: ",")
    }

    @Test("every kind of cursor comes back as it was issued")
    func roundTrip() throws {
        let cursors: [SyncCursor] = [
            .start,
            .state(mark: "100:120:100,105", entity: 3, after: UUID()),
            .state(mark: "7:7:", entity: 0, after: nil),
            .log(since: "3000000000:3000000100:3000000001", window: nil),
            .log(since: "100:120:100,105", window: .init(target: "150:170:151,160", xid: 149, seq: 123_456_789)),
            .log(since: "1:1:", window: .init(target: "1:1:", xid: 0, seq: -1)),
        ]
        for cursor in cursors {
            #expect(try SyncCursor(cursor.encoded) == cursor)
        }
        #expect(try SyncCursor(nil) == .start)
    }

    @Test("2,000 transactions in flight, twice: the cursor stays under the limit the server accepts (the first format did not)")
    func manyInFlight() throws {
        let since = Self.snapshot(xmin: 9_000_000_000, inFlight: 2000)
        let target = Self.snapshot(xmin: 9_000_000_600, inFlight: 2000)
        let cursor = SyncCursor.log(since: since, window: .init(target: target, xid: 9_000_000_700, seq: 42))
        #expect(cursor.encoded.count <= SyncCursor.maximumLength)
        #expect(try SyncCursor(cursor.encoded) == cursor)
        // The same position in the first format, checksummed as the server made it: the server
        // refuses it (its length), where the new format is read back above.
        let firstFormat = Self.firstFormat("s1|log|\(since)|1764000000500000|\(target)|9000000700|42")
        #expect(throws: ServiceError.self, "the first format would not have been accepted back") { try SyncCursor(firstFormat) }
    }

    /// A cursor of the first format, as the server issued it.
    static func firstFormat(_ body: String) -> String {
        let text = body + "|" + String(FeedCursor.checksum(body), radix: 36)
        return Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test("an edited, truncated or foreign cursor is refused; one of the first format still works")
    func refused() throws {
        let cursor = SyncCursor.log(since: "100:120:100,105", window: .init(target: "150:170:", xid: 149, seq: 3)).encoded
        for text in [String(cursor.dropLast()), String(cursor.dropLast(2)) + "AA", "bm90LWEtY3Vyc29y", "", "A", String(repeating: "A", count: 9000)] {
            #expect(throws: ServiceError.self, "\(text.prefix(40))") { try SyncCursor(text) }
        }
        let firstFormat = Self.firstFormat
        #expect(try SyncCursor(firstFormat("s1|log|100:120:100|55||0|-1")) == .log(since: "100:120:100", window: nil))
        #expect(try SyncCursor(firstFormat("s1|state|100:120:|55|2|")) == .state(mark: "100:120:", entity: 2, after: nil))
        #expect(
            try SyncCursor(firstFormat("s1|log|100:120:100|55|130:140:|120|4"))
                == .log(since: "100:120:100", window: .init(target: "130:140:", xid: 120, seq: 4)))
        // A snapshot whose in-flight ids are not below its xmax is not one PostgreSQL made.
        #expect(throws: ServiceError.self) { try SyncCursor(firstFormat("s1|log|100:120:130|55||0|-1")) }
    }
}
