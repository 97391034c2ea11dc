import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Search: what a member finds, ranked, marked and paged")
struct SearchTests {
    /// The ids `services.search` finds for `text`, as `user`, over every page.
    private func found(
        _ text: String, in community: CommunityID, as user: UserID, _ services: OrbitServices, limit: Int = 50
    ) async throws -> [SearchHit] {
        var hits: [SearchHit] = []
        var cursor: String?
        repeat {
            let page = try await services.search.search(community, for: text, limit: limit, cursor: cursor, as: user)
            hits += page.items
            cursor = page.nextCursor
        } while cursor != nil
        return hits
    }

    @Test("posts, comments, events, expenses and messages are found, each with its kind, link and marked snippet")
    func everyKind() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "Bring the orange kit on Saturday"), as: cast.member)
            let comment = try await services.feed.addComment(to: post.id, content: "The orange socks too?", as: cast.admin)
            let event = try await services.events.create(
                in: cast.community,
                EventDraft(title: "Orange cup final", startsAt: Date().addingTimeInterval(86_400), locationName: "North field"),
                as: cast.admin)
            let expense = try await services.expenses.addExpense(
                in: cast.community, description: "Orange slices for half time", total: try dollars("12.00"), paidBy: cast.admin,
                split: .equal([cast.admin, cast.member]), as: cast.admin)
            let (conversation, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (message, _) = try await services.chat.send(to: conversation.id, text: "Have you seen the orange bag?", as: cast.admin)

            let hits = try await found("orange", in: cast.community, as: cast.member, services)
            let byKind = Dictionary(grouping: hits, by: \.kind)
            #expect(Set(byKind.keys) == Set(SearchHit.Kind.allCases))
            #expect(byKind[.post]?.map(\.id) == [post.id.uuid] && byKind[.post]?.first?.linkID == post.id.uuid)
            #expect(byKind[.comment]?.map(\.id) == [comment.id.uuid] && byKind[.comment]?.first?.linkID == post.id.uuid)
            #expect(byKind[.event]?.map(\.id) == [event.id.uuid] && byKind[.event]?.first?.linkID == event.id.uuid)
            #expect(byKind[.expense]?.map(\.id) == [expense.id.uuid])
            #expect(byKind[.message]?.map(\.id) == [message.id.uuid] && byKind[.message]?.first?.linkID == conversation.id.uuid)
            // Ranked: best first; a title's word (the event's) weighs more than a body's (the post's).
            #expect(hits.map(\.rank) == hits.map(\.rank).sorted(by: >))
            #expect((byKind[.event]?.first?.rank ?? 0) > (byKind[.post]?.first?.rank ?? 0))
            // The snippet is plain text; each highlight covers one matched word in it.
            for hit in hits {
                #expect(!hit.highlights.isEmpty, "\(hit.kind)")
                let utf16 = Array(hit.snippet.utf16)
                for highlight in hit.highlights {
                    let word = String(decoding: utf16[highlight.start..<(highlight.start + highlight.length)], as: UTF16.self)
                    #expect(word.lowercased() == "orange", "\(hit.kind): \(hit.snippet)")
                }
            }
        }
    }

    @Test("web search syntax: all words, a quoted phrase, or, and -word")
    func syntax() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            func post(_ text: String) async throws -> UUID {
                try await services.feed.createPost(in: cast.community, PostDraft(content: text), as: cast.admin).id.uuid
            }
            let red = try await post("red shirt for the home game")
            let blue = try await post("blue shirt for the away game")
            let both = try await post("game day: shirt red, socks blue")
            func ids(_ text: String) async throws -> Set<UUID> {
                Set(try await found(text, in: cast.community, as: cast.member, services).map(\.id))
            }
            #expect(try await ids("shirt game") == [red, blue, both])
            #expect(try await ids("red shirt") == [red, both])
            #expect(try await ids("\"red shirt\"") == [red])
            #expect(try await ids("home or away") == [red, blue])
            #expect(try await ids("shirt -blue") == [red])
            #expect(try await ids("nothing-like-this").isEmpty)
        }
    }

    @Test("accents and case never matter, in the text or in the query")
    func accents() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let café = try await services.feed.createPost(in: cast.community, PostDraft(content: "Meet at the Café Zürich"), as: cast.admin)
            let plain = try await services.feed.createPost(in: cast.community, PostDraft(content: "meet at the cafe zurich"), as: cast.admin)
            for query in ["cafe zurich", "CAFÉ ZÜRICH", "Café", "zürich"] {
                let ids = Set(try await found(query, in: cast.community, as: cast.member, services).map(\.id))
                #expect(ids == [café.id.uuid, plain.id.uuid], "\(query)")
            }
            // Words of letters and digits too.
            let room = try await services.feed.createPost(in: cast.community, PostDraft(content: "Salle Café1 at noon"), as: cast.admin)
            #expect(try await found("cafe1", in: cast.community, as: cast.member, services).map(\.id) == [room.id.uuid])
        }
    }

    @Test("the community's language stems words; changing it re-indexes what is there, and is no edit of it")
    func language() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "The kids were running laps"), as: cast.admin)
            // Unset: `simple`, words as written.
            #expect(try await found("run", in: cast.community, as: cast.member, services).isEmpty)
            #expect(try await found("running", in: cast.community, as: cast.member, services).map(\.id) == [post.id.uuid])
            let before = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT p.updated_at, (SELECT count(*) FROM changes) AS changes FROM posts p WHERE p.id = \(post.id)"
                ).first.map { (try $0.decode("updated_at", as: Date.self), try $0.decode("changes", as: Int64.self)) }
            }

            _ = try await services.communities.update(cast.community, settings: CommunitySettings(language: "english"), as: cast.admin)
            #expect(try await found("run", in: cast.community, as: cast.member, services).map(\.id) == [post.id.uuid])
            #expect(try await found("runs", in: cast.community, as: cast.member, services).map(\.id) == [post.id.uuid])
            let after = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT p.updated_at, (SELECT count(*) FROM changes) AS changes FROM posts p WHERE p.id = \(post.id)"
                ).first.map { (try $0.decode("updated_at", as: Date.self), try $0.decode("changes", as: Int64.self)) }
            }
            // The post was not edited: same updated_at, and the only change logged is the community's.
            #expect(after?.0 == before?.0)
            #expect(after?.1 == (before?.1 ?? 0) + 1)

            let refused = await serviceError {
                try await services.communities.update(cast.community, settings: CommunitySettings(language: "klingon"), as: cast.admin)
            }
            #expect(refused?.field == "settings.language")
        }
    }

    @Test("row-level security decides: a non-participant never finds a message, a non-member finds nothing")
    func permissions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let third = try await services.users.create(email: "third@example.com", displayName: "Thea Third").id
            _ = try await services.members.add(third, to: cast.community, as: cast.admin)
            let (direct, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (message, _) = try await services.chat.send(to: direct.id, text: "the secret plan for the party", as: cast.admin)
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "the public plan for the party"), as: cast.admin)

            let member = try await found("secret plan", in: cast.community, as: cast.member, services)
            #expect(member.map(\.id) == [message.id.uuid])
            #expect(try await found("secret plan", in: cast.community, as: third, services).isEmpty)
            #expect(try await found("plan party", in: cast.community, as: third, services).map(\.kind) == [.post])
            for stranger in [cast.outsider, cast.former] {
                let refused = await serviceError { try await services.search.search(cast.community, for: "plan", as: stranger) }
                #expect(refused?.code == .notFound)
            }
        }
    }

    @Test("deleted posts, their comments, deleted messages and encrypted content are never found")
    func neverFound() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let post = try await services.feed.createPost(in: cast.community, PostDraft(content: "marmalade recipe"), as: cast.member)
            _ = try await services.feed.addComment(to: post.id, content: "more marmalade please", as: cast.admin)
            let (conversation, _) = try await services.chat.start(in: cast.community, kind: .direct, with: [cast.member], as: cast.admin)
            let (deleted, _) = try await services.chat.send(to: conversation.id, text: "marmalade on toast", as: cast.admin)
            let (encrypted, _) = try await services.chat.send(to: conversation.id, text: "marmalade in a jar", as: cast.admin)
            #expect(try await found("marmalade", in: cast.community, as: cast.member, services).count == 4)

            try await services.feed.deletePost(post.id, as: cast.member)
            try await services.chat.delete(deleted.id, as: cast.admin)
            // Ciphertext in place of the text (E2E, docs/e2e.md): nothing of it is indexed.
            try await database.withConnection { connection in
                // Where end-to-end encryption is on, with key version 1.
                try await connection.query(
                    "UPDATE communities SET settings = settings || '{\"endToEndEncryption\": true}'::jsonb WHERE id = \(cast.community)")
                try await connection.query(
                    "INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version) VALUES (\(cast.community), \(cast.admin), '\\x01', 1)"
                )
                try await connection.query(
                    "UPDATE messages SET text = NULL, content_encrypted = '\\x0102'::bytea, encryption_version = 1 WHERE id = \(encrypted.id)")
                let vectors = try await connection.query(
                    "SELECT count(*) AS n FROM messages WHERE id IN (\(deleted.id), \(encrypted.id)) AND search_vector IS NOT NULL")
                #expect(try vectors.first?.decode("n", as: Int64.self) == 0)
            }
            #expect(try await found("marmalade", in: cast.community, as: cast.member, services).isEmpty)
        }
    }

    @Test("pages follow the ranking without repeats or gaps; a cursor of another query is refused; bad input is named")
    func paging() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            var ids: Set<UUID> = []
            for index in 0..<7 {
                // More "kite" in a post ranks it higher.
                let text = Array(repeating: "kite", count: 1 + index % 3).joined(separator: " ") + " flying day \(index)"
                ids.insert(try await services.feed.createPost(in: cast.community, PostDraft(content: text), as: cast.admin).id.uuid)
            }
            let paged = try await found("kite", in: cast.community, as: cast.member, services, limit: 2)
            let whole = try await found("kite", in: cast.community, as: cast.member, services)
            #expect(paged.map(\.id) == whole.map(\.id))
            #expect(Set(paged.map(\.id)) == ids && paged.count == 7)
            #expect(paged.map(\.rank) == paged.map(\.rank).sorted(by: >))

            let first = try await services.search.search(cast.community, for: "kite", limit: 2, as: cast.member)
            let other = await serviceError {
                try await services.search.search(cast.community, for: "flying", limit: 2, cursor: first.nextCursor, as: cast.member)
            }
            #expect(other?.field == "cursor")
            #expect(await serviceError { try await services.search.search(cast.community, for: "  ", as: cast.member) }?.field == "q")
            // A control character is refused by name, as openapi.yaml's pattern says; a NUL is not
            // left for PostgreSQL to refuse, nor a tab to mean a space.
            for text in ["\u{0}kite", "kite\tflying", "kite\u{7F}"] {
                #expect(await serviceError { try await services.search.search(cast.community, for: text, as: cast.member) }?.field == "q")
            }
            #expect(
                await serviceError {
                    try await services.search.search(cast.community, for: String(repeating: "a", count: 201), as: cast.member)
                }?.field == "q")
            #expect(await serviceError { try await services.search.search(cast.community, for: "kite", limit: 0, as: cast.member) }?.field == "limit")
            // Only excluded words name nothing to find.
            #expect(try await found("-kite", in: cast.community, as: cast.member, services).isEmpty)
            // A word too long for the index (over 2 kB) is left out of it; the rest of the post is found.
            let long = try await services.feed.createPost(
                in: cast.community, PostDraft(content: "kite " + String(repeating: "a", count: 2040)), as: cast.admin)
            #expect(try await found("kite", in: cast.community, as: cast.member, services).contains { $0.id == long.id.uuid })
        }
    }

    @Test("the languages the setting accepts are exactly the configurations the database has")
    func languagesMatchTheDatabase() async throws {
        try await withServices { _, database in
            let configured = try await database.withConnection { connection in
                try await connection.query("SELECT cfgname::text AS name FROM pg_ts_config WHERE cfgnamespace = 'orbit'::regnamespace")
                    .map { try $0.decode("name", as: String.self) }
            }
            #expect(Set(configured) == Set(CommunitySettings.searchLanguages))
        }
    }
}
