import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Two parents: a child's guardians, invited and accepted; each manages the child; the last cannot leave", .serialized)
struct GuardianTests {
    @Test(
        "Mum invites Dad, who accepts: then, not before, he sets Mia's PIN, pairs and revokes her devices; nobody else does; invitations are for contacts, once"
    )
    func inviteAndAccept() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            // The neighbour (an admin of the club Mum is in) and Dad (the household's admin) are
            // not Mia's: the takeover stays refused until an invitation is accepted.
            _ = try await services.members.add(family.mum, to: family.next, as: family.neighbour)
            let invited = try await parents.inviteGuardian(family.dad, of: family.mia, as: family.mum)
            #expect(invited.acceptedAt == nil && !invited.ofRecord && invited.invitedBy == family.mum && invited.familyMemberName == "Mia")
            #expect(try await parents.guardianInvitations(as: family.dad).map(\.familyMemberID) == [family.mia])
            for (who, community) in [(family.dad, family.home), (family.neighbour, family.next), (family.lodger, family.home)] {
                let pin = await serviceError { try await parents.setPIN("0000", for: family.mia, in: community, as: who) }
                #expect(pin?.code == .forbidden && pin?.rule == "a child's sign-in is managed by the child's own guardians only", "\(who)")
                let pair = await serviceError { try await parents.startPairing(for: family.mia, in: community, as: who) }
                #expect(pair?.code == .forbidden)
            }

            let accepted = try await parents.acceptGuardianship(of: family.mia, as: family.dad)
            #expect(accepted.acceptedAt != nil && accepted.userID == family.dad)
            #expect(try await parents.guardianInvitations(as: family.dad).isEmpty)
            let again = await serviceError { try await parents.acceptGuardianship(of: family.mia, as: family.dad) }
            #expect(again?.code == .notFound)
            let guardians = try await parents.guardians(of: family.mia, as: family.dad)
            #expect(guardians.map(\.userID) == [family.mum, family.dad] && guardians.map(\.ofRecord) == [true, false])
            #expect(guardians.map(\.displayName) == ["Mum", "Dad"])
            // Dad's family lists Mia now (not Leo), and he renames her.
            #expect(try await parents.list(as: family.dad).map(\.id) == [family.mia])
            #expect(try await parents.rename(family.mia, to: "Mia P.", as: family.dad).name == "Mia P.")
            let leo = await serviceError { try await parents.setPIN("1234", for: family.leo, in: family.home, as: family.dad) }
            #expect(leo?.code == .forbidden)

            // Dad manages Mia's sign-in: a PIN, a device he pairs, the list, a revocation.
            try await parents.setPIN("2468", for: family.mia, in: family.home, as: family.dad)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.dad)
            let device = try await parents.finishPairing(code: pairing.pairingCode)
            guard case .signedIn = try await parents.signInChild(deviceToken: device.deviceToken, pin: "2468") else {
                Issue.record("Dad's PIN does not sign Mia in")
                return
            }
            #expect(try await parents.devices(of: family.mia, in: family.home, as: family.mum).map(\.id) == [pairing.deviceID])
            try await parents.revokeDevices(of: family.mia, in: family.home, device: pairing.deviceID, as: family.mum)
            #expect(try await parents.devices(of: family.mia, in: family.home, as: family.dad).map(\.status) == [.revoked])
            // Still nobody else: the neighbour, an admin where Mum is a member, and the lodger.
            for (who, community) in [(family.neighbour, family.next), (family.lodger, family.home)] {
                let list = await serviceError { try await parents.devices(of: family.mia, in: community, as: who) }
                #expect(list?.code == .forbidden)
                let revoke = await serviceError { try await parents.revokeDevices(of: family.mia, in: community, as: who) }
                #expect(revoke?.code == .forbidden)
                let guardiansList = await serviceError { try await parents.guardians(of: family.mia, as: who) }
                #expect(guardiansList?.code == .notFound)
            }

            // Invitations: only a guardian sends one, to someone they share a community with, once.
            let byLodger = await serviceError { try await parents.inviteGuardian(family.lodger, of: family.mia, as: family.lodger) }
            #expect(byLodger?.code == .forbidden)
            let stranger = try await services.users.create(email: "stranger@example.com", displayName: "Stranger").id
            let noContact = await serviceError { try await parents.inviteGuardian(stranger, of: family.mia, as: family.mum) }
            #expect(noContact?.code == .notFound)
            let herself = await serviceError { try await parents.inviteGuardian(family.mum, of: family.mia, as: family.mum) }
            #expect(herself?.code == .notFound)
            let twice = await serviceError { try await parents.inviteGuardian(family.dad, of: family.mia, as: family.mum) }
            #expect(twice?.code == .conflict && twice?.field == "user_id")
            // An invitation withdrawn, one declined.
            _ = try await parents.inviteGuardian(family.lodger, of: family.mia, as: family.dad)
            try await parents.removeGuardian(family.lodger, of: family.mia, as: family.mum)
            #expect(try await parents.guardianInvitations(as: family.lodger).isEmpty)
            _ = try await parents.inviteGuardian(family.lodger, of: family.leo, as: family.mum)
            try await parents.declineGuardianship(of: family.leo, as: family.lodger)
            #expect(try await parents.guardians(of: family.leo, as: family.mum).map(\.userID) == [family.mum])

            let audited = try await database.withConnection { connection in
                try await connection.query("SELECT action FROM audit_log WHERE action LIKE 'family.guardian%' ORDER BY created_at, action")
                    .map { try $0.decode("action", as: String.self) }
            }
            #expect(
                audited == [
                    "family.guardian_invited", "family.guardian_accepted", "family.guardian_invited", "family.guardian_invitation_withdrawn",
                    "family.guardian_invited", "family.guardian_declined",
                ], "\(audited)")
        }
    }

    @Test(
        "the guardian of record owes the child's new shares and leaves only once another is it; one guardian does not remove another; the last cannot leave"
    )
    func guardianOfRecordAndLeaving() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            _ = try await parents.inviteGuardian(family.dad, of: family.mia, as: family.mum)
            _ = try await parents.acceptGuardianship(of: family.mia, as: family.dad)
            let before = try await services.expenses.addExpense(
                in: family.home, description: "Zoo", total: try dollars("20.00"), paidBy: family.lodger,
                split: .equal([.user(family.lodger), .familyMember(family.mia)]), as: family.lodger)
            #expect(before.splits.first { $0.familyMemberID == family.mia }?.userID == family.mum)

            // Mum is the guardian of record: she cannot leave yet; Dad cannot remove her.
            let mumLeaves = await serviceError { try await parents.removeGuardian(family.mum, of: family.mia, as: family.mum) }
            #expect(mumLeaves?.code == .conflict && mumLeaves?.message.contains("guardian of record") == true, "\(String(describing: mumLeaves))")
            let dadRemovesMum = await serviceError { try await parents.removeGuardian(family.mum, of: family.mia, as: family.dad) }
            #expect(dadRemovesMum?.code == .forbidden)
            // Nor does Dad remove Mia (Mum's to remove), nor make the lodger her guardian of record.
            let dadRemovesMia = await serviceError { try await parents.remove(family.mia, as: family.dad) }
            #expect(dadRemovesMia?.code == .forbidden)
            let lodger = await serviceError { try await parents.setGuardianOfRecord(family.lodger, of: family.mia, as: family.dad) }
            #expect(lodger?.code == .conflict && lodger?.field == "user_id")
            let byLodger = await serviceError { try await parents.setGuardianOfRecord(family.lodger, of: family.mia, as: family.lodger) }
            #expect(byLodger?.code == .forbidden)

            // Mum answers for Mia to Saturday's match, and invites the lodger too.
            let match = try await services.events.create(
                in: family.home, EventDraft(title: "Match", startsAt: Date().addingTimeInterval(86_400)), as: family.mum)
            _ = try await services.events.rsvp(match.id, status: .yes, familyMember: family.mia, as: family.mum)
            _ = try await parents.inviteGuardian(family.lodger, of: family.mia, as: family.mum)

            // Dad becomes the guardian of record: new shares are his; the earlier one stays Mum's.
            // Mia's answer moves with the record: still one, now Dad's to change.
            #expect(try await parents.setGuardianOfRecord(family.dad, of: family.mia, as: family.dad).userID == family.dad)
            let answers = try await services.events.rsvps(match.id, as: family.dad).items.filter { $0.rsvp.familyMemberID == family.mia }
            #expect(answers.map(\.rsvp.userID) == [family.dad], "\(answers)")
            _ = try await services.events.rsvp(match.id, status: .no, familyMember: family.mia, as: family.dad)
            let changed = try await services.events.rsvps(match.id, as: family.dad).items.filter { $0.rsvp.familyMemberID == family.mia }
            #expect(changed.map(\.rsvp.status) == [.no])
            // Dad may not remove Mia while Mum is a guardian too: she leaves first.
            let withMum = await serviceError { try await parents.remove(family.mia, as: family.dad) }
            #expect(withMum?.code == .conflict, "\(String(describing: withMum))")
            let after = try await services.expenses.addExpense(
                in: family.home, description: "Cinema", total: try dollars("20.00"), paidBy: family.lodger,
                split: .equal([.user(family.lodger), .familyMember(family.mia)]), as: family.lodger)
            #expect(after.splits.first { $0.familyMemberID == family.mia }?.userID == family.dad)
            #expect(
                try await services.expenses.expense(before.id, as: family.mum).splits.first { $0.familyMemberID == family.mia }?.userID == family.mum)

            // Mum leaves: her earlier share stays hers, as a plain share; she manages Mia no more;
            // her invitation to the lodger, not accepted, goes with her.
            try await parents.removeGuardian(family.mum, of: family.mia, as: family.mum)
            #expect(try await parents.guardianInvitations(as: family.lodger).isEmpty)
            let stale = await serviceError { try await parents.acceptGuardianship(of: family.mia, as: family.lodger) }
            #expect(stale?.code == .notFound)
            let kept = try await services.expenses.expense(before.id, as: family.mum).splits.filter { $0.userID == family.mum }
            #expect(kept.map(\.amount) == [1000] && kept.allSatisfy { $0.familyMemberID == nil }, "\(kept)")
            let mumPIN = await serviceError { try await parents.setPIN("1234", for: family.mia, in: family.home, as: family.mum) }
            #expect(mumPIN?.code == .forbidden)
            #expect(try await parents.list(as: family.mum).map(\.id) == [family.leo])
            // The last guardian cannot leave: the family member is removed instead.
            let last = await serviceError { try await parents.removeGuardian(family.dad, of: family.mia, as: family.dad) }
            #expect(last?.code == .conflict && last?.message.contains("last guardian") == true, "\(String(describing: last))")
            try await parents.remove(family.mia, as: family.dad)
            #expect(try await parents.list(as: family.dad).isEmpty)
        }
    }

    @Test(
        "a co-parent who is not an admin sets the child's chores and rewards, approves them, and sees what the child sees; a device they pair in their own community"
    )
    func coParentManagesChores() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            // The lodger, a plain member, becomes Leo's second guardian (not Mia's).
            let lou = family.lodger
            let before = await serviceError {
                try await chores.create(.init(title: "Bins", points: 5, assignees: [family.leo.uuid]), in: family.home, as: lou)
            }
            #expect(before?.code == .forbidden)
            _ = try await services.family.inviteGuardian(lou, of: family.leo, as: family.mum)
            _ = try await services.family.acceptGuardianship(of: family.leo, as: lou)
            let bins = try await chores.create(.init(title: "Bins", points: 5, assignees: [family.leo.uuid]), in: family.home, as: lou)
            let notMia = await serviceError {
                try await chores.create(.init(title: "Bins", points: 5, assignees: [family.mia.uuid]), in: family.home, as: lou)
            }
            #expect(notMia?.code == .forbidden)
            // Mum's chore for Leo is Lou's to change too: every assignee is his child.
            let mums = try await chores.create(.init(title: "Homework", points: 3, assignees: [family.leo.uuid]), in: family.home, as: family.mum)
            #expect(try await chores.update(mums.id, .init(points: 4), as: lou).points == 4)

            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: lou)
            let done = try await chores.complete(bins.id, as: leo)
            #expect(try await chores.review(done.id, approve: true, as: lou).status == .approved)
            let lego = try await chores.createReward(in: family.home, title: "Lego", cost: 5, as: lou)
            #expect(lego.familyOf == lou)
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            #expect(try await chores.rewards(in: family.home, as: leo).items.map(\.id) == [lego.id])
            #expect(try await chores.rewards(in: family.home, as: mia).items.isEmpty)
            // Mum's reward for her family is on offer to Leo too: she is his guardian as well.
            let film = try await chores.createReward(in: family.home, title: "Film", cost: 1, as: family.mum)
            #expect(Set(try await chores.rewards(in: family.home, as: leo).items.map(\.id)) == [lego.id, film.id])
            let redeemed = try await chores.redeem(lego.id, as: leo)
            #expect(try await chores.resolveRedemption(redeemed.id, fulfil: true, as: lou).status == .fulfilled)
            // What Leo sees, Lou sees: his points and his chores.
            let lousView = try await chores.points(in: family.home, for: family.leo.uuid, as: .user(lou)).balance
            let leosView = try await chores.points(in: family.home, as: leo).balance
            #expect(lousView == leosView)
            let leosChores = Set(try await chores.list(in: family.home, as: leo).items.map(\.id))
            let lousChores = Set(try await chores.list(in: family.home, as: .user(lou)).items.map(\.id))
            #expect(leosChores == [bins.id, mums.id] && leosChores.isSubset(of: lousChores))

            // Lou pairs Leo's device in his own flat, where Mum is not a member: it reaches the flat.
            // Ann, the flat's other admin and no guardian, sees Leo there and sets him a chore.
            let flat = try await services.communities.create(name: "Lou's flat", as: lou).id
            let ann = try await services.users.create(email: "ann@example.com", displayName: "Ann").id
            _ = try await services.members.add(ann, to: flat, role: .admin, as: lou)
            #expect(try await services.family.member(family.leo, as: ann).name == "Leo")
            let hoover = try await chores.create(.init(title: "Hoover", points: 2, assignees: [family.leo.uuid]), in: flat, as: ann)
            let inFlat = try await services.signedInChild(family.leo, in: flat, guardian: lou, pin: "1357")
            #expect(try await chores.list(in: flat, as: inFlat).items.map(\.id) == [hoover.id])
            // Once Lou leaves Leo's guardianship, the flat's device reaches nothing.
            try await services.family.removeGuardian(lou, of: family.leo, as: lou)
            let gone = await serviceError { try await chores.list(in: flat, as: inFlat) }
            #expect(gone != nil, "the flat's device still reaches the flat")
            let pin = await serviceError { try await services.family.setPIN("1111", for: family.leo, in: family.home, as: lou) }
            #expect(pin?.code == .forbidden)
        }
    }

    @Test(
        "Mum makes Dad the guardian of record while Dad leaves, and the other way round: the second is refused, and Mia keeps a guardian of record who is her guardian"
    )
    func recordAndLeaveRace() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            _ = try await services.family.inviteGuardian(family.dad, of: family.mia, as: family.mum)
            _ = try await services.family.acceptGuardianship(of: family.mia, as: family.dad)
            let mums = try await database.connect()
            let dads = try await database.connect()
            // Mum's change is made and not committed yet when Dad asks to leave; then it commits,
            // once Dad's call waits for it (or, without the lock, has ended on its own).
            let leaving = try await mums.asApp(family.mum.uuid) { connection in
                try await connection.query("UPDATE family_members SET user_id = \(family.dad) WHERE id = \(family.mia)")
                let leaving = Task {
                    try await dads.asApp(family.dad.uuid) { connection in
                        try await connection.query("SELECT orbit.remove_guardian(\(family.mia), \(family.dad))")
                    }
                }
                try await database.withConnection { observer in
                    while try await observer.query(
                        """
                        SELECT FROM pg_stat_activity WHERE pid = \(dads.backendPID)
                          AND (\(mums.backendPID) = ANY(pg_blocking_pids(pid)) OR (state = 'idle' AND query ~ '^(COMMIT|ROLLBACK)'))
                        """
                    ).count == 0 {
                        await Task.yield()
                    }
                }
                return leaving
            }
            let refused: PostgresError? =
                switch await leaving.result {
                case .success: nil
                case .failure(let error): error as? PostgresError
                }
            #expect(refused?.constraint == "family_guardians_of_record", "\(String(describing: refused))")
            var record = try await services.family.member(family.mia, as: family.dad).userID
            var guardians = try await services.family.guardians(of: family.mia, as: family.dad).filter { $0.acceptedAt != nil }.map(\.userID)
            #expect(record == family.dad && guardians.contains(record), "\(record) of \(guardians)")

            // The other order: Mum (no longer the guardian of record) leaves, not committed yet,
            // when Dad makes her the guardian of record again; his change waits, then is refused.
            let naming = try await mums.asApp(family.mum.uuid) { connection in
                try await connection.query("SELECT orbit.remove_guardian(\(family.mia), \(family.mum))")
                let naming = Task {
                    try await dads.asApp(family.dad.uuid) { connection in
                        try await connection.query("UPDATE family_members SET user_id = \(family.mum) WHERE id = \(family.mia)")
                    }
                }
                try await database.withConnection { observer in
                    while try await observer.query(
                        """
                        SELECT FROM pg_stat_activity WHERE pid = \(dads.backendPID)
                          AND (\(mums.backendPID) = ANY(pg_blocking_pids(pid)) OR (state = 'idle' AND query ~ '^(COMMIT|ROLLBACK)'))
                        """
                    ).count == 0 {
                        await Task.yield()
                    }
                }
                return naming
            }
            let refusedNaming: PostgresError? =
                switch await naming.result {
                case .success: nil
                case .failure(let error): error as? PostgresError
                }
            #expect(refusedNaming?.constraint == "family_members_guardian_of_record", "\(String(describing: refusedNaming))")
            await mums.close()
            await dads.close()
            record = try await services.family.member(family.mia, as: family.dad).userID
            guardians = try await services.family.guardians(of: family.mia, as: family.dad).filter { $0.acceptedAt != nil }.map(\.userID)
            #expect(record == family.dad && guardians == [family.dad], "\(record) of \(guardians)")
        }
    }

    @Test("the child's device syncs the chore and family reward a co-parent set; another child's device gets none of it")
    func childDeviceSyncsCoParentsWork() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let lou = family.lodger
            _ = try await services.family.inviteGuardian(lou, of: family.leo, as: family.mum)
            _ = try await services.family.acceptGuardianship(of: family.leo, as: lou)
            // Lou pairs Leo's device; Mum pairs Mia's.
            let leo = try await services.signedInChild(family.leo, in: family.home, guardian: lou)
            let mia = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let leoStart = try await services.sync.changes(of: family.home, as: leo)
            let miaStart = try await services.sync.changes(of: family.home, as: mia)
            let bins = try await services.chores.create(.init(title: "Bins", points: 5, assignees: [family.leo.uuid]), in: family.home, as: lou)
            let lego = try await services.chores.createReward(in: family.home, title: "Lego", cost: 5, as: lou)
            let leos = try await services.sync.changes(of: family.home, cursor: leoStart.nextCursor, as: leo).changes
            #expect(leos.contains { $0.entity == .chore && $0.id == bins.id.uuid && $0.op == .upsert }, "\(leos.map(\.entity))")
            #expect(leos.contains { $0.entity == .reward && $0.id == lego.id.uuid && $0.op == .upsert })
            let mias = try await services.sync.changes(of: family.home, cursor: miaStart.nextCursor, as: mia).changes
            #expect(!mias.contains { [bins.id.uuid, lego.id.uuid].contains($0.id) && $0.op == .upsert }, "\(mias.map(\.entity))")
            // Both of Leo's guardians hear of his chore; Dad, no guardian of Leo, does not.
            for (who, hears) in [(family.mum, true), (lou, true), (family.dad, false)] {
                let notices = try await services.notifications.list(limit: 200, as: who).items
                let assigned = notices.contains { $0.type.rawValue == "chore_assigned" && $0.title.contains("Bins") }
                #expect(assigned == hears, "\(who): \(notices.map(\.title))")
            }
        }
    }

    @Test("an avatar set by a guardian who has since left stays, and does not stop the guardian of record from changing")
    func avatarOutlivesItsGuardian() async throws {
        try await withMediaServices { services, _ in
            let family = try await Cast.Household.make(services)
            for guardian in [family.dad, family.lodger] {
                _ = try await services.family.inviteGuardian(guardian, of: family.mia, as: family.mum)
                _ = try await services.family.acceptGuardianship(of: family.mia, as: guardian)
            }
            let photo = try await services.media.upload(
                to: family.home, filename: "mia.jpg", mimeType: "image/jpeg", data: Data([0xFF, 0xD8, 0xFF, 0x00]), width: 8, height: 8,
                as: .user(family.lodger))
            #expect(try await services.family.setAvatar(family.mia, to: photo.id, as: family.lodger).avatarMediaID == photo.id)
            try await services.family.removeGuardian(family.lodger, of: family.mia, as: family.lodger)
            let moved = try await services.family.setGuardianOfRecord(family.dad, of: family.mia, as: family.mum)
            #expect(moved.userID == family.dad && moved.avatarMediaID == photo.id)
        }
    }

    @Test("deleting a parent's account leaves a child with another guardian to them, as the guardian of record; a child with no other goes")
    func accountDeletion() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            _ = try await services.family.inviteGuardian(family.dad, of: family.mia, as: family.mum)
            _ = try await services.family.acceptGuardianship(of: family.mia, as: family.dad)
            _ = try await services.family.inviteGuardian(family.lodger, of: family.leo, as: family.mum)
            // Mum hands the household's admin role over first: Dad is an admin already.
            _ = try await services.lifecycle.requestAccountDeletion(as: family.mum)
            var later = services
            later.now = { Date().addingTimeInterval(8 * 86_400) }
            #expect(try await later.lifecycle.deleteDueAccounts() == (1, 0))
            let mia = try await services.family.member(family.mia, as: family.dad)
            #expect(mia.userID == family.dad)
            #expect(try await services.family.guardians(of: family.mia, as: family.dad).map(\.userID) == [family.dad])
            let leo = await serviceError { try await services.family.member(family.leo, as: family.dad) }
            #expect(leo?.code == .notFound)
            #expect(try await services.family.guardianInvitations(as: family.lodger).isEmpty)
        }
    }
}
