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

/// A request body some of whose fields may be `null` (the document says so); elsewhere a
/// `null` is refused rather than read as "left out".
protocol NullableFields {
    /// Dotted paths, as `settings.timezone`.
    static var nullableFields: Set<String> { get }
}

extension Request {
    /// The JSON body as `type`; a missing or malformed body is a validation problem.
    func decodeJSON<T: Decodable>(_ type: T.Type, context: APIContext) async throws -> T {
        var request = self
        let buffer = try await request.collectBody(upTo: context.maxUploadSize)
        guard buffer.readableBytes > 0 else { throw APIProblem.validation(field: nil, "The request needs a JSON body.") }
        let data = Data(buffer: buffer)
        let value = try APIJSON.decode(type, from: data)
        // Swift decodes `null` and a missing key alike; the API does not: `null` is a value,
        // accepted only where the document says a field is nullable (it then clears the field).
        // Parsed a second time only when the text holds a `null` at all (most bodies do not).
        let nullable = (T.self as? any NullableFields.Type)?.nullableFields ?? []
        if data.firstRange(of: Data("null".utf8)) != nil,
            let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let path = Self.firstNull(in: object, shape: Mirror(reflecting: value), at: "", allowed: nullable)
        {
            throw APIProblem.validation(field: path, "\(path) must not be null; leave it out to keep the current value.")
        }
        return value
    }

    /// The dotted path of the first `null` at a field of the body (`shape`, the decoded value:
    /// its stored properties are the fields, matched as the decoder's `convertFromSnakeCase`
    /// matches them; keys it does not have are ignored, as the decoder ignores them) that is not
    /// one of the `allowed` paths. Nested objects are checked where the field holds a struct.
    private static func firstNull(in value: Any, shape: Mirror, at path: String, allowed: Set<String>) -> String? {
        guard let object = value as? [String: Any] else { return nil }
        var fields: [String: Any] = [:]
        for child in shape.children {
            guard let label = child.label else { continue }
            fields[label] = child.value
        }
        for key in object.keys.sorted() {
            guard let field = fields[camelCase(key)], let inner = object[key] else { continue }
            let innerPath = path.isEmpty ? key : "\(path).\(key)"
            if inner is NSNull {
                if !allowed.contains(innerPath) { return innerPath }
                continue
            }
            // Through Optional (and Optional of Optional) to the value the field holds.
            var mirror = Mirror(reflecting: field)
            while mirror.displayStyle == .optional, let wrapped = mirror.children.first { mirror = Mirror(reflecting: wrapped.value) }
            if mirror.displayStyle == .struct,
                let found = firstNull(in: inner, shape: mirror, at: innerPath, allowed: allowed)
            {
                return found
            }
        }
        return nil
    }

    /// `expires_at` as `expiresAt`, as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`
    /// reads it; a key without underscores as it is.
    private static func camelCase(_ key: String) -> String {
        let words = key.split(separator: "_")
        guard words.count > 1, !key.hasPrefix("_"), !key.hasSuffix("_") else { return key }
        return words[0].lowercased() + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }.joined()
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
    /// The API takes codes in upper case only, as openapi.yaml's `Currency` enum lists them.
    static func currency(_ code: String?) throws -> Currency {
        guard let currency = Currency(code ?? "USD"), currency.code == code ?? "USD" else {
            throw APIProblem.validation(field: "currency", "currency must be an ISO 4217 code such as USD or EUR.")
        }
        return currency
    }

    /// - Parameter allowZero: zero is an amount too (a tax or tip of nothing).
    static func money(_ minorUnits: Int64, currency: Currency, field: String, allowZero: Bool = false) throws -> Money {
        guard minorUnits > 0 || (allowZero && minorUnits == 0), minorUnits <= Money.maximumMinorUnits else {
            let least = allowZero ? "zero or more" : "a positive amount"
            throw APIProblem.validation(field: field, "\(field) must be \(least) in minor units, at most \(Money.maximumMinorUnits).")
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
