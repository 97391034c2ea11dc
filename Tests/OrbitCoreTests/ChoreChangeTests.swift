import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Chores change: edited, ended, archived, deleted while nobody did them", .serialized)
struct ChoreChangeTests {
    @Test(
        "an admin edits a chore; points already earned stay; a recurring one ends; only admins; archive and unarchive; delete only without completions"
    )
    func changes() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let chores = services.chores
            let daily = try await chores.create(
                .init(
                    title: "Feed the cat", points: 10, dueAt: Date().addingTimeInterval(-86_400), recurrenceRule: "FREQ=DAILY",
                    assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let done = try await chores.complete(daily.id, as: .user(cast.member))
            _ = try await chores.review(done.id, approve: true, as: cast.admin)
            #expect(try await chores.points(in: cast.community, as: .user(cast.member)).balance == 10)

            // New title, points, difficulty, assignees: earned points stay as credited.
            let changed = try await chores.update(
                daily.id,
                .init(
                    title: "Feed the cats", description: .some("Both bowls"), points: 25, difficulty: .medium,
                    assignees: [cast.admin.uuid, cast.member.uuid]),
                as: cast.admin)
            #expect(changed.title == "Feed the cats" && changed.description == "Both bowls" && changed.points == 25 && changed.difficulty == .medium)
            #expect(Set(changed.assignees) == [.user(cast.admin), .user(cast.member)])
            #expect(try await chores.points(in: cast.community, as: .user(cast.member)).balance == 10)
            // It ends: the rule gets its last day.
            let ends = try await chores.update(daily.id, .init(description: .some(nil), endsOn: try day("2030-06-30")), as: cast.admin)
            #expect(ends.recurrenceRule == "FREQ=DAILY;UNTIL=20300630" && ends.description == nil && ends.recurrenceEndsAt != nil, "\(ends)")

            // Only admins; strangers do not even see it; bad values name their field.
            let member = await serviceError { try await chores.update(daily.id, .init(points: 1000), as: cast.member) }
            #expect(member?.code == .forbidden)
            let stranger = await serviceError { try await chores.update(daily.id, .init(points: 5), as: cast.outsider) }
            #expect(stranger?.code == .notFound)
            let points = await serviceError { try await chores.update(daily.id, .init(points: 0), as: cast.admin) }
            #expect(points?.field == "points")
            let once = try await chores.create(.init(title: "Tidy", points: 5, assignees: [cast.member.uuid]), in: cast.community, as: cast.admin)
            let notRecurring = await serviceError { try await chores.update(once.id, .init(endsOn: try day("2030-01-01")), as: cast.admin) }
            #expect(notRecurring?.code == .conflict && notRecurring?.field == "ends_on")

            // Archived: off the list, back when unarchived.
            _ = try await chores.setArchived(daily.id, true, as: cast.admin)
            #expect(!(try await chores.list(in: cast.community, as: .user(cast.member))).items.contains { $0.id == daily.id })
            _ = try await chores.setArchived(daily.id, false, as: cast.admin)
            #expect(try await chores.list(in: cast.community, as: .user(cast.member)).items.contains { $0.id == daily.id })

            // Deleted only while nobody has done it: the answer says to archive.
            let refused = await serviceError { try await chores.delete(daily.id, as: cast.admin) }
            #expect(refused?.code == .conflict && refused?.message.contains("archive") == true, "\(String(describing: refused))")
            let byMember = await serviceError { try await chores.delete(once.id, as: cast.member) }
            #expect(byMember?.code == .forbidden)
            try await chores.delete(once.id, as: cast.admin)
            let gone = await serviceError { try await chores.get(once.id, as: .user(cast.admin)) }
            #expect(gone?.code == .notFound)
        }
    }
}
