import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
package import OrbitCore

/// Entity tags (docs/sync.md, "Offline writes"): an entity's version is a digest of its JSON as
/// its GET writes it, so it changes exactly when what the client sees changes (a poll vote, a
/// split settled, a renamed member), whatever table the change was in. The change feed sends the
/// same tag with each upsert; updates and deletes take it back in `If-Match`.
enum EntityTags {
    /// `"` + 22 characters of base64url (128 bits of SHA-256) + `"`: a strong tag.
    static func tag(of bytes: [UInt8]) -> String {
        let digest = Data(SHA256.hash(data: bytes).prefix(16)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return "\"\(digest)\""
    }

    /// The tag of `value` as a GET of it would send it.
    static func tag(of value: any Encodable & Sendable) throws -> String {
        tag(of: try ResponseJSONEncoder.encode(value))
    }

    /// The tags of an `If-Match` or `If-None-Match` header: `["*"]`, or the listed tags, weak
    /// ones (`W/"…"`) with their prefix, so they never equal a strong one (`If-Match` compares
    /// strongly, RFC 9110, 13.1.1); nil when the header is not that grammar.
    static func list(_ header: String) -> [String]? {
        let bytes = Array(header.utf8)
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var index = 0
        func skipSpace() { while index < bytes.count, isSpace(bytes[index]) { index += 1 } }
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "*") {
            index += 1
            skipSpace()
            return index == bytes.count ? ["*"] : nil
        }
        // 1#entity-tag: tags read quote to quote (an etagc may be a comma), between commas and
        // optional whitespace (RFC 9110, 5.6.1 and 8.8.3).
        var tags: [String] = []
        while true {
            let start = index
            if bytes[index...].starts(with: Array("W/".utf8)) { index += 2 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            // etagc: visible ASCII but the double quote.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard bytes[index] > 0x20, bytes[index] < 0x7F else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
            tags.append(String(decoding: bytes[start..<index], as: UTF8.self))
            skipSpace()
            if index == bytes.count { return tags }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
            skipSpace()
        }
    }

    static let ifMatch = HTTPField.Name("If-Match")!
    static let ifNoneMatch = HTTPField.Name("If-None-Match")!
}

extension ChangePage {
    /// The page with each upsert's entity tag (`etag`), for the client's `If-Match` when it
    /// edits its copy offline. The API and `orbitctl sync pull` send the same.
    package func taggingUpserts() throws -> ChangePage {
        var page = self
        for index in page.changes.indices {
            if let data = page.changes[index].data { page.changes[index].etag = try EntityTags.tag(of: data) }
        }
        return page
    }
}

extension Request {
    /// Runs `write` (one update or delete of the entity `target`) under the request's
    /// `If-Match`, when it has one: the write happens only to that version, or the request is
    /// refused with 412 and the current version.
    func underIfMatch<Result: Sendable>(_ target: WritePrecondition.Target, _ write: () async throws -> Result) async throws -> Result {
        guard let header = headers[EntityTags.ifMatch] else { return try await write() }
        guard let accepted = EntityTags.list(header) else {
            throw APIProblem.validation(field: "If-Match", "If-Match must be * or a list of entity tags (\"…\").")
        }
        let precondition = WritePrecondition(target: target, accepted: accepted) { try EntityTags.tag(of: $0) }
        return try await RequestRunner.$writePrecondition.withValue(precondition) { try await write() }
    }
}

/// An entity as its GET returns it, with its `ETag`; a GET whose `If-None-Match` names that tag
/// gets 304 Not Modified without the body. Also the answer of an update, so that the client
/// learns the new version with the new state.
struct Tagged<Value: Encodable & Sendable>: ResponseGenerator {
    var value: Value
    init(_ value: Value) { self.value = value }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let bytes = try ResponseJSONEncoder.encode(value)
        let etag = EntityTags.tag(of: bytes)
        if request.method == .get || request.method == .head, let header = request.headers[EntityTags.ifNoneMatch],
            (EntityTags.list(header) ?? []).contains(where: { $0 == "*" || $0 == etag || $0 == "W/" + etag })
        {
            return Response(status: .notModified, headers: [.eTag: etag])
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8", .eTag: etag],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

extension PreconditionFailed {
    /// 412 with the entity as it is now (`current`) and its tag (`etag`, also the `ETag` header),
    /// in the problem document, so that the client can merge and send again.
    func response(requestID: String) throws -> Response {
        let body = Body(
            type: APIProblem.typeBase + "precondition-failed", title: "Precondition failed", status: 412,
            detail: "The entity changed since the version named in If-Match; current is the version now.",
            requestID: requestID, etag: etag, current: current)
        return Response(
            status: .preconditionFailed, headers: [.contentType: "application/problem+json", .eTag: etag],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try ResponseJSONEncoder.encode(body))))
    }

    private struct Body: Encodable, Sendable {
        var type: String
        var title: String
        var status: Int
        var detail: String
        var requestID: String
        var etag: String
        var current: any Encodable & Sendable

        enum CodingKeys: String, CodingKey { case type, title, status, detail, requestID = "request_id", etag, current }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(type, forKey: .type)
            try container.encode(title, forKey: .title)
            try container.encode(status, forKey: .status)
            try container.encode(detail, forKey: .detail)
            try container.encode(requestID, forKey: .requestID)
            try container.encode(etag, forKey: .etag)
            try container.encode(current, forKey: .current)
        }
    }
}
