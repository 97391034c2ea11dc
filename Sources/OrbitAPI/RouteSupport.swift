import Foundation
import Hummingbird
import OrbitCore

/// A list response: `{"items": [...]}` (an object, so fields can be added without breaking apps).
struct Items<Element: Encodable & Sendable>: Encodable, Sendable {
    var items: [Element]
    init(_ items: [Element]) { self.items = items }
}

extension APIContext {
    /// A path parameter that must be an id; anything else cannot name a resource.
    func id<Tag>(_ name: String, as: Identifier<Tag>.Type = Identifier<Tag>.self) throws -> Identifier<Tag> {
        guard let text = parameters.get(name), let id = Identifier<Tag>(text) else {
            throw APIProblem.validation(field: name, "\(name) must be a UUID.")
        }
        return id
    }
}

extension Request {
    /// The JSON body as `type`; a missing or malformed body is a validation problem.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: APIContext) async throws -> T {
        var request = self
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { throw APIProblem.validation(field: nil, "The request needs a JSON body.") }
        return try APIJSON.decode(type, from: Data(buffer: buffer))
    }

    func query(_ name: String) -> String? {
        uri.queryParameters.get(name)
    }

    func queryInt(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = query(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw APIProblem.validation(field: name, "\(name) must be an integer from \(range.lowerBound) to \(range.upperBound).")
        }
        return number
    }

    func queryDate(_ name: String) throws -> Date? {
        guard let text = query(name) else { return nil }
        guard let date = APIJSON.parseTimestamp(text) else {
            throw APIProblem.validation(field: name, "\(name) must be an RFC 3339 timestamp (2026-03-10T22:00:00Z).")
        }
        return date
    }

    func queryBool(_ name: String) throws -> Bool {
        guard let text = query(name) else { return false }
        switch text {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIProblem.validation(field: name, "\(name) must be true or false.")
        }
    }

    func queryID<Tag>(_ name: String, as: Identifier<Tag>.Type = Identifier<Tag>.self) throws -> Identifier<Tag>? {
        guard let text = query(name) else { return nil }
        guard let id = Identifier<Tag>(text) else { throw APIProblem.validation(field: name, "\(name) must be a UUID.") }
        return id
    }
}

/// Amounts travel as integer minor units of an ISO 4217 currency (USD when none is given).
enum Amounts {
    static func currency(_ code: String?) throws -> Currency {
        guard let currency = Currency(code ?? "USD") else {
            throw APIProblem.validation(field: "currency", "currency must be an ISO 4217 code such as USD or EUR.")
        }
        return currency
    }

    static func money(_ minorUnits: Int64, currency: Currency, field: String) throws -> Money {
        guard minorUnits > 0, minorUnits <= Money.maximumMinorUnits else {
            throw APIProblem.validation(field: field, "\(field) must be a positive amount in minor units, at most \(Money.maximumMinorUnits).")
        }
        return Money(minorUnits: minorUnits, currency: currency)
    }
}

/// 204 No Content.
struct NoContent: ResponseGenerator {
    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: .noContent)
    }
}
