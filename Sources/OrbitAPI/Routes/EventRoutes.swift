import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addEventRoutes(to router: RouterGroup<APIContext>) {
        struct EventBody: Decodable {
            var title: String?
            var description: String?
            var startsAt: Date?
            var endsAt: Date?
            var allDay: Bool?
            var locationName: String?
            var locationLat: Double?
            var locationLng: Double?
            var locationAddress: String?
            var category: String?
            var recurrenceRule: String?
            var attachments: [String]?
            var rsvpDeadline: Date?
            /// For PATCH of a series: the occurrence (its original start) to change.
            var occurrence: Date?

            func draft() throws -> EventDraft {
                EventDraft(
                    title: title, description: description, startsAt: startsAt, endsAt: endsAt, allDay: allDay, locationName: locationName,
                    locationLat: locationLat, locationLng: locationLng, locationAddress: locationAddress,
                    category: try category.map { try EventCategory.parse($0, field: "category") }, recurrenceRule: recurrenceRule,
                    attachments: attachments, rsvpDeadline: rsvpDeadline
                )
            }
        }

        // Occurrences in a window of `days` (1 to 92) × 24 hours from `from`: a window the
        // document can state exactly, so any valid request is a valid window.
        router.get("communities/:community_id/events") { request, context in
            guard let from = try request.queryDate("from") else {
                throw APIProblem.validation(field: "from", "from is a required RFC 3339 timestamp.")
            }
            let to = from.addingTimeInterval(Double(try request.queryInt("days", default: 31, range: 1...92)) * 86_400)
            let limit = try request.queryInt("limit", default: 500, range: 1...2000)
            return JSON(
                Items(
                    try await services.events.calendar(
                        of: try context.id("community_id"), from: from, to: to, limit: limit, as: try context.requireUser())))
        }
        router.post("communities/:community_id/events") { request, context in
            let body = try await request.decodeJSON(EventBody.self, context: context)
            let user = try context.requireUser()
            return try await creating(.events, request, context: context, stored: { try await services.events.get(EventID($0), as: user) }) {
                try await services.events.create(in: try context.id("community_id"), try body.draft(), as: user)
            }
        }

        let event = router.group("events/:event_id")
        event.get { _, context in
            Tagged(try await services.events.get(try context.id("event_id"), as: try context.requireUser()))
        }
        event.patch { request, context in
            let body = try await request.decodeJSON(EventBody.self, context: context)
            let id: EventID = try context.id("event_id")
            return Tagged(
                try await request.underIfMatch(.entity(.event, id.uuid)) {
                    try await services.events.update(id, occurrence: body.occurrence, try body.draft(), as: try context.requireUser())
                }
            )
        }
        event.delete { request, context in
            let scopeText = request.query("scope") ?? "all"
            guard let scope = EventDeletionScope(rawValue: scopeText) else {
                throw APIProblem.validation(field: "scope", "scope must be all, occurrence or following.")
            }
            let id: EventID = try context.id("event_id")
            let occurrence = try request.queryDate("occurrence")
            try await request.underIfMatch(.entity(.event, id.uuid)) {
                try await services.events.delete(id, occurrence: occurrence, scope: scope, as: try context.requireUser())
            }
            return NoContent()
        }

        struct RSVPBody: Decodable {
            var status: String
            var occurrence: Date?
            var familyMemberId: FamilyMemberID?
            var plusOnes: Int?
            var note: String?
        }
        event.put("rsvp") { request, context in
            let body = try await request.decodeJSON(RSVPBody.self, context: context)
            return JSON(
                try await services.events.rsvp(
                    try context.id("event_id"), occurrence: body.occurrence, status: try RSVPStatus.parse(body.status, field: "status"),
                    familyMember: body.familyMemberId,
                    plusOnes: body.plusOnes ?? 0, note: body.note, as: try context.requireUser()
                )
            )
        }
        // Withdraws one's answer (or one's family member's): ?occurrence= for a series.
        event.delete("rsvp") { request, context in
            try await services.events.withdrawRSVP(
                try context.id("event_id"), occurrence: try request.queryDate("occurrence"),
                familyMember: try request.queryID("family_member_id", as: FamilyMemberID.self), as: try context.requireUser()
            )
            return NoContent()
        }
        // Who is coming: every answer with names, plus-ones, notes and which family member.
        event.get("rsvps") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...500)
            return JSON(
                try await services.events.rsvps(
                    try context.id("event_id"), occurrence: try request.queryDate("occurrence"), limit: limit, cursor: request.query("cursor"),
                    as: try context.requireUser())
            )
        }
        event.get("attendance") { request, context in
            JSON(
                try await services.events.attendance(
                    try context.id("event_id"), occurrence: try request.queryDate("occurrence"), as: try context.requireUser()))
        }
    }
}
