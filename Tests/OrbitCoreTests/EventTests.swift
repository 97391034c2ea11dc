import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

private func at(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: text)!
}

@Suite("Events, recurring series and RSVPs")
struct EventTests {
    @Test("who may create events: admins always, members unless allowMemberEvents is false, outsiders never")
    func createPermissions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let draft = EventDraft(title: "Practice", startsAt: at("2026-12-01T17:00:00Z"), category: .practice)
            _ = try await services.events.create(in: cast.community, draft, as: cast.admin)
            _ = try await services.events.create(in: cast.community, draft, as: cast.member)
            let outsider = await serviceError { try await services.events.create(in: cast.community, draft, as: cast.outsider) }
            #expect(outsider?.code == .notFound)
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(allowMemberEvents: false), as: cast.admin)
            let member = await serviceError { try await services.events.create(in: cast.community, draft, as: cast.member) }
            #expect(member?.code == .forbidden)
            _ = try await services.events.create(in: cast.community, draft, as: cast.admin)
        }
    }

    @Test(
        "bad event input names the field",
        arguments: [
            ("location_lat", EventDraft(title: "X", startsAt: at("2026-12-01T17:00:00Z"), locationLat: 91)),
            ("location_lng", EventDraft(title: "X", startsAt: at("2026-12-01T17:00:00Z"), locationLng: -181)),
            ("ends_at", EventDraft(title: "X", startsAt: at("2026-12-01T17:00:00Z"), endsAt: at("2026-12-01T16:00:00Z"))),
            ("recurrence_rule.BYDAY", EventDraft(title: "X", startsAt: at("2026-12-01T17:00:00Z"), recurrenceRule: "FREQ=WEEKLY;BYDAY=XX")),
            ("title", EventDraft(title: String(repeating: "t", count: 201), startsAt: at("2026-12-01T17:00:00Z"))),
        ])
    func invalidInput(field: String, draft: EventDraft) async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let error = await serviceError { try await services.events.create(in: cast.community, draft, as: cast.admin) }
            #expect(error?.code == .invalidInput && error?.field == field)
        }
    }

    /// The category is an `EventCategory`; text from the API or the CLI is parsed at the edge,
    /// and an unknown one is refused there, naming the field.
    @Test("an unknown event category names the field")
    func unknownCategory() {
        let error = #expect(throws: ServiceError.self) { try EventCategory.parse("party", field: "category") }
        #expect(error?.code == .invalidInput && error?.field == "category")
    }

    @Test("members edit and delete only their own events; admins any")
    func editPermissions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let mine = try await services.events.create(
                in: cast.community, EventDraft(title: "Mine", startsAt: at("2026-12-01T17:00:00Z")), as: cast.member)
            let admins = try await services.events.create(
                in: cast.community, EventDraft(title: "Admin's", startsAt: at("2026-12-02T17:00:00Z")), as: cast.admin)
            _ = try await services.events.update(mine.id, EventDraft(title: "Mine, renamed"), as: cast.member)
            let denied = await serviceError { try await services.events.update(admins.id, EventDraft(title: "Hijacked"), as: cast.member) }
            #expect(denied?.code == .forbidden)
            _ = try await services.events.update(mine.id, EventDraft(title: "Tidied by admin"), as: cast.admin)
            try await services.events.delete(mine.id, as: cast.admin)
            let gone = await serviceError { try await services.events.get(mine.id, as: cast.member) }
            #expect(gone?.code == .notFound)
        }
    }

    @Test("a weekly 6 pm series in a New York community stays at 6 pm local across DST, listed with one-off events")
    func calendarWindow() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.communities.update(cast.community, settings: CommunitySettings(timezone: "America/New_York"), as: cast.admin)
            let series = try await services.events.create(
                in: cast.community,
                EventDraft(
                    title: "Practice", startsAt: at("2026-03-03T23:00:00Z"), endsAt: at("2026-03-04T00:30:00Z"),
                    recurrenceRule: "FREQ=WEEKLY;BYDAY=TU"),
                as: cast.admin
            )
            #expect(series.recurrenceTimezone == "America/New_York")
            _ = try await services.events.create(in: cast.community, EventDraft(title: "Game", startsAt: at("2026-03-07T15:00:00Z")), as: cast.admin)
            let march = try await services.events.calendar(
                of: cast.community, from: at("2026-03-01T00:00:00Z"), to: at("2026-03-18T00:00:00Z"), as: cast.member)
            #expect(march.map(\.title) == ["Practice", "Game", "Practice", "Practice"])
            #expect(
                march.filter { $0.title == "Practice" }.map { $0.startsAt.formatted(.iso8601) } == [
                    "2026-03-03T23:00:00Z", "2026-03-10T22:00:00Z", "2026-03-17T22:00:00Z",
                ])
            #expect(march.first?.endsAt == at("2026-03-04T00:30:00Z"))
            #expect(march.filter(\.isComputed).count == 3)
        }
    }

    @Test("one occurrence: cancel it, or change it and it leaves the series; the rest stay computed")
    func occurrences() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let series = try await services.events.create(
                in: cast.community, EventDraft(title: "Practice", startsAt: at("2026-12-01T17:00:00Z"), recurrenceRule: "FREQ=WEEKLY;COUNT=4"),
                as: cast.admin
            )
            try await services.events.delete(series.id, occurrence: at("2026-12-08T17:00:00Z"), scope: .occurrence, as: cast.admin)
            let moved = try await services.events.update(
                series.id, occurrence: at("2026-12-15T17:00:00Z"), EventDraft(title: "Practice (gym)", startsAt: at("2026-12-15T18:00:00Z")),
                as: cast.admin
            )
            #expect(moved.recurrenceParentID == series.id && moved.originalStartsAt == at("2026-12-15T17:00:00Z"))
            let december = try await services.events.calendar(
                of: cast.community, from: at("2026-12-01T00:00:00Z"), to: at("2026-12-31T00:00:00Z"), as: cast.member)
            #expect(december.map(\.title) == ["Practice", "Practice (gym)", "Practice"])
            #expect(december.map(\.isComputed) == [true, false, true])
            #expect(december[1].startsAt == at("2026-12-15T18:00:00Z"))
            let bogus = await serviceError {
                try await services.events.update(series.id, occurrence: at("2026-12-16T17:00:00Z"), EventDraft(title: "x"), as: cast.admin)
            }
            #expect(bogus?.code == .notFound)
        }
    }

    @Test("editing a series that has begun changes future occurrences only; deleting 'this and following' ends it")
    func seriesEditsAndDeletes() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let start = Date().addingTimeInterval(-15 * 86_400).rounded()
            let series = try await services.events.create(
                in: cast.community, EventDraft(title: "Old name", startsAt: start, recurrenceRule: "FREQ=DAILY;COUNT=30"), as: cast.admin
            )
            let renamed = try await services.events.update(series.id, EventDraft(title: "New name"), as: cast.admin)
            #expect(renamed.id != series.id && renamed.startsAt > Date())
            let window = try await services.events.calendar(
                of: cast.community, from: start, to: start.addingTimeInterval(40 * 86_400), as: cast.admin)
            #expect(window.count == 30)
            #expect(window.filter { $0.startsAt < Date() }.allSatisfy { $0.title == "Old name" })
            #expect(window.filter { $0.startsAt > Date() }.allSatisfy { $0.title == "New name" })

            let cut = try #require(window.first { $0.title == "New name" && $0.startsAt > Date().addingTimeInterval(5 * 86_400) })
            try await services.events.delete(renamed.id, occurrence: cut.startsAt, scope: .following, as: cast.admin)
            let after = try await services.events.calendar(of: cast.community, from: start, to: start.addingTimeInterval(40 * 86_400), as: cast.admin)
            #expect(after.count == window.firstIndex { $0.startsAt == cut.startsAt })
            try await services.events.delete(series.id, as: cast.admin)
            let rest = try await services.events.calendar(of: cast.community, from: start, to: start.addingTimeInterval(40 * 86_400), as: cast.admin)
            #expect(rest.allSatisfy { $0.title == "New name" })
        }
    }

    @Test("RSVPs: for oneself or one's own family, changed in place, plus-ones counted, deadline for non-admins")
    func rsvps() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let event = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: at("2026-12-05T15:00:00Z")), as: cast.admin)
            let first = try await services.events.rsvp(event.id, status: .maybe, as: cast.member)
            let changed = try await services.events.rsvp(event.id, status: .yes, plusOnes: 2, note: "Bringing grandparents", as: cast.member)
            #expect(changed.id == first.id && changed.status == .yes)
            let kid = try await services.family.add(name: "Tommy", as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .yes, familyMember: kid.id, as: cast.member)
            let notMine = await serviceError { try await services.events.rsvp(event.id, status: .yes, familyMember: kid.id, as: cast.admin) }
            #expect(notMine?.code == .notFound)
            let outsider = await serviceError { try await services.events.rsvp(event.id, status: .yes, as: cast.outsider) }
            #expect(outsider?.code == .notFound)
            let tooMany = await serviceError { try await services.events.rsvp(event.id, status: .yes, plusOnes: 21, as: cast.member) }
            #expect(tooMany?.code == .invalidInput)
            _ = try await services.events.rsvp(event.id, status: .no, as: cast.admin)

            let attendance = try await services.events.attendance(event.id, as: cast.member)
            #expect(attendance.yes == Attendance.Tally(responses: 2, people: 4))
            #expect(attendance.no == Attendance.Tally(responses: 1, people: 1))
            #expect(attendance.notAnswered.isEmpty)

            let closed = try await services.events.create(
                in: cast.community, EventDraft(title: "Closed", startsAt: at("2026-12-06T15:00:00Z"), rsvpDeadline: Date().addingTimeInterval(-60)),
                as: cast.admin
            )
            let late = await serviceError { try await services.events.rsvp(closed.id, status: .yes, as: cast.member) }
            #expect(late?.code == .forbidden)
            _ = try await services.events.rsvp(closed.id, status: .yes, as: cast.admin)
            let closedAttendance = try await services.events.attendance(closed.id, as: cast.admin)
            #expect(closedAttendance.notAnswered == [cast.member])
        }
    }

    @Test("answering one occurrence of a series gives it a row of its own")
    func rsvpOnOccurrence() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let series = try await services.events.create(
                in: cast.community, EventDraft(title: "Practice", startsAt: at("2026-12-01T17:00:00Z"), recurrenceRule: "FREQ=WEEKLY;COUNT=3"),
                as: cast.admin
            )
            let needsOccurrence = await serviceError { try await services.events.rsvp(series.id, status: .yes, as: cast.member) }
            #expect(needsOccurrence?.code == .conflict && needsOccurrence?.field == "occurrence")
            let answer = try await services.events.rsvp(series.id, occurrence: at("2026-12-08T17:00:00Z"), status: .yes, as: cast.member)
            let instance = try await services.events.get(answer.eventID, as: cast.member)
            #expect(instance.recurrenceParentID == series.id && instance.originalStartsAt == at("2026-12-08T17:00:00Z"))
            let again = try await services.events.rsvp(series.id, occurrence: at("2026-12-08T17:00:00Z"), status: .no, as: cast.admin)
            #expect(again.eventID == answer.eventID)
            let listed = try await services.events.calendar(
                of: cast.community, from: at("2026-12-01T00:00:00Z"), to: at("2026-12-31T00:00:00Z"), as: cast.member)
            #expect(listed.map(\.isComputed) == [true, false, true])
            let tally = try await services.events.attendance(series.id, occurrence: at("2026-12-08T17:00:00Z"), as: cast.member)
            #expect(tally.yes.responses == 1 && tally.no.responses == 1)
        }
    }

    @Test("who is coming lists answers with names and family members; an answer can be withdrawn")
    func whoIsComing() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let event = try await services.events.create(
                in: cast.community, EventDraft(title: "Game", startsAt: Date().addingTimeInterval(86_400)), as: cast.admin)
            let kid = try await services.family.add(name: "Tim", as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .yes, plusOnes: 1, note: "Bringing snacks", as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .yes, familyMember: kid.id, as: cast.member)
            _ = try await services.events.rsvp(event.id, status: .no, as: cast.admin)
            let answers = try await services.events.rsvps(event.id, as: cast.admin).items
            #expect(answers.count == 3)
            let tim = try #require(answers.first { $0.rsvp.familyMemberID == kid.id })
            #expect(tim.familyMemberName == "Tim" && tim.displayName == "Max Member")
            #expect(answers.contains { $0.rsvp.plusOnes == 1 && $0.rsvp.note == "Bringing snacks" })
            try await services.events.withdrawRSVP(event.id, familyMember: kid.id, as: cast.member)
            #expect(try await services.events.rsvps(event.id, as: cast.admin).items.count == 2)
            let again = await serviceError { try await services.events.withdrawRSVP(event.id, familyMember: kid.id, as: cast.member) }
            #expect(again?.code == .notFound)
        }
    }
}

extension Date {
    /// Whole seconds, as occurrences are computed.
    func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
