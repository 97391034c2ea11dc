import Foundation
import OrbitAPI
import OrbitCore
import OrbitScaleData
import Testing

/// The feed writes its JSON by hand (`DirectJSON`); these tests hold it to the bytes its
/// `encode(to:)` produces, so the two cannot drift apart.
@Suite("Hand-written JSON of the feed")
struct DirectJSONTests {
    /// A post decoded from the smallest JSON its `Decodable` accepts, then varied field by field.
    static func template() throws -> FeedPost {
        let id = "00000000-0000-4000-8000-000000000001"
        let json = """
            {"id":"\(id)","community_id":"\(id)","author_id":"\(id)","type":"text","content":null,"content_encrypted":null,"encryption_version":0,"media_urls":[],
            "is_pinned":false,"is_announcement":false,"linked_event_id":null,"poll_data":null,"editable_until":0,
            "reaction_counts":{},"comment_count":0,"created_at":0,"updated_at":0,"my_reaction":null,"my_votes":[],
            "mentioned_user_ids":[],"poll_results":null}
            """
        return try JSONDecoder().decode(FeedPost.self, from: Data(json.utf8))
    }

    /// Texts that exercise escaping: quotes, backslashes, controls, slashes, multi-byte.
    static let texts = [
        "", "plain", "quote \" backslash \\ slash /", "line\nbreak\r\ttab\u{01}\u{1F}", "é 🐯 \u{2028} ünïcödé", "a\"b",
        String(repeating: "x", count: 300),
    ]

    static func randomPost(_ random: inout some RandomNumberGenerator, template: FeedPost) -> FeedPost {
        func pick<T>(_ values: [T]) -> T { values[Int.random(in: 0..<values.count, using: &random)] }
        func date() -> Date {
            // Whole microseconds (what PostgreSQL stores), from before 1970 to after 2100.
            Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000_000_000...5_000_000_000_000_000, using: &random)) / 1_000_000)
        }
        func maybe() -> Bool { Bool.random(using: &random) }
        var post = template
        post.id = PostID.random()
        post.communityID = CommunityID.random()
        post.authorID = UserID.random()
        post.type = pick(PostType.allCases)
        post.content = maybe() ? pick(texts) : nil
        post.contentEncrypted = maybe() ? Data(pick(texts).utf8).base64EncodedString() : nil
        post.encryptionVersion = post.contentEncrypted == nil ? 0 : Int.random(in: 1...1_000_000, using: &random)
        post.mediaURLs = (0..<Int.random(in: 0...3, using: &random)).map { _ in "https://example.com/m/\(pick(texts))" }
        post.isPinned = maybe()
        post.isAnnouncement = maybe()
        post.linkedEventID = maybe() ? EventID.random() : nil
        post.pollData =
            maybe()
            ? Poll(
                question: pick(texts), options: (0..<Int.random(in: 2...20, using: &random)).map { "\(pick(texts)) \($0)" }, allowMultiple: maybe(),
                closesAt: maybe() ? date() : nil)
            : nil
        post.editableUntil = date()
        post.reactionCounts = Dictionary(
            uniqueKeysWithValues: ReactionType.allCases.filter { _ in maybe() }.map { ($0.rawValue, Int.random(in: 0...100_000, using: &random)) })
        if maybe() { post.reactionCounts[pick(texts)] = -1 }
        post.commentCount = pick([0, 1, 9, 10, 12_345, Int.max])
        post.createdAt = date()
        post.updatedAt = date()
        post.myReaction = maybe() ? pick(ReactionType.allCases) : nil
        post.myVotes = (0..<Int.random(in: 0...3, using: &random)).map { _ in Int.random(in: 0...19, using: &random) }
        post.mentionedUserIDs = (0..<Int.random(in: 0...3, using: &random)).map { _ in UserID.random() }
        post.pollResults = maybe() ? (0..<Int.random(in: 2...20, using: &random)).map { _ in Int.random(in: 0...1000, using: &random) } : nil
        return post
    }

    @Test("feed pages written by hand are the bytes their encode(to:) writes, for 500 generated pages")
    func feedPagesMatchTheirEncodable() throws {
        var random = SplitMix64(seed: 19)
        let template = try Self.template()
        for round in 0..<500 {
            let posts = (0..<Int.random(in: 0...25, using: &random)).map { _ in Self.randomPost(&random, template: template) }
            let page = FeedPage(items: posts, nextCursor: round.isMultiple(of: 3) ? nil : "djEuMC4xNzA5MjEwMDk2NTAwMDAw")
            let direct = try ResponseJSONEncoder.encode(page)
            let encodable = try ResponseJSONEncoder.encode(page, directJSON: false)
            guard direct == encodable else {
                let at = zip(direct, encodable).prefix { $0 == $1 }.count
                Issue.record(
                    """
                    round \(round): the bytes differ at \(at):
                    by hand:  …\(String(decoding: direct[max(0, at - 80)..<min(direct.count, at + 40)], as: UTF8.self))
                    encodable: …\(String(decoding: encodable[max(0, at - 80)..<min(encodable.count, at + 40)], as: UTF8.self))
                    """)
                return
            }
            // A post alone (GET /posts/{id}) and a list of posts too.
            if let first = posts.first {
                #expect(
                    String(decoding: try ResponseJSONEncoder.encode(first), as: UTF8.self)
                        == String(decoding: try ResponseJSONEncoder.encode(first, directJSON: false), as: UTF8.self))
            }
            #expect(
                String(decoding: try ResponseJSONEncoder.encode(posts), as: UTF8.self)
                    == String(decoding: try ResponseJSONEncoder.encode(posts, directJSON: false), as: UTF8.self))
        }
    }

    @Test("the hand-written page is valid JSON that reads back into the same page")
    func theHandWrittenPageReadsBack() throws {
        var random = SplitMix64(seed: 7)
        let template = try Self.template()
        let page = FeedPage(items: (0..<20).map { _ in Self.randomPost(&random, template: template) }, nextCursor: "abc")
        let object = try JSONSerialization.jsonObject(with: Data(try ResponseJSONEncoder.encode(page))) as? [String: Any]
        let items = try #require(object?["items"] as? [[String: Any]])
        #expect(items.count == 20)
        #expect(items.map { $0["id"] as? String } == page.items.map { $0.id.description })
        #expect(items.map { $0["content"] as? String } == page.items.map(\.content))
        #expect(object?["next_cursor"] as? String == "abc")
    }
}
