package import Foundation

/// One thing a search found (docs/search.md): what kind of thing it is, which one, what a client
/// opens to show it, and a snippet of its text with the matched words marked.
package struct SearchHit: Sendable, Codable, Equatable {
    package enum Kind: String, Sendable, Codable, CaseIterable {
        case post, comment, event, expense, message
    }

    /// A matched word in `snippet`: `length` UTF-16 code units from `start` (an `NSRange`, a
    /// JavaScript string's indices).
    package struct Highlight: Sendable, Codable, Equatable {
        package var start: Int
        package var length: Int

        package init(start: Int, length: Int) {
            self.start = start
            self.length = length
        }
    }

    package var kind: Kind
    /// The row found: a post, comment, event, expense (transaction) or chat message id.
    package var id: UUID
    /// What a client opens to show it: a comment's post, a message's conversation; the row
    /// itself for the others.
    package var linkID: UUID
    /// A few words around the best match, without markup.
    package var snippet: String
    package var highlights: [Highlight]
    /// How well it matched (higher is better; PostgreSQL's `ts_rank_cd`): the order of the list.
    package var rank: Double
    package var createdAt: Date

    package init(
        kind: Kind, id: UUID, linkID: UUID, snippet: String, highlights: [Highlight], rank: Double, createdAt: Date
    ) {
        self.kind = kind
        self.id = id
        self.linkID = linkID
        self.snippet = snippet
        self.highlights = highlights
        self.rank = rank
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case kind, id, linkID = "link_id", snippet, highlights, rank, createdAt = "created_at"
    }

    /// The marks `ts_headline` puts around each matched word (control characters that are
    /// removed from the text before it is marked, so they never come from a user).
    static let startMark: Unicode.Scalar = "\u{2}"
    static let stopMark: Unicode.Scalar = "\u{3}"

    /// `marked` (a headline with `startMark`/`stopMark` around matches) as plain text and the
    /// ranges of the matches in it.
    static func unmark(_ marked: String) -> (text: String, highlights: [Highlight]) {
        var text = String.UnicodeScalarView()
        var highlights: [Highlight] = []
        var offset = 0
        var start: Int?
        for scalar in marked.unicodeScalars {
            switch scalar {
            case startMark:
                start = offset
            case stopMark:
                if let begun = start, offset > begun {
                    // Adjacent matched words ("<b>a</b> <b>b</b>") stay separate ranges.
                    highlights.append(Highlight(start: begun, length: offset - begun))
                }
                start = nil
            default:
                text.append(scalar)
                offset += scalar.utf16.count
            }
        }
        return (String(text), highlights)
    }
}
