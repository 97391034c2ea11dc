import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Membership: last admin, rejoin, delete and restore, audit atomicity")
struct MemberTests {
    @Test("the creator is the first admin and member_count comes from the database")
    func creation() async throws {
        try await withServices { services, _ in
            let creator = try await services.users.create(email: "c@example.com", displayName: "Cleo").id
            let community = try await services.communities.create(name: "Family", description: "Us", as: creator)
            #expect(community.memberCount == 1 && community.createdBy == creator)
            let members = (try await services.members.list(of: community.id, as: creator)).items
            #expect(members.map(\.role) == [.admin] && members.map(\.userID) == [creator])
            let log = (try await services.communities.auditLog(community.id, as: creator)).items
            #expect(log.map(\.action) == ["community.created"])
        }
    }

    @Test("the last admin can neither leave, be removed, nor be demoted")
    func lastAdmin() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            for attempt in [
                { try await services.members.leave(cast.community, as: cast.admin) },
                { _ = try await services.members.setRole(.member, of: cast.admin, in: cast.community, as: cast.admin) },
                { try await services.members.remove(cast.admin, from: cast.community, as: cast.admin) },
            ] as [() async throws -> Void] {
                let error = await serviceError(attempt)
                #expect(error?.code == .conflict)
            }
            // With a second admin, the first may go.
            _ = try await services.members.setRole(.admin, of: cast.member, in: cast.community, as: cast.admin)
            try await services.members.leave(cast.community, as: cast.admin)
            let admins = (try await services.members.list(of: cast.community, as: cast.member)).items.filter { $0.role == .admin }
            #expect(admins.map(\.userID) == [cast.member])
        }
    }

    @Test("two admins leaving at the same moment: one succeeds, one admin remains, one audit row")
    func concurrentLeaving() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            _ = try await services.members.setRole(.admin, of: cast.member, in: cast.community, as: cast.admin)
            // The one refused is refused as the last-admin conflict, not by any other failure.
            let refusals = await withTaskGroup(of: ServiceError.Code?.self) { group in
                for user in [cast.admin, cast.member] {
                    group.addTask { await serviceError { try await services.members.leave(cast.community, as: user) }?.code }
                }
                return await group.reduce(into: [ServiceError.Code?]()) { $0.append($1) }
            }
            #expect(refusals.filter { $0 == nil }.count == 1)
            #expect(refusals.filter { $0 == .conflict }.count == 1)
            let remaining = try await services.members.listAsOperator(of: cast.community, includeFormer: false)
            #expect(remaining.filter { $0.role == .admin }.count == 1)
            let stayer = try #require(remaining.first { $0.role == .admin }).userID
            let leftRows = (try await services.communities.auditLog(cast.community, as: stayer)).items.filter { $0.action == "member.left" }
            // The former member's leave (from Cast.make) plus exactly one of the two admins.
            #expect(leftRows.count == 2)
        }
    }

    @Test("rejoining reactivates the same membership row")
    func rejoin() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let before = try await services.members.listAsOperator(of: cast.community).first { $0.userID == cast.former }
            let again = try await services.members.add(cast.former, to: cast.community, as: cast.admin)
            #expect(again.id == before?.id && again.leftAt == nil)
            let community = try await services.communities.get(cast.community, as: cast.former)
            #expect(community.memberCount == 3)
        }
    }

    @Test("a deleted community disappears for its members; an operator restores it within 30 days, not after")
    func deleteAndRestore() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            try await services.communities.delete(cast.community, as: cast.admin)
            let hidden = await serviceError { try await services.communities.get(cast.community, as: cast.member) }
            #expect(hidden?.code == .notFound)
            #expect(try await services.communities.mine(as: cast.member).isEmpty)

            let restored = try await services.communities.restore(cast.community, as: cast.admin)
            #expect(restored.deletedAt == nil)
            let visible = try await services.communities.get(cast.community, as: cast.member)
            #expect(visible.id == cast.community)

            try await services.communities.delete(cast.community, as: cast.admin)
            try await database.withConnection { connection in
                try await connection.query("UPDATE communities SET deleted_at = now() - interval '31 days' WHERE id = \(cast.community)")
            }
            let tooLate = await serviceError { try await services.communities.restore(cast.community, as: cast.admin) }
            #expect(tooLate?.code == .conflict)
        }
    }

    @Test(
        "settings are validated: types, ranges, real time zones, no unknown keys",
        arguments: [
            #"{"allowMemberPosts": "yes"}"#, #"{"defaultReminderHours": 169}"#, #"{"defaultReminderHours": 1.5}"#,
            #"{"timezone": "Mars/Olympus_Mons"}"#, #"{"colour": "red"}"#, #"[1, 2]"#, "not json",
        ])
    func invalidSettings(json: String) {
        #expect(throws: ServiceError.self) { try CommunitySettings.parse(json: json) }
    }

    @Test("valid settings parse and merge over the current ones")
    func validSettings() throws {
        let parsed = try CommunitySettings.parse(json: #"{"timezone": "Europe/Berlin", "defaultReminderHours": 48}"#)
        let merged = CommunitySettings(allowMemberEvents: false, timezone: "UTC").merging(parsed)
        #expect(merged == CommunitySettings(allowMemberEvents: false, defaultReminderHours: 48, timezone: "Europe/Berlin"))
    }

    @Test(
        "names and emails are validated",
        arguments: [
            ("display_name", String(repeating: "x", count: 101)), ("display_name", "bell\u{7}"), ("display_name", "   "),
            ("email", "no-at-sign"), ("email", "a@b"), ("email", "two words@example.com"),
        ])
    func invalidUsers(field: String, value: String) async throws {
        try await withServices { services, _ in
            let error = await serviceError {
                field == "email"
                    ? try await services.users.create(email: value, displayName: "Valid")
                    : try await services.users.create(email: "valid@example.com", displayName: value)
            }
            #expect(error?.code == .invalidInput && error?.field == field)
        }
    }

    @Test("family members: one's own to add, rename and remove; visible to people one shares a community with")
    func family() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let kid = try await services.family.add(name: "Tommy", as: cast.member)
            _ = try await services.family.rename(kid.id, to: "Tom", as: cast.member)
            #expect(try await services.family.list(of: cast.member, as: cast.admin).map(\.name) == ["Tom"])
            #expect(try await services.family.list(of: cast.member, as: cast.outsider).isEmpty)
            let notYours = await serviceError { try await services.family.remove(kid.id, as: cast.admin) }
            #expect(notYours?.code == .notFound)
            try await services.family.remove(kid.id, as: cast.member)
            #expect(try await services.family.list(as: cast.member).isEmpty)
        }
    }
}
