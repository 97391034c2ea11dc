import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addCommunityRoutes(to router: RouterGroup<APIContext>) {
        struct CommunityBody: Decodable {
            var name: String?
            var description: String?
            var iconUrl: String?
            var settings: CommunitySettings?
        }
        router.get("communities") { _, context in
            let user = try context.requireUser()
            return JSON(Items(try await services.communities.mine(as: user)))
        }
        router.post("communities") { request, context in
            let body = try await request.decodeJSON(CommunityBody.self, context: context)
            guard let name = body.name else { throw APIProblem.validation(field: "name", "name is required.") }
            return Created(
                try await services.communities.create(
                    name: name, description: body.description, iconURL: body.iconUrl, settings: body.settings ?? CommunitySettings(),
                    as: try context.requireUser()
                )
            )
        }

        let community = router.group("communities/:community_id")
        community.get { _, context in
            JSON(try await services.communities.get(try context.id("community_id"), as: try context.requireUser()))
        }
        community.patch { request, context in
            let body = try await request.decodeJSON(CommunityBody.self, context: context)
            return JSON(
                try await services.communities.update(
                    try context.id("community_id"), name: body.name, description: body.description, iconURL: body.iconUrl,
                    settings: body.settings, as: try context.requireUser()
                )
            )
        }
        community.delete { _, context in
            try await services.communities.delete(try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }

        // Members and roles.
        community.get("members") { request, context in
            let former = try request.queryBool("include_former")
            return JSON(
                Items(try await services.members.list(of: try context.id("community_id"), includeFormer: former, as: try context.requireUser())))
        }
        struct NewMember: Decodable {
            var userId: UserID
            var role: MemberRole?
        }
        community.post("members") { request, context in
            let body = try await request.decodeJSON(NewMember.self, context: context)
            return Created(
                try await services.members.add(
                    body.userId, to: try context.id("community_id"), role: body.role ?? .member, as: try context.requireUser())
            )
        }
        community.delete("members/:user_id") { _, context in
            try await services.members.remove(try context.id("user_id"), from: try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }
        struct RoleChange: Decodable {
            var role: MemberRole
        }
        community.put("members/:user_id/role") { request, context in
            let body = try await request.decodeJSON(RoleChange.self, context: context)
            return JSON(
                try await services.members.setRole(
                    body.role, of: try context.id("user_id"), in: try context.id("community_id"), as: try context.requireUser())
            )
        }
        community.post("leave") { _, context in
            try await services.members.leave(try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }

        // Invites and joining by code.
        community.get("invites") { _, context in
            JSON(Items(try await services.invites.list(of: try context.id("community_id"), as: try context.requireUser())))
        }
        struct NewInvite: Decodable {
            var maxUses: Int?
            var expiresAt: Date?
        }
        community.post("invites") { request, context in
            let body = try await request.decodeJSON(NewInvite.self, context: context)
            return Created(
                try await services.invites.create(
                    to: try context.id("community_id"), maxUses: body.maxUses, expiresAt: body.expiresAt, as: try context.requireUser()
                )
            )
        }
        community.delete("invites/:invite_id") { _, context in
            try await services.invites.revoke(try context.id("invite_id", as: InviteID.self), as: try context.requireUser())
            return NoContent()
        }
        struct JoinByCode: Decodable {
            var code: String
        }
        router.post("invites/redeem") { request, context in
            let body = try await request.decodeJSON(JoinByCode.self, context: context)
            return JSON(try await services.invites.redeem(try InviteCode.parse(body.code), as: try context.requireUser()))
        }

        community.get("audit-log") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            return JSON(Items(try await services.communities.auditLog(try context.id("community_id"), limit: limit, as: try context.requireUser())))
        }
    }
}
