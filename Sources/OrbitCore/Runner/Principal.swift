/// Who asks: a user, or a child — a family member signed in on a paired device, who may only
/// see and do their own chores, completions, rewards and redemptions in the one community the
/// device was paired for (docs/chores.md, docs/security.md).
package enum Principal: Sendable, Equatable, Hashable {
    case user(UserID)
    case child(ChildSession)
}

/// A child signed in on a paired device: the family member and the device their token was issued
/// on. Row-level security reads both (`app.current_family_member_id`,
/// `app.current_child_device_id`): the device decides the one community the child reaches, and a
/// revoked device reaches nothing from that moment, whatever tokens it still holds.
package struct ChildSession: Sendable, Hashable {
    package var child: FamilyMemberID
    package var device: ChildDeviceID

    package init(child: FamilyMemberID, device: ChildDeviceID) {
        self.child = child
        self.device = device
    }
}
