import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Membership: last admin, leaving at once, rejoin, one's own settings")
struct MemberTests {
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

    @Test("one's own membership: a nickname and notification types turned off, which then are not sent")
    func membershipSettings() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let mine = try await services.members.updateMine(
                in: cast.community, nickname: .some("Maxi"), notificationPrefs: [.newPost: false], as: cast.member)
            #expect(mine.member.nickname == "Maxi" && mine.notificationPrefs == ["new_post": false])
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Hello"), as: cast.admin)
            #expect((try await services.notifications.list(as: cast.member)).items.isEmpty)
            let cleared = try await services.members.updateMine(in: cast.community, nickname: .some(nil), as: cast.member)
            #expect(cleared.member.nickname == nil && cleared.notificationPrefs == ["new_post": false])
        }
    }
}
