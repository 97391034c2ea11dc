package import Foundation
import OrbitPostgres

/// A private group space (spec: Communities).
package struct Community: Sendable, Codable, Equatable {
    package var id: CommunityID
    package var name: String
    package var description: String?
    package var iconURL: String?
    package var createdBy: UserID
    package var memberCount: Int
    package var subscriptionStatus: SubscriptionStatus
    package var subscriptionExpiresAt: Date?
    package var settings: CommunitySettings
    package var createdAt: Date
    package var updatedAt: Date
    package var deletedAt: Date?
    /// Archived by an admin: read-only, listed in "my groups" only on request, until unarchived.
    package var archivedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, name, description, iconURL = "icon_url", createdBy = "created_by", memberCount = "member_count"
        case subscriptionStatus = "subscription_status", subscriptionExpiresAt = "subscription_expires_at"
        case settings, createdAt = "created_at", updatedAt = "updated_at", deletedAt = "deleted_at"
        case archivedAt = "archived_at"
    }

    static let columns = """
        id, name, description, icon_url, created_by, member_count, subscription_status::text AS subscription_status,
        subscription_expires_at, settings, created_at, updated_at, deleted_at, archived_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        name = try row.decode("name")
        description = try row.decode("description")
        iconURL = try row.decode("icon_url")
        createdBy = try row.decode("created_by")
        memberCount = Int(try row.decode("member_count", as: Int32.self))
        subscriptionStatus = try row.decode("subscription_status")
        subscriptionExpiresAt = try row.decode("subscription_expires_at")
        settings = try row.decode("settings", as: PostgresJSON.self).decode(CommunitySettings.self)
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        deletedAt = try row.decode("deleted_at")
        archivedAt = try row.decode("archived_at")
    }
}

/// A community as one of its members sees it in their list ("my groups", `GET /communities`):
/// the community, and under `my` their role, their balance in each currency, whether they pinned
/// it and where, and when anything they can see last happened in it.
package struct MyCommunity: Sendable, Codable, Equatable {
    package struct Mine: Sendable, Codable, Equatable {
        package var role: MemberRole
        /// Only the currencies whose balance is not zero; positive = is owed.
        package var balances: [CurrencyBalance]
        package var pinned: Bool
        package var position: Int?
        /// The latest change in the community that the member can see (its change log), else
        /// when the community itself last changed.
        package var lastActivityAt: Date

        enum CodingKeys: String, CodingKey { case role, balances, pinned, position, lastActivityAt = "last_activity_at" }
    }

    package var community: Community
    package var my: Mine

    enum CodingKeys: String, CodingKey { case my }

    package init(community: Community, my: Mine) {
        self.community = community
        self.my = my
    }

    /// The community's columns and `my`, in one object.
    package func encode(to encoder: any Encoder) throws {
        try community.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(my, forKey: .my)
    }

    package init(from decoder: any Decoder) throws {
        community = try Community(from: decoder)
        my = try decoder.container(keyedBy: CodingKeys.self).decode(Mine.self, forKey: .my)
    }
}

/// Where a community's subscription stands (spec: subscription_status). Billing itself is out of
/// scope; the creator records it.
package enum SubscriptionStatus: String, DatabaseEnum {
    case free, active, pastDue = "past_due", canceled
}

/// `communities.settings` (spec: "Settings JSONB Structure"). Absent keys take the defaults of
/// the spec's example: members may create events and posts.
package struct CommunitySettings: Sendable, Codable, Equatable, OmitsNilMembers {
    package var allowMemberEvents: Bool?
    package var allowMemberPosts: Bool?
    /// 0 to 168 hours.
    package var defaultReminderHours: Int?
    /// An IANA time zone name, such as "America/New_York".
    package var timezone: String?
    /// The community's base currency (ISO 4217): the currency of money entered without one
    /// (API and CLI), and the one `settle suggest --in` proposes by default (docs/money.md).
    package var baseCurrency: String?
    /// The language of the community's text, for search (docs/search.md): words are stemmed by
    /// its rules ("running" finds "run"). One of `searchLanguages`; unset: no stemming.
    package var language: String?
    /// End-to-end encryption (docs/e2e.md): when true, posts, comments and chat messages arrive
    /// as ciphertext under the community's current key, and plaintext is refused. Once on, it
    /// stays on.
    package var endToEndEncryption: Bool?
    /// Settle Up's `minimizeDebts`: settle-up suggests the fewest payments that clear every
    /// balance (true, the default), or each pair's own debt (false; docs/money.md).
    package var minimizeDebts: Bool?
    /// The split of an expense added without one (docs/money.md, "Who a new split takes"):
    /// `equal` (the default) among the members in new splits, or `shares` by their default weights.
    package var defaultSplit: String?
    /// Settle Up's `remindOldDebts` (docs/money.md, "Who hears about money"): once a week, remind
    /// everyone who has owed more than `remindOldDebtsThreshold` for longer than
    /// `remindOldDebtsDays`. Off unless true.
    package var remindOldDebts: Bool?
    /// 1 to 365 days; unset: 14.
    package var remindOldDebtsDays: Int?
    /// Whole units of the debt's currency (20: 20.00 USD, 20 JPY), 0 to 1,000,000; unset: 0, any debt.
    package var remindOldDebtsThreshold: Int?

    /// `defaultSplit`'s values.
    package static let defaultSplits = ["equal", "shares"]

    package init(
        allowMemberEvents: Bool? = nil, allowMemberPosts: Bool? = nil, defaultReminderHours: Int? = nil, timezone: String? = nil,
        baseCurrency: String? = nil, language: String? = nil, endToEndEncryption: Bool? = nil, minimizeDebts: Bool? = nil,
        defaultSplit: String? = nil, remindOldDebts: Bool? = nil, remindOldDebtsDays: Int? = nil, remindOldDebtsThreshold: Int? = nil
    ) {
        self.defaultSplit = defaultSplit
        self.remindOldDebts = remindOldDebts
        self.remindOldDebtsDays = remindOldDebtsDays
        self.remindOldDebtsThreshold = remindOldDebtsThreshold
        self.allowMemberEvents = allowMemberEvents
        self.allowMemberPosts = allowMemberPosts
        self.defaultReminderHours = defaultReminderHours
        self.timezone = timezone
        self.baseCurrency = baseCurrency
        self.language = language
        self.endToEndEncryption = endToEndEncryption
        self.minimizeDebts = minimizeDebts
    }

    static let knownKeys: Set<String> = [
        "allowMemberEvents", "allowMemberPosts", "defaultReminderHours", "timezone", "baseCurrency", "language", "endToEndEncryption",
        "minimizeDebts", "defaultSplit", "remindOldDebts", "remindOldDebtsDays", "remindOldDebtsThreshold",
    ]

    /// The languages search knows: PostgreSQL's own text search configurations, each as
    /// `orbit.<language>` with accents folded (migrations/0040_search.sql; a test keeps the two
    /// equal). `simple` is the unset setting's: words as written, no stemming.
    package static let searchLanguages: [String] = [
        "simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "finnish", "french", "german", "greek",
        "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali", "norwegian", "portuguese", "romanian",
        "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish",
    ]

    /// Parses settings from JSON text: an object with only the known keys, each of its type.
    /// - Throws: `ServiceError.invalidInput` naming the offending key.
    package static func parse(json: String) throws -> CommunitySettings {
        let data = Data(json.utf8)
        let object: [String: JSONValue]
        do {
            object = try JSONDecoder().decode([String: JSONValue].self, from: data)
        } catch {
            throw ServiceError.invalidInput(field: "settings", reason: "must be a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !knownKeys.contains($0) }) {
            throw ServiceError.invalidInput(
                field: "settings.\(unknown)",
                reason: "is not a setting (known: \(knownKeys.sorted().joined(separator: ", ")))"
            )
        }
        var settings = CommunitySettings()
        for (key, value) in object {
            switch (key, value) {
            case ("allowMemberEvents", .bool(let flag)): settings.allowMemberEvents = flag
            case ("allowMemberPosts", .bool(let flag)): settings.allowMemberPosts = flag
            case ("defaultReminderHours", .integer(let hours)): settings.defaultReminderHours = hours
            case ("timezone", .string(let zone)): settings.timezone = zone
            case ("baseCurrency", .string(let code)): settings.baseCurrency = code
            case ("language", .string(let language)): settings.language = language
            case ("endToEndEncryption", .bool(let flag)): settings.endToEndEncryption = flag
            case ("minimizeDebts", .bool(let flag)): settings.minimizeDebts = flag
            case ("defaultSplit", .string(let method)): settings.defaultSplit = method
            case ("remindOldDebts", .bool(let flag)): settings.remindOldDebts = flag
            case ("remindOldDebtsDays", .integer(let days)): settings.remindOldDebtsDays = days
            case ("remindOldDebtsThreshold", .integer(let units)): settings.remindOldDebtsThreshold = units
            case ("remindOldDebtsDays", _), ("remindOldDebtsThreshold", _):
                throw ServiceError.invalidInput(field: "settings.\(key)", reason: "must be a whole number")
            case ("allowMemberEvents", _), ("allowMemberPosts", _), ("endToEndEncryption", _), ("minimizeDebts", _), ("remindOldDebts", _):
                throw ServiceError.invalidInput(field: "settings.\(key)", reason: "must be true or false")
            case ("defaultReminderHours", _):
                throw ServiceError.invalidInput(field: "settings.\(key)", reason: "must be a whole number of hours")
            default:
                throw ServiceError.invalidInput(field: "settings.\(key)", reason: "must be a string")
            }
        }
        try settings.validate()
        return settings
    }

    /// The time zones a community may have: UTC and the Area/Location names (zones and links)
    /// of the system's tz database (`TimeZoneDatabase`); the name is kept as given. Bare
    /// abbreviations such as `EST` are not accepted. openapi.yaml's `TimeZoneName` lists them as
    /// tzdata had them when it was written (a test checks that each is accepted).
    package static var timeZoneNames: Set<String> { TimeZoneDatabase.acceptedNames }

    /// Checks ranges: reminder hours 0–168, a time zone this system knows.
    package func validate() throws {
        if let hours = defaultReminderHours, !(0...168).contains(hours) {
            throw ServiceError.invalidInput(field: "settings.defaultReminderHours", reason: "must be between 0 and 168")
        }
        if let timezone, !Self.timeZoneNames.contains(timezone) {
            throw ServiceError.invalidInput(field: "settings.timezone", reason: "is not an IANA time zone name such as America/New_York")
        }
        if let days = remindOldDebtsDays, !(1...365).contains(days) {
            throw ServiceError.invalidInput(field: "settings.remindOldDebtsDays", reason: "must be between 1 and 365")
        }
        if let units = remindOldDebtsThreshold, !(0...1_000_000).contains(units) {
            throw ServiceError.invalidInput(field: "settings.remindOldDebtsThreshold", reason: "must be between 0 and 1000000")
        }
        if let defaultSplit, !Self.defaultSplits.contains(defaultSplit) {
            throw ServiceError.invalidInput(field: "settings.defaultSplit", reason: "must be equal or shares")
        }
        if let baseCurrency, Currency(baseCurrency)?.code != baseCurrency {
            throw ServiceError.invalidInput(field: "settings.baseCurrency", reason: "is not an ISO 4217 currency code in capitals such as EUR")
        }
        if let language, !Self.searchLanguages.contains(language) {
            throw ServiceError.invalidInput(
                field: "settings.language", reason: "is not a language search knows (\(Self.searchLanguages.joined(separator: ", ")))")
        }
    }

    /// The community's time zone: `timezone`, or UTC when it is not set (or, for a row written
    /// before validation existed, not a zone this system knows). Every civil-date rule of the
    /// community (what is overdue, reminder days, an expense's default date) uses it.
    package var timeZone: TimeZone {
        timezone.flatMap(TimeZone.init(identifier:)) ?? .gmt
    }

    /// These settings with `other`'s keys laid over them.
    package func merging(_ other: CommunitySettings) -> CommunitySettings {
        CommunitySettings(
            allowMemberEvents: other.allowMemberEvents ?? allowMemberEvents,
            allowMemberPosts: other.allowMemberPosts ?? allowMemberPosts,
            defaultReminderHours: other.defaultReminderHours ?? defaultReminderHours,
            timezone: other.timezone ?? timezone,
            baseCurrency: other.baseCurrency ?? baseCurrency,
            language: other.language ?? language,
            endToEndEncryption: other.endToEndEncryption ?? endToEndEncryption,
            minimizeDebts: other.minimizeDebts ?? minimizeDebts,
            defaultSplit: other.defaultSplit ?? defaultSplit,
            remindOldDebts: other.remindOldDebts ?? remindOldDebts,
            remindOldDebtsDays: other.remindOldDebtsDays ?? remindOldDebtsDays,
            remindOldDebtsThreshold: other.remindOldDebtsThreshold ?? remindOldDebtsThreshold
        )
    }
}

/// Just enough JSON to validate settings strictly (a Bool is not a number, 1.5 is not an Int).
enum JSONValue: Decodable {
    case bool(Bool), integer(Int), number(Double), string(String), null, other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else {
            self = .other
        }
    }
}
