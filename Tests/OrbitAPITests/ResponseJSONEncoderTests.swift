import Foundation
import OrbitAPI
import OrbitCore
import Testing

@Suite("The streaming JSON encoder of responses")
struct ResponseJSONEncoderTests {
    /// Leaves nil members out, as `JSONEncoder` does, to compare with it.
    struct Inner: Codable, Equatable, OmitsNilMembers {
        var name: String
        var tags: [String]
        var score: Double?
    }

    enum Kind: String, Codable { case first, second }

    struct Sample: Codable, Equatable, OmitsNilMembers {
        var text: String
        var controls: String
        var number: Int
        var big: Int64
        var flag: Bool
        var ratio: Double
        var missing: String?
        var present: Int?
        var list: [Int]
        var empty: [String]
        var nested: Inner
        var nestedList: [Inner]
        var matrix: [[Int]]
        var counts: [String: Int]
        var kind: Kind
        var id: UserID
        var optionalID: UserID?
        var when: Date
    }

    static let sample = Sample(
        text: "quote \" backslash \\ slash / newline \n tab \t bell \u{07} unicode é 🐯 \u{2028}", controls: "line\nbreak\u{01}end", number: -42,
        big: Int64.max, flag: true,
        ratio: 0.1, missing: nil, present: 7, list: [1, 2, 3], empty: [], nested: Inner(name: "a", tags: ["x"], score: nil),
        nestedList: [Inner(name: "b", tags: [], score: 1.5), Inner(name: "c", tags: ["y", "z"], score: -2e-7)], matrix: [[1], [], [2, 3]],
        counts: ["like": 2, "love": 0, "a\"b": 1], kind: .second, id: UserID(UUID(uuidString: "A1B2C3D4-0000-4000-8000-00000000ABCD")!),
        optionalID: nil,
        when: Date(timeIntervalSince1970: 1_709_210_096.5)
    )

    @Test("the streaming encoder writes what JSONEncoder writes, as JSON values")
    func theStreamingEncoderWritesWhatJSONEncoderWrites() throws {
        let ours = try APIJSON.encode(Self.sample)
        let foundation = JSONEncoder()
        foundation.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(APIJSON.formatTimestamp(date))
        }
        let theirs = try foundation.encode(Self.sample)
        let parsedOurs = try JSONSerialization.jsonObject(with: ours) as? NSDictionary
        let parsedTheirs = try JSONSerialization.jsonObject(with: theirs) as? NSDictionary
        #expect(parsedOurs != nil)
        #expect(parsedOurs == parsedTheirs)
        // And it reads back into the same value.
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt).parse(text)
        }
        #expect(try decoder.decode(Sample.self, from: ours) == Self.sample)
    }

    @Test("control characters are escaped, ids are lower-case, nil optionals of a type that omits them are left out")
    func controlCharactersAreEscapedIdsAreLower() throws {
        let text = String(decoding: try APIJSON.encode(Self.sample), as: UTF8.self)
        #expect(text.contains(#"\u0007"#))
        #expect(text.contains(#""controls":"line\nbreak\u0001end""#))
        #expect(text.contains(#"\n"#))
        #expect(!text.contains("\u{07}"))
        #expect(text.contains(#""id":"a1b2c3d4-0000-4000-8000-00000000abcd""#))
        #expect(!text.contains("missing"))
        #expect(text.contains(#""when":"2024-02-29T12:34:56.500Z""#))
    }

    struct Resource: Codable, Equatable {
        var id: Int
        var note: String?
        var inner: Inner?
        var nested: [Plain]
    }

    struct Plain: Codable, Equatable {
        var at: Date?
        var count: Int?
    }

    @Test("a resource's nil members are written as null, every key present, and read back the same")
    func nilMembersOfAResourceAreNull() throws {
        let resource = Resource(id: 1, note: nil, inner: Inner(name: "a", tags: [], score: nil), nested: [Plain(at: nil, count: 2)])
        let bytes = try APIJSON.encode(resource)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"id":1,"note":null,"inner":{"name":"a","tags":[]},"nested":[{"at":null,"count":2}]}"#)
        #expect(try JSONDecoder().decode(Resource.self, from: bytes) == resource)
    }

    @Test("infinity is refused")
    func infinityIsRefused() {
        #expect(throws: EncodingError.self) { try APIJSON.encode([Double.infinity]) }
    }

    @Test("a dictionary is written in key order, however it was built, so equal values are equal bytes")
    func dictionariesInKeyOrder() throws {
        var forward: [String: [String: Int]] = [:]
        var backward: [String: [String: Int]] = [:]
        let keys = (0..<40).map { "key\($0)" }
        for key in keys { forward[key] = ["b": 2, "a": 1] }
        backward.reserveCapacity(1000)
        for key in keys.reversed() { backward[key] = ["a": 1, "b": 2] }
        let bytes = try APIJSON.encode(forward)
        #expect(bytes == (try APIJSON.encode(backward)))
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"key0":{"a":1,"b":2},"key1":{"a":1,"b":2},"key10":"#))
        #expect(try APIJSON.encode([String: Int]()) == Data("{}".utf8))
    }
}
