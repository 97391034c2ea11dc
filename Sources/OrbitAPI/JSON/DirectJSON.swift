import Foundation
import OrbitCore

/// A response type that writes its own JSON, for the hottest responses: the generic `Encodable`
/// path costs about 100 ns per value through its containers (dynamic casts, existential boxes,
/// a key string per member), which made encoding a 10 KB feed page the largest cost a feed
/// request adds over the service call (`orbit-bench http`).
///
/// A conformance writes exactly the bytes its `encode(to:)` makes `ResponseJSONEncoder` write:
/// `DirectJSONTests` compares the two on generated values, so a field added to one and not the
/// other fails there.
protocol DirectJSON: JSONWritable, Encodable {
    func writeJSON(to output: inout JSONOutput)
}

extension DirectJSON {
    func write(to writer: JSONWriter, depth: Int, path: [any CodingKey]) throws {
        if writer.directJSON {
            writer.withOutput { writeJSON(to: &$0) }
        } else {
            try writer.writeEncoded(self, depth: depth, path: path)
        }
    }
}

/// JSON written straight into bytes, one value after another. A value after a value is
/// preceded by a comma, a value after a key or an opening bracket is not: `member` writes
/// `"key":` and the value methods write the value.
struct JSONOutput {
    var bytes: [UInt8]
    private var atStart = true

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    private mutating func separate() {
        if !atStart { bytes.append(UInt8(ascii: ",")) }
        atStart = false
    }

    mutating func beginObject() { open(UInt8(ascii: "{")) }
    mutating func endObject() { close(UInt8(ascii: "}")) }
    mutating func beginArray() { open(UInt8(ascii: "[")) }
    mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        atStart = true
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        atStart = false
    }

    /// `"key":` — keys are the models' coding keys: ASCII letters, digits and underscores,
    /// which need no escaping.
    mutating func member(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        atStart = true
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    mutating func int(_ value: Int) {
        separate()
        if (0..<10).contains(value) {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    mutating func string(_ value: String) {
        separate()
        JSONWriter.appendString(value, to: &bytes)
    }

    mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Lower case, as PostgreSQL prints UUIDs (`Identifier.description`). Formatted on the
    /// stack and appended at once: an append per byte checks the array's uniqueness each time.
    mutating func uuid(_ value: UUID) {
        separate()
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &text) { raw in
            let output = raw.bindMemory(to: UInt8.self)
            output[0] = UInt8(ascii: "\"")
            let length = value.writeLowercased(into: UnsafeMutableBufferPointer(rebasing: output[1...]))
            output[length + 1] = UInt8(ascii: "\"")
            bytes.append(contentsOf: output.prefix(length + 2))
        }
    }

    mutating func uuid(_ value: UUID?) {
        if let value { uuid(value) } else { null() }
    }

    mutating func date(_ value: Date) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        APIJSON.appendTimestamp(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    mutating func ints(_ values: [Int]) {
        beginArray()
        for value in values { int(value) }
        endArray()
    }

    /// An array of ids, written from the identifiers themselves (no array of UUIDs made first).
    mutating func ids<Subject>(_ values: [Identifier<Subject>]) {
        beginArray()
        for value in values { uuid(value.uuid) }
        endArray()
    }

    /// An object of integers in key order (`SortedJSONObject`'s rule).
    mutating func sortedInts(_ values: [String: Int]) {
        beginObject()
        for key in values.keys.sorted() {
            guard let value = values[key] else { continue }
            separate()
            JSONWriter.appendString(key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            atStart = true
            int(value)
        }
        endObject()
    }
}

// MARK: - The feed

extension FeedPage: DirectJSON {
    func writeJSON(to output: inout JSONOutput) {
        output.beginObject()
        output.member("items")
        output.beginArray()
        for post in items { post.writeJSON(to: &output) }
        output.endArray()
        output.member("next_cursor")
        output.string(nextCursor)
        output.endObject()
    }
}

extension FeedPost: DirectJSON {
    func writeJSON(to output: inout JSONOutput) {
        output.beginObject()
        output.member("id")
        output.uuid(id.uuid)
        output.member("community_id")
        output.uuid(communityID.uuid)
        output.member("author_id")
        output.uuid(authorID.uuid)
        output.member("type")
        output.string(type.rawValue)
        output.member("content")
        output.string(content)
        output.member("content_encrypted")
        output.string(contentEncrypted)
        output.member("encryption_version")
        output.int(encryptionVersion)
        output.member("media_urls")
        output.strings(mediaURLs)
        output.member("is_pinned")
        output.bool(isPinned)
        output.member("is_announcement")
        output.bool(isAnnouncement)
        output.member("linked_event_id")
        output.uuid(linkedEventID?.uuid)
        output.member("poll_data")
        if let pollData { pollData.writeJSON(to: &output) } else { output.null() }
        output.member("editable_until")
        output.date(editableUntil)
        output.member("reaction_counts")
        output.sortedInts(reactionCounts)
        output.member("comment_count")
        output.int(commentCount)
        output.member("created_at")
        output.date(createdAt)
        output.member("updated_at")
        output.date(updatedAt)
        output.member("my_reaction")
        output.string(myReaction?.rawValue)
        output.member("my_votes")
        output.ints(myVotes)
        output.member("mentioned_user_ids")
        output.ids(mentionedUserIDs)
        output.member("poll_results")
        if let pollResults { output.ints(pollResults) } else { output.null() }
        output.endObject()
    }
}

extension Poll: DirectJSON {
    /// The synthesized coding keys, as stored (spec "poll_data"); no `closesAt` when there is none.
    func writeJSON(to output: inout JSONOutput) {
        output.beginObject()
        output.member("question")
        output.string(question)
        output.member("options")
        output.strings(options)
        output.member("allowMultiple")
        output.bool(allowMultiple)
        if let closesAt {
            output.member("closesAt")
            output.date(closesAt)
        }
        output.endObject()
    }
}
