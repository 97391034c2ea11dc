import Crypto
import Foundation
import Hummingbird
import NIOCore
import OrbitCore

/// Creates with the id the client generated (issue 38, item 3; docs/sync.md, "Offline writes").
///
/// An app that works offline queues its creates and sends them when it can, perhaps after a
/// weekend away, perhaps twice. A create whose body has `id` (a UUID) makes the entity with that
/// id and keeps the request's fingerprint for as long as its author exists; the same request
/// again, at any age, answers `200` with the entity as it is stored, and the same id with other
/// content (or from someone else) `409` with the stored version, when the sender may see it.
/// Idempotency keys (24 hours) stay for requests that create nothing with an id of their own.
extension OrbitAPI {
    /// Runs `create` (which answers 201) under the body's `id`, if it has one; `stored` reads the
    /// entity with an id as the caller, for a replay or a conflict.
    func creating<Value: Encodable & Sendable>(
        _ table: ClientCreatable, _ request: Request, context: APIContext,
        stored: (UUID) async throws -> Value,
        _ create: () async throws -> Value
    ) async throws -> Response {
        try await creating(table, request, context: context, stored: stored) { (try await create(), true) }
    }

    /// As above, for a create that may find the entity made already (a direct conversation the
    /// pair has: `created` false, answered 200).
    func creating<Value: Encodable & Sendable>(
        _ table: ClientCreatable, _ request: Request, context: APIContext,
        stored: (UUID) async throws -> Value,
        _ create: () async throws -> (Value, created: Bool)
    ) async throws -> Response {
        var request = request
        let body = Data(buffer: try await request.collectBody(upTo: context.maxUploadSize))
        guard let id = try Self.clientID(in: body) else {
            let (value, created) = try await create()
            return try APIJSON.response(value, status: created ? .created : .ok)
        }
        return try await creating(
            table, id: id, fingerprint: RequestFingerprint.of(request, body: body), context: context, stored: stored, create)
    }

    /// Runs `create` under the client's `id`, given the request's `fingerprint` (a media upload
    /// takes its id from the query and its fingerprint from the streamed file).
    func creating<Value: Encodable & Sendable>(
        _ table: ClientCreatable, id: UUID, fingerprint: [UInt8], context: APIContext,
        stored: (UUID) async throws -> Value,
        _ create: () async throws -> (Value, created: Bool)
    ) async throws -> Response {
        let principal = try context.requirePrincipal()
        let clientCreate = ClientCreate(id: id, table: table, fingerprint: fingerprint)

        /// The answer when `id` was used before; nil when it was not.
        func answerFromStore(afterFailure failure: (any Error)?) async throws -> Response? {
            var match = try await services.clientCreates.match(id, fingerprint: fingerprint, as: principal)
            // An entity made without a client id may have it too (the table's key refused it).
            if match == .unused, let refusal = failure as? ServiceError, refusal.code == .conflict, refusal.field == "id" { match = .taken }
            switch match {
            case .unused:
                return nil
            case .replay:
                do {
                    return try APIJSON.response(try await stored(id), status: .ok)
                } catch let error as ServiceError where error.code == .notFound {
                    throw APIProblem(
                        "deleted", title: "Deleted", status: .gone,
                        detail: "The entity this id created has been deleted since; it is not created again.", field: "id")
                }
            case .taken:
                let current: Value?
                do {
                    current = try await stored(id)
                } catch let error as ServiceError where error.code == .notFound || error.code == .forbidden {
                    current = nil  // someone else's, out of the sender's sight: the conflict alone
                }
                return try ClientIDTaken(requestID: context.requestID, stored: current).response()
            }
        }

        if let answer = try await answerFromStore(afterFailure: nil) { return answer }
        do {
            let (value, created) = try await RequestRunner.$clientCreate.withValue(clientCreate) { try await create() }
            return try APIJSON.response(value, status: created ? .created : .ok)
        } catch {
            // A replay that raced the first one (it waited on the id, then found it taken), an id
            // used meanwhile: answered from what is stored. Any other refusal stands.
            if let answer = try await answerFromStore(afterFailure: error) { return answer }
            throw error
        }
    }

    /// The body's `id`: nil when it has none (the server chooses); a problem when it is not a UUID.
    static func clientID(in body: Data) throws -> UUID? {
        // Most bodies have no "id" key at all: not parsed twice for them.
        guard body.firstRange(of: Data(#""id""#.utf8)) != nil,
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let value = object["id"]
        else { return nil }
        guard let text = value as? String, let id = UUID(uuidString: text) else {
            throw APIProblem.validation(
                field: "id", "id must be a UUID (the one the client made for the entity), or left out for the server to choose.")
        }
        return id
    }
}

/// A request's identity for replays: SHA-256 over its method, its path with the query, and its
/// body (JSON canonical: keys sorted, no insignificant whitespace, so that a client that writes
/// the same JSON differently sends the same request).
enum RequestFingerprint {
    static func of(_ request: Request, body: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: head(of: request))
        hasher.update(data: canonical(body))
        return Array(hasher.finalize())
    }

    /// A request whose body is a file, hashed while it streamed (`bodyDigest`: its SHA-256).
    static func of(_ request: Request, bodyDigest: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: head(of: request))
        hasher.update(data: bodyDigest)
        return Array(hasher.finalize())
    }

    /// The method and the path with the query, each ended by a NUL.
    static func head(of request: Request) -> [UInt8] {
        Array(request.method.rawValue.utf8) + [0] + Array(request.uri.description.utf8) + [0]
    }

    /// A JSON body with its keys sorted and no insignificant whitespace; other bodies as they are.
    static func canonical(_ body: Data) -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let canonical = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return canonical
    }
}

/// 409: the id names an entity made by another request; `stored` is that entity, when the
/// sender may see it, for the client to reconcile with.
struct ClientIDTaken<Value: Encodable & Sendable>: OmitsNilMembers, Sendable {
    var type = APIProblem.typeBase + "id-taken"
    var title = "Id taken"
    var status = 409
    var detail = "This id was used for another entity or another request; stored is the entity it names."
    var field = "id"
    var requestID: String
    var stored: Value?

    enum CodingKeys: String, CodingKey { case type, title, status, detail, field, requestID = "request_id", stored }

    func response() throws -> Response {
        Response(
            status: .conflict, headers: [.contentType: "application/problem+json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try ResponseJSONEncoder.encode(self))))
    }
}
