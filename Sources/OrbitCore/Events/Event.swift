package import Foundation
import OrbitPostgres

package enum EventTag {}
package enum RSVPTag {}
package typealias EventID = Identifier<EventTag>
package typealias RSVPID = Identifier<RSVPTag>

/// A calendar event row (spec: Events): a one-off event, a recurring series (with
/// `recurrence_rule`), or an instance of a series (with `recurrence_parent_id`).
package struct Event: Sendable, Codable, Equatable {
    package var id: EventID
    package var communityID: CommunityID
    package var createdBy: UserID
    package var title: String
    package var description: String?
    package var startsAt: Date
    package var endsAt: Date?
    package var allDay: Bool
    package var locationName: String?
    package var locationLat: Double?
    package var locationLng: Double?
    package var locationAddress: String?
    package var category: EventCategory
    package var recurrenceRule: String?
    package var recurrenceParentID: EventID?
    package var recurrenceTimezone: String?
    package var originalStartsAt: Date?
    package var rsvpDeadline: Date?
    package var createdAt: Date
    package var updatedAt: Date
    package var deletedAt: Date?

    enum CodingKeys: String, CodingKey {
        case id, communityID = "community_id", createdBy = "created_by", title, description, startsAt = "starts_at"
        case endsAt = "ends_at", allDay = "all_day", locationName = "location_name", locationLat = "location_lat"
        case locationLng = "location_lng", locationAddress = "location_address", category, recurrenceRule = "recurrence_rule"
        case recurrenceParentID = "recurrence_parent_id", recurrenceTimezone = "recurrence_timezone"
        case originalStartsAt = "original_starts_at", rsvpDeadline = "rsvp_deadline", createdAt = "created_at"
        case updatedAt = "updated_at", deletedAt = "deleted_at"
    }

    static let columns = """
        id, community_id, created_by, title, description, starts_at, ends_at, all_day, location_name,
        location_lat::float8 AS location_lat, location_lng::float8 AS location_lng, location_address, category::text AS category,
        recurrence_rule, recurrence_parent_id, recurrence_timezone, original_starts_at, rsvp_deadline, created_at, updated_at, deleted_at
        """

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        communityID = try row.decode("community_id")
        createdBy = try row.decode("created_by")
        title = try row.decode("title")
        description = try row.decode("description")
        startsAt = try row.decode("starts_at")
        endsAt = try row.decode("ends_at")
        allDay = try row.decode("all_day")
        locationName = try row.decode("location_name")
        locationLat = try row.decode("location_lat")
        locationLng = try row.decode("location_lng")
        locationAddress = try row.decode("location_address")
        category = try row.decode("category")
        recurrenceRule = try row.decode("recurrence_rule")
        recurrenceParentID = try row.decode("recurrence_parent_id")
        recurrenceTimezone = try row.decode("recurrence_timezone")
        originalStartsAt = try row.decode("original_starts_at")
        rsvpDeadline = try row.decode("rsvp_deadline")
        createdAt = try row.decode("created_at")
        updatedAt = try row.decode("updated_at")
        deletedAt = try row.decode("deleted_at")
    }
}

/// One entry of a calendar window: a one-off event, a materialized instance, or an occurrence
/// of a series computed on the fly. An occurrence of a series is addressed by the series' id and
/// `occurrence_starts_at`.
package struct EventOccurrence: Sendable, Codable, Equatable {
    /// The row shown: the event, the instance, or (for a computed occurrence) the series.
    package var eventID: EventID
    /// The series, for occurrences of one.
    package var seriesID: EventID?
    /// The occurrence's original start within its series.
    package var occurrenceStartsAt: Date?
    package var startsAt: Date
    package var endsAt: Date?
    package var title: String
    package var category: EventCategory
    package var allDay: Bool
    package var locationName: String?
    /// True when the occurrence is computed from its series and has no row of its own yet.
    package var isComputed: Bool

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", seriesID = "series_id", occurrenceStartsAt = "occurrence_starts_at", startsAt = "starts_at"
        case endsAt = "ends_at", title, category, allDay = "all_day", locationName = "location_name", isComputed = "is_computed"
    }
}

/// What an event is created or changed with; nil leaves a field as it is (on update).
package struct EventDraft: Sendable {
    package var title: String?
    package var description: String?
    package var startsAt: Date?
    package var endsAt: Date?
    package var allDay: Bool?
    package var locationName: String?
    package var locationLat: Double?
    package var locationLng: Double?
    package var locationAddress: String?
    package var category: EventCategory?
    package var recurrenceRule: String?
    package var attachments: [String]?
    package var rsvpDeadline: Date?

    package init(
        title: String? = nil, description: String? = nil, startsAt: Date? = nil, endsAt: Date? = nil, allDay: Bool? = nil,
        locationName: String? = nil, locationLat: Double? = nil, locationLng: Double? = nil, locationAddress: String? = nil,
        category: EventCategory? = nil, recurrenceRule: String? = nil, attachments: [String]? = nil, rsvpDeadline: Date? = nil
    ) {
        self.title = title
        self.description = description
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.allDay = allDay
        self.locationName = locationName
        self.locationLat = locationLat
        self.locationLng = locationLng
        self.locationAddress = locationAddress
        self.category = category
        self.recurrenceRule = recurrenceRule
        self.attachments = attachments
        self.rsvpDeadline = rsvpDeadline
    }

    /// Checks lengths, ranges and enums of the fields that are set.
    func validate() throws {
        if let title { _ = try Validate.text(title, field: "title", limit: 200) }
        if let locationName { _ = try Validate.text(locationName, field: "location_name", limit: 200) }
        if let description { _ = try Validate.optionalText(description, field: "description", limit: 10_000) }
        if let locationAddress { _ = try Validate.optionalText(locationAddress, field: "location_address", limit: 500) }
        if let locationLat, !(-90...90).contains(locationLat) || !locationLat.isFinite {
            throw ServiceError.invalidInput(field: "location_lat", reason: "must be between -90 and 90")
        }
        if let locationLng, !(-180...180).contains(locationLng) || !locationLng.isFinite {
            throw ServiceError.invalidInput(field: "location_lng", reason: "must be between -180 and 180")
        }
        if let startsAt, let endsAt, endsAt < startsAt {
            throw ServiceError.invalidInput(field: "ends_at", reason: "must not be before starts_at")
        }
        for attachment in attachments ?? [] { _ = try Validate.url(attachment, field: "attachments") }
    }
}

/// What kind of event it is (spec: event_category).
package enum EventCategory: String, DatabaseEnum {
    case practice, game, meeting, social, other
}

/// An answer to an event (spec: rsvp_status).
package enum RSVPStatus: String, DatabaseEnum {
    case yes, no, maybe
}

/// An answer to an event (spec: RSVPs).
package struct RSVP: Sendable, Codable, Equatable {
    package var id: RSVPID
    package var eventID: EventID
    package var userID: UserID
    package var familyMemberID: FamilyMemberID?
    package var status: RSVPStatus
    package var plusOnes: Int
    package var note: String?
    package var respondedAt: Date
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, eventID = "event_id", userID = "user_id", familyMemberID = "family_member_id", status, plusOnes = "plus_ones", note
        case respondedAt = "responded_at", updatedAt = "updated_at"
    }

    static let columns = "id, event_id, user_id, family_member_id, status::text AS status, plus_ones, note, responded_at, updated_at"

    init(row: PostgresRow) throws {
        let plusOnes: Int32
        (id, eventID, userID, familyMemberID, status, plusOnes, note, respondedAt, updatedAt) = try row.decode(
            (RSVPID, EventID, UserID, FamilyMemberID?, RSVPStatus, Int32, String?, Date, Date).self
        )
        self.plusOnes = Int(plusOnes)
    }
}

/// An answer with the names a list of who is coming shows.
package struct RSVPEntry: Sendable, Codable, Equatable {
    package var rsvp: RSVP
    /// The member who answered.
    package var displayName: String
    /// The family member answered for, if any.
    package var familyMemberName: String?

    enum CodingKeys: String, CodingKey { case displayName = "display_name", familyMemberName = "family_member_name" }

    init(row: PostgresRow) throws {
        rsvp = try RSVP(row: row)
        displayName = try row.decode("display_name")
        familyMemberName = try row.decode("family_member_name")
    }

    /// The answer's columns and the names, in one object.
    package func encode(to encoder: any Encoder) throws {
        try rsvp.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(familyMemberName, forKey: .familyMemberName)
    }

    package init(from decoder: any Decoder) throws {
        rsvp = try RSVP(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        displayName = try container.decode(String.self, forKey: .displayName)
        familyMemberName = try container.decodeIfPresent(String.self, forKey: .familyMemberName)
    }
}

/// Who is coming to an event.
package struct Attendance: Sendable, Codable, Equatable {
    package struct Tally: Sendable, Codable, Equatable {
        /// Answers (members and family members).
        package var responses: Int
        /// The same, plus their plus-ones.
        package var people: Int

        package init(responses: Int, people: Int) {
            self.responses = responses
            self.people = people
        }
    }

    package var eventID: EventID
    package var yes: Tally
    package var no: Tally
    package var maybe: Tally
    /// Active members who have not answered for themselves.
    package var notAnswered: [UserID]

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id", yes, no, maybe, notAnswered = "not_answered"
    }
}
