import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Invites")
struct InviteTests {
    @Test("codes are 6 characters without look-alikes, and are matched case-insensitively")
    func codes() {
        for _ in 0..<200 {
            let code = InviteCode.random().value
            #expect(code.count == 6 && !code.contains { "0O1IL".contains($0) })
        }
        #expect(InviteCode("abc234")?.value == "ABC234")
        #expect(InviteCode("ABC0DE") == nil && InviteCode("ABCDE") == nil)
    }

    @Test("redeeming: joins, in any case; already a member, expired, used up, deleted community and unknown codes each say so")
    func redeemOutcomes() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let invite = try await services.invites.create(to: cast.community, maxUses: 1, as: cast.admin)
            let joined = try await services.invites.redeem(try InviteCode.parse(invite.code.lowercased()), as: cast.outsider)
            #expect(joined.communityID == cast.community && !joined.rejoined)

            let again = await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.outsider) }
            #expect(again?.message.contains("already a member") == true)

            let late = try await services.users.create(email: "late@example.com", displayName: "Late").id
            let usedUp = await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: late) }
            #expect(usedUp?.message.contains("used up") == true)

            let expiring = try await services.invites.create(to: cast.community, expiresAt: Date().addingTimeInterval(3600), as: cast.admin)
            try await database.withConnection { connection in
                try await connection.query("UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = \(expiring.id)")
            }
            let expired = await serviceError { try await services.invites.redeem(try InviteCode.parse(expiring.code), as: late) }
            #expect(expired?.message.contains("expired") == true)

            let open = try await services.invites.create(to: cast.community, as: cast.admin)
            try await services.communities.delete(cast.community, as: cast.admin)
            let deleted = await serviceError { try await services.invites.redeem(try InviteCode.parse(open.code), as: late) }
            #expect(deleted?.message.contains("deleted") == true)

            let unknown = await serviceError { try await services.invites.redeem(try InviteCode.parse("ZZZZZZ"), as: late) }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test("a preview, before joining and without a user: the name, member count and inviter; expired and used up are gone; the rest is not found")
    func preview() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let community = try await services.communities.get(cast.community, as: cast.admin)
            let invite = try await services.invites.create(to: cast.community, maxUses: 1, as: cast.admin)
            let shown = try await services.invites.preview(try InviteCode.parse(invite.code.lowercased()))
            let admin = try await services.users.get(cast.admin, as: cast.admin)
            #expect(
                shown
                    == InvitePreview(
                        code: invite.code, communityName: community.name, memberCount: community.memberCount, inviterName: admin.displayName,
                        expiresAt: nil))
            // Looking joins nobody and uses nothing.
            #expect(try await services.communities.get(cast.community, as: cast.admin).memberCount == community.memberCount)
            _ = try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.outsider)
            #expect(await serviceError { try await services.invites.preview(try InviteCode.parse(invite.code)) }?.code == .gone)

            let expiring = try await services.invites.create(to: cast.community, expiresAt: Date().addingTimeInterval(3600), as: cast.admin)
            try await database.withConnection { connection in
                try await connection.query("UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = \(expiring.id)")
            }
            let expired = await serviceError { try await services.invites.preview(try InviteCode.parse(expiring.code)) }
            #expect(expired?.code == .gone && expired?.message.contains("expired") == true)

            let revoked = try await services.invites.create(to: cast.community, as: cast.admin)
            try await services.invites.revoke(revoked.id, as: cast.admin)
            #expect(await serviceError { try await services.invites.preview(try InviteCode.parse(revoked.code)) }?.code == .notFound)
            let open = try await services.invites.create(to: cast.community, as: cast.admin)
            try await services.communities.delete(cast.community, as: cast.admin)
            let deleted = await serviceError { try await services.invites.preview(try InviteCode.parse(open.code)) }
            #expect(deleted?.code == .notFound && deleted?.message.contains(community.name) == false)
        }
    }

    @Test("a former member rejoins through an invite in their old membership row")
    func rejoinThroughInvite() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let old = try await services.members.listAsOperator(of: cast.community).first { $0.userID == cast.former }
            let invite = try await services.invites.create(to: cast.community, as: cast.admin)
            let redemption = try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.former)
            #expect(redemption.rejoined && redemption.memberID == old?.id)
        }
    }

    @Test("20 concurrent redemptions of a 5-use code admit exactly 5 users")
    func concurrentRedemptions() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let invite = try await services.invites.create(to: cast.community, maxUses: 5, as: cast.admin)
            var users: [UserID] = []
            for index in 0..<20 {
                users.append(try await services.users.create(email: "u\(index)@example.com", displayName: "User \(index)").id)
            }
            let refusals = await withTaskGroup(of: String?.self) { group in
                for user in users {
                    group.addTask { await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: user) }?.message }
                }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(refusals.filter { $0 == nil }.count == 5)
            // The other 15 waited for the invite's row lock and were told it is used up.
            #expect(refusals.compactMap { $0 }.filter { $0.contains("used up") }.count == 15)
            let remaining = (try await services.invites.list(of: cast.community, as: cast.admin)).items.first { $0.id == invite.id }
            #expect(remaining?.usesRemaining == 0)
            let community = try await services.communities.get(cast.community, as: cast.admin)
            #expect(community.memberCount == 2 + 5)
        }
    }

    @Test("revoking an invite removes it, is audit-logged, and admins only")
    func revoke() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let invite = try await services.invites.create(to: cast.community, as: cast.admin)
            let byMember = await serviceError { try await services.invites.revoke(invite.id, as: cast.member) }
            #expect(byMember?.code == .notFound)  // members cannot even see invites
            try await services.invites.revoke(invite.id, as: cast.admin)
            #expect((try await services.invites.list(of: cast.community, as: cast.admin)).items.isEmpty)
            let actions = (try await services.communities.auditLog(cast.community, as: cast.admin)).items.map(\.action)
            #expect(actions.prefix(2) == ["invite.revoked", "invite.created"])
        }
    }
}
