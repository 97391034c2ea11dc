/// A split as entered, in JSON: its method and one part per holder, with the value the method
/// takes (none for `equal`; minor units for `exact`; hundredths of a percent for `percent`; a
/// weight for `shares`). Stored with what repeats it (`recurring_charges.split`) and returned
/// by the API, so a client can show and edit what was entered:
/// `{"method": "shares", "parts": [{"user_id": "…", "family_member_id": null, "value": 2}, …]}`.
/// Items have no parts of their own but their items (each with its split), tax and tip:
/// `{"method": "items", "parts": [], "items": [{"description": "Pizza", "amount": 2400, "split": {…}}], "tax": 0, "tip": 500}`.
extension SplitMethod: Codable {
    package var name: String {
        switch self {
        case .equal: "equal"
        case .exact: "exact"
        case .percent: "percent"
        case .shares: "shares"
        case .items: "items"
        }
    }

    struct Part: Codable {
        var holder: Holder
        var value: Int64?

        enum CodingKeys: String, CodingKey { case userID = "user_id", familyMemberID = "family_member_id", value }

        init(holder: Holder, value: Int64?) {
            self.holder = holder
            self.value = value
        }

        init(from decoder: any Decoder) throws {
            holder = try Holder(from: decoder)
            value = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Int64.self, forKey: .value)
        }

        func encode(to encoder: any Encoder) throws {
            try holder.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(value, forKey: .value)
        }
    }

    enum CodingKeys: String, CodingKey { case method, parts }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let method = try container.decode(String.self, forKey: .method)
        if method == "items" {
            self = .items(try Itemised(from: decoder))
            return
        }
        let parts = try container.decode([Part].self, forKey: .parts)
        func valued() throws -> [Holder: Int64] {
            var values: [Holder: Int64] = [:]
            for part in parts {
                guard let value = part.value else {
                    throw DecodingError.dataCorruptedError(forKey: .parts, in: container, debugDescription: "a \(method) part needs a value")
                }
                guard values.updateValue(value, forKey: part.holder) == nil else {
                    throw DecodingError.dataCorruptedError(forKey: .parts, in: container, debugDescription: "names \(part.holder) twice")
                }
            }
            return values
        }
        switch method {
        case "equal": self = .equal(parts.map(\.holder))
        case "exact": self = .exact(try valued())
        case "percent": self = .percent(try valued())
        case "shares": self = .shares(try valued())
        default:
            throw DecodingError.dataCorruptedError(forKey: .method, in: container, debugDescription: "unknown split method \(method)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .method)
        if case .items(let itemised) = self { try itemised.encode(to: encoder) }
        let parts: [Part] =
            switch self {
            case .items: []
            case .equal(let holders): holders.sorted().map { Part(holder: $0, value: nil) }
            case .exact(let values), .percent(let values), .shares(let values):
                values.sorted { $0.key < $1.key }.map { Part(holder: $0.key, value: $0.value) }
            }
        try container.encode(parts, forKey: .parts)
    }
}
