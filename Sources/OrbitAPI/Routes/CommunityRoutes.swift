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
        // "My groups"; archived communities only with `archived=true`.
        router.get("communities") { request, context in
            let user = try context.requireUser()
            return JSON(Items(try await services.communities.mine(archived: try request.queryBool("archived"), as: user)))
        }
        router.post("communities") { request, context in
            let body = try await request.decodeJSON(CommunityBody.self, context: context)
            guard let name = body.name else { throw APIProblem.validation(field: "name", "name is required.") }
            let user = try context.requireUser()
            return try await creating(
                .communities, request, context: context, stored: { try await services.communities.get(CommunityID($0), as: user) }
            ) {
                try await services.communities.create(
                    name: name, description: body.description, iconURL: body.iconUrl, settings: body.settings ?? CommunitySettings(),
                    as: user
                )
            }
        }

        let community = router.group("communities/:community_id")
        community.get { _, context in
            Tagged(try await services.communities.get(try context.id("community_id"), as: try context.requireUser()))
        }
        community.patch { request, context in
            let body = try await request.decodeJSON(CommunityBody.self, context: context)
            let id: CommunityID = try context.id("community_id")
            return Tagged(
                try await request.underIfMatch(.entity(.community, id.uuid)) {
                    try await services.communities.update(
                        id, name: body.name, description: body.description, iconURL: body.iconUrl, settings: body.settings,
                        as: try context.requireUser())
                }
            )
        }
        community.delete { request, context in
            let id: CommunityID = try context.id("community_id")
            try await request.underIfMatch(.entity(.community, id.uuid)) {
                try await services.communities.delete(id, as: try context.requireUser())
            }
            return NoContent()
        }
        // An admin archives a community (read-only, listed on request) or unarchives it.
        community.post("archive") { _, context in
            JSON(try await services.communities.archive(try context.id("community_id"), as: try context.requireUser()))
        }
        community.post("unarchive") { _, context in
            JSON(try await services.communities.unarchive(try context.id("community_id"), as: try context.requireUser()))
        }
        // An admin restores the community within 30 days of its deletion.
        community.post("restore") { _, context in
            JSON(try await services.communities.restore(try context.id("community_id"), as: try context.requireUser()))
        }
        struct SubscriptionBody: Decodable, NullableFields {
            var status: String
            var expiresAt: Date?
            static let nullableFields: Set<String> = ["expires_at"]
        }
        // Operators record what billing decided; a refused attempt is audit-logged.
        community.put("subscription") { request, context in
            let body = try await request.decodeJSON(SubscriptionBody.self, context: context)
            return JSON(
                try await services.communities.setSubscription(
                    try context.id("community_id"), status: try SubscriptionStatus.parse(body.status, field: "status"), expiresAt: body.expiresAt,
                    as: try context.requireUser()
                )
            )
        }

        // Members and roles.
        community.get("members") { request, context in
            let former = try request.queryBool("include_former")
            let limit = try request.queryInt("limit", default: 100, range: 1...500)
            return JSON(
                try await services.members.list(
                    of: try context.id("community_id"), includeFormer: former, limit: limit, cursor: request.query("cursor"),
                    as: try context.requireUser())
            )
        }
        // One's own membership: nickname and notification preferences.
        community.get("members/me") { _, context in
            Tagged(try await services.members.mine(in: try context.id("community_id"), as: try context.requireUser()))
        }
        community.patch("members/me") { request, context in
            let body = try await request.decodeJSON(MembershipPatch.self, context: context)
            let id: CommunityID = try context.id("community_id")
            return Tagged(
                try await request.underIfMatch(.membership(id)) {
                    try await services.members.updateMine(
                        in: id, nickname: body.nickname, notificationPrefs: try body.preferences(), pinned: body.pinned, position: body.position,
                        as: try context.requireUser())
                }
            )
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
        // Whether a member is in new splits among everyone, and their default weight.
        struct SplitDefaults: Decodable {
            var active: Bool?
            var defaultWeight: Int?
        }
        community.patch("members/:user_id") { request, context in
            let body = try await request.decodeJSON(SplitDefaults.self, context: context)
            return JSON(
                try await services.members.setSplitDefaults(
                    of: try context.id("user_id"), in: try context.id("community_id"), active: body.active, defaultWeight: body.defaultWeight,
                    as: try context.requireUser()))
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
        // Guests: people without an account, whom any member adds by name (docs/money.md, "Guests").
        community.get("guests") { request, context in
            let limit = try request.queryInt("limit", default: 100, range: 1...500)
            return JSON(
                try await services.members.guests(
                    of: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
        struct GuestName: Decodable {
            var name: String
        }
        community.post("guests") { request, context in
            let body = try await request.decodeJSON(GuestName.self, context: context)
            return Created(try await services.members.addGuest(named: body.name, to: try context.id("community_id"), as: try context.requireUser()))
        }
        community.patch("guests/:member_id") { request, context in
            let body = try await request.decodeJSON(GuestName.self, context: context)
            return JSON(
                try await services.members.renameGuest(
                    try context.id("member_id"), in: try context.id("community_id"), to: body.name, as: try context.requireUser()))
        }
        community.delete("guests/:member_id") { _, context in
            try await services.members.removeGuest(try context.id("member_id"), in: try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }
        struct GuestInvite: Decodable {
            var expiresAt: Date?
        }
        community.post("guests/:member_id/invite") { request, context in
            let body = try await request.decodeJSON(GuestInvite.self, context: context)
            return Created(
                linked(
                    try await services.members.inviteGuest(
                        try context.id("member_id"), in: try context.id("community_id"), expiresAt: body.expiresAt, as: try context.requireUser())))
        }
        community.post("leave") { _, context in
            try await services.members.leave(try context.id("community_id"), as: try context.requireUser())
            return NoContent()
        }

        // Invites and joining by code.
        community.get("invites") { request, context in
            let limit = try request.queryInt("limit", default: 50, range: 1...200)
            let page = try await services.invites.list(
                of: try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser())
            return JSON(Page(items: page.items.map(linked), nextCursor: page.nextCursor))
        }
        struct NewInvite: Decodable {
            var maxUses: Int?
            var expiresAt: Date?
        }
        community.post("invites") { request, context in
            let body = try await request.decodeJSON(NewInvite.self, context: context)
            let user = try context.requireUser()
            return try await creating(
                .invites, request, context: context, stored: { linked(try await services.invites.get(InviteID($0), as: user)) }
            ) {
                linked(
                    try await services.invites.create(to: try context.id("community_id"), maxUses: body.maxUses, expiresAt: body.expiresAt, as: user))
            }
        }
        community.delete("invites/:invite_id") { _, context in
            try await services.invites.revoke(
                try context.id("invite_id", as: InviteID.self), in: try context.id("community_id"), as: try context.requireUser())
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
            return JSON(
                try await services.communities.auditLog(
                    try context.id("community_id"), limit: limit, cursor: request.query("cursor"), as: try context.requireUser()))
        }
    }
}

extension OrbitAPI {
    /// What an invite shows before joining, to anyone with the code (no token; a limit per client
    /// address of its own): the community's name, its member count and the inviter's name.
    func addInvitePreviewRoutes(open router: RouterGroup<APIContext>) {
        router.get("invites/:code") { _, context in
            let text = context.parameters.get("code") ?? ""
            guard let code = InviteCode(text) else { throw ServiceError.notFound("Invite code \(text)") }
            return JSON(try await services.invites.preview(code))
        }
    }

    /// An invite with the link that opens it (`join_url`).
    func linked(_ invite: Invite) -> InviteLink {
        InviteLink(invite: invite, joinURL: configuration.publicURL.map { InviteLink.joinURL(base: $0, code: invite.code) })
    }
}

/// An invite and its `join_url`: `--public-url` + `/invites/{code}`, the address of its preview
/// (`GET /invites/{code}`), which the app opens as a universal link; null without a public URL.
struct InviteLink: Codable, Sendable {
    var invite: Invite
    var joinURL: String?

    enum CodingKeys: String, CodingKey { case joinURL = "join_url" }

    static func joinURL(base: String, code: String) -> String {
        (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/invites/" + code
    }

    init(invite: Invite, joinURL: String?) {
        self.invite = invite
        self.joinURL = joinURL
    }

    func encode(to encoder: any Encoder) throws {
        try invite.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(joinURL, forKey: .joinURL)
    }

    init(from decoder: any Decoder) throws {
        invite = try Invite(from: decoder)
        joinURL = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .joinURL)
    }
}

/// `PATCH /communities/{id}/members/me`: a key left out is left as it is; `"nickname": null`
/// clears the nickname, `"position": null` the position among pinned communities.
struct MembershipPatch: Decodable, NullableFields {
    static let nullableFields: Set<String> = ["nickname", "position"]
    var nickname: String??
    var notificationPrefs: [String: Bool]?
    var pinned: Bool?
    var position: Int??

    enum CodingKeys: String, CodingKey { case nickname, notificationPrefs, pinned, position }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nickname =
            container.contains(.nickname)
            ? .some(try container.decodeNil(forKey: .nickname) ? nil : try container.decode(String.self, forKey: .nickname)) : .none
        notificationPrefs = try container.decodeIfPresent([String: Bool].self, forKey: .notificationPrefs)
        pinned = try container.decodeIfPresent(Bool.self, forKey: .pinned)
        position =
            container.contains(.position)
            ? .some(try container.decodeNil(forKey: .position) ? nil : try container.decode(Int.self, forKey: .position)) : .none
    }

    /// The preferences by notification type, each key checked.
    func preferences() throws -> [NotificationType: Bool]? {
        try notificationPrefs.map { prefs in
            var result: [NotificationType: Bool] = [:]
            for (key, value) in prefs { result[try NotificationType.parse(key, field: "notification_prefs")] = value }
            return result
        }
    }
}
