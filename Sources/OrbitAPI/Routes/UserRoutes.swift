import Foundation
import Hummingbird
import OrbitCore

extension OrbitAPI {
    func addUserRoutes(to router: RouterGroup<APIContext>) {
        let me = router.group("users/me")
        me.get { _, context in
            let user = try context.requireUser()
            return JSON(try await services.users.get(user, as: user))
        }
        struct ProfileChange: Decodable {
            var displayName: String?
            var email: String?
            var avatarUrl: String?
            var language: String?
            var timezone: String?
        }
        me.patch { request, context in
            let body = try await request.decodeJSON(ProfileChange.self, context: context)
            let user = try context.requireUser()
            return JSON(
                try await services.users.updateProfile(
                    displayName: body.displayName, email: body.email, avatarURL: body.avatarUrl, language: body.language, timezone: body.timezone,
                    as: user))
        }

        // Notification preferences across communities; a community's own switches override them there.
        me.get("notification-preferences") { _, context in
            JSON(try await services.users.notificationPreferences(as: try context.requireUser()))
        }
        struct PreferencesChange: Decodable {
            var expenses: Bool?
            var settlements: Bool?
            var reminders: Bool?
            var weeklyDigest: Bool?
        }
        me.patch("notification-preferences") { request, context in
            let body = try await request.decodeJSON(PreferencesChange.self, context: context)
            return JSON(
                try await services.users.updateNotificationPreferences(
                    expenses: body.expenses, settlements: body.settlements, reminders: body.reminders, weeklyDigest: body.weeklyDigest,
                    as: try context.requireUser()))
        }

        // The user's own data, portable: the account, preferences, payment handles, family, memberships.
        me.get("export") { _, context in
            JSON(try await services.users.exportData(as: try context.requireUser()))
        }

        // Account deletion: a 7-day grace period, cancellable (the App Store wants it in the app).
        struct DeletionScheduled: Encodable, Sendable {
            var deletesAt: Date
            enum CodingKeys: String, CodingKey { case deletesAt = "deletes_at" }
        }
        me.post("deletion") { _, context in
            Created(
                DeletionScheduled(deletesAt: try await services.lifecycle.requestAccountDeletion(as: try context.requireUser())), status: .accepted)
        }
        me.delete("deletion") { _, context in
            try await services.lifecycle.cancelAccountDeletion(as: try context.requireUser())
            return NoContent()
        }

        // APNs device tokens: where the user's pushes go.
        struct DeviceBody: Decodable {
            var token: String
            var environment: String
            var bundleId: String
            var locale: String?
        }
        me.get("devices") { _, context in
            JSON(Items(try await services.devices.list(as: try context.requireUser())))
        }
        me.post("devices") { request, context in
            let body = try await request.decodeJSON(DeviceBody.self, context: context)
            return Created(
                try await services.devices.register(
                    token: body.token, environment: try APNsEnvironment.parse(body.environment, field: "environment"), bundleID: body.bundleId,
                    locale: body.locale, as: try context.requireUser()))
        }
        me.delete("devices/:token") { _, context in
            guard let token = context.parameters.get("token") else { throw APIProblem.validation(field: "token", "token is required.") }
            try await services.devices.remove(token: token, as: try context.requireUser())
            return NoContent()
        }

        // A co-member's public profile.
        router.get("users/:user_id") { _, context in
            JSON(try await services.users.profile(try context.id("user_id"), as: try context.requireUser()))
        }

        // Family members: dependents a parent manages.
        struct FamilyMemberBody: Decodable {
            var name: String
        }
        me.get("family") { _, context in
            let user = try context.requireUser()
            return JSON(Items(try await services.family.list(as: user)))
        }
        me.post("family") { request, context in
            let body = try await request.decodeJSON(FamilyMemberBody.self, context: context)
            let user = try context.requireUser()
            return try await creating(
                .familyMembers, request, context: context, stored: { try await services.family.member(FamilyMemberID($0), as: user) }
            ) {
                try await services.family.add(name: body.name, as: user)
            }
        }
        me.patch("family/:family_member_id") { request, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            let body = try await request.decodeJSON(FamilyMemberBody.self, context: context)
            return JSON(try await services.family.rename(id, to: body.name, as: try context.requireUser()))
        }
        // A family member's avatar by upload: an image the parent (or the child, on their paired
        // device) uploaded to a community; DELETE clears it.
        struct Avatar: Decodable {
            var mediaId: UUID
        }
        me.put("family/:family_member_id/avatar") { request, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            let body = try await request.decodeJSON(Avatar.self, context: context)
            return JSON(try await services.family.setAvatar(id, to: MediaID(body.mediaId), as: try context.requireUser()))
        }
        me.delete("family/:family_member_id/avatar") { _, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            return JSON(try await services.family.setAvatar(id, to: nil, as: try context.requireUser()))
        }
        me.delete("family/:family_member_id") { _, context in
            try await services.family.remove(try context.id("family_member_id", as: FamilyMemberID.self), as: try context.requireUser())
            return NoContent()
        }

        // Two parents: a family member's guardians. A guardian invites someone they share a
        // community with, who accepts (or declines); a guardian leaves by themselves, withdraws an
        // invitation, or makes another guardian the guardian of record.
        struct GuardianBody: Decodable {
            var userId: UserID
        }
        me.get("family/:family_member_id/guardians") { _, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            return JSON(Items(try await services.family.guardians(of: id, as: try context.requireUser())))
        }
        me.post("family/:family_member_id/guardians") { request, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            let body = try await request.decodeJSON(GuardianBody.self, context: context)
            return Created(try await services.family.inviteGuardian(body.userId, of: id, as: try context.requireUser()))
        }
        me.delete("family/:family_member_id/guardians/:user_id") { _, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            try await services.family.removeGuardian(try context.id("user_id"), of: id, as: try context.requireUser())
            return NoContent()
        }
        me.put("family/:family_member_id/guardian-of-record") { request, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            let body = try await request.decodeJSON(GuardianBody.self, context: context)
            return JSON(try await services.family.setGuardianOfRecord(body.userId, of: id, as: try context.requireUser()))
        }
        me.get("guardian-invitations") { _, context in
            JSON(Items(try await services.family.guardianInvitations(as: try context.requireUser())))
        }
        me.post("guardian-invitations/:family_member_id/accept") { _, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            return JSON(try await services.family.acceptGuardianship(of: id, as: try context.requireUser()))
        }
        me.delete("guardian-invitations/:family_member_id") { _, context in
            let id = try context.id("family_member_id", as: FamilyMemberID.self)
            let user = try context.requireUser()
            try await services.family.declineGuardianship(of: id, as: user)
            return NoContent()
        }
    }
}
