import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The family: members, their shares owed by their parent, a child's PIN sign-in on paired devices")
struct FamilyTests: MoneyScenarios {
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

    @Test("a child's share is owed by their parent and shown as theirs; a family member of no member is refused")
    func familyShares() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let tim = try await services.family.add(name: "Tim", as: cast.member)
            let stray = try await services.family.add(name: "Stray", as: cast.outsider)
            let tickets = try await services.expenses.addExpense(
                in: cast.community, description: "Zoo tickets", total: try dollars("30.00"), paidBy: cast.admin,
                split: .equal([.user(cast.admin), .user(cast.member), .familyMember(tim.id)]), as: cast.admin)
            let forTim = try #require(tickets.splits.first { $0.familyMemberID == tim.id })
            #expect(forTim.userID == cast.member && forTim.familyMemberName == "Tim" && forTim.amount == 1000)
            #expect(try await balance(services, cast, cast.member) == -2000)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits == tickets.splits)

            await #expect(throws: ServiceError.self) {
                try await services.expenses.addExpense(
                    in: cast.community, description: "X", total: try dollars("10.00"), paidBy: cast.admin,
                    split: .equal([.user(cast.admin), .familyMember(stray.id)]), as: cast.admin)
            }
            // Shares by weight count a child like anyone; an edit can start from what was entered.
            let edited = try await services.expenses.updateExpense(
                tickets.id, split: .shares([.user(cast.member): 2, .familyMember(tim.id): 1]), as: cast.admin)
            #expect(edited.splits.map(\.amount).sorted() == [1000, 2000])
            #expect(try await balance(services, cast, cast.member) == -3000)
            // Removing Tim leaves his share with his parent.
            try await services.family.remove(tim.id, as: cast.member)
            #expect(try await services.expenses.expense(tickets.id, as: cast.admin).splits.allSatisfy { $0.familyMemberID == nil })
            #expect(try await balance(services, cast, cast.member) == -3000)
        }
    }

    @Test("a child signs in on a paired device with their PIN; 5 wrong PINs lock it for 15 minutes and tell their parent")
    func childSignIn() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            let notAPIN = await serviceError { try await parents.setPIN("12a4", for: family.mia, in: family.home, as: family.mum) }
            #expect(notAPIN?.field == "pin")
            let notParent = await serviceError { try await parents.setPIN("1234", for: family.mia, in: family.home, as: family.lodger) }
            #expect(notParent?.code == .forbidden)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            try await parents.setPIN("9999", for: family.leo, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            #expect(pairing.pairingCode.count == 8 && pairing.communityID == family.home)
            let device = try await parents.finishPairing(code: pairing.pairingCode)
            #expect(device.child == family.mia)
            let reused = await serviceError { try await parents.finishPairing(code: pairing.pairingCode) }
            #expect(reused?.code == .unauthenticated)

            let session = ChildSession(child: family.mia, device: pairing.deviceID)
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") == .signedIn(session, community: family.home))
            // Leo's PIN on Mia's device is just a wrong PIN: never looked up across children.
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "9999") == .wrongPIN)
            for _ in 0..<3 { #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") == .wrongPIN) }
            guard case .locked(let until) = try await parents.signInChild(deviceToken: device.deviceToken, pin: "1111") else {
                Issue.record("the fifth wrong PIN locks")
                return
            }
            #expect(until > Date().addingTimeInterval(14 * 60))
            // Locked: even the right PIN is refused.
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") == .locked(until: until))
            #expect(try await parents.signInChild(deviceToken: "unknown-token", pin: "4321") == .unknownDevice)
            // Mia's parent hears of it; the household's other admin and the lodger do not: she is not theirs.
            let locked = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(locked.count == 1 && locked.first?.body == "Five wrong PINs: sign-in is locked for 15 minutes.")
            for other in [family.dad, family.lodger] {
                #expect(try await services.notifications.list(limit: 200, as: other).items.allSatisfy { $0.type.rawValue != "child_locked_out" })
            }
            // A new PIN from the parent lifts the lock.
            try await parents.setPIN("2468", for: family.mia, in: family.home, as: family.mum)
            #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "2468") == .signedIn(session, community: family.home))
        }
    }

    @Test(
        "a child's sign-in belongs to their parent: another admin of the household or of a club is refused, changes nothing and is audited as refused"
    )
    func onlyTheGuardian() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            // Mum is also in the neighbour's club, where the neighbour is the admin.
            _ = try await services.members.add(family.mum, to: family.next, as: family.neighbour)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(code: pairing.pairingCode)

            for (admin, community) in [(family.neighbour, family.next), (family.dad, family.home)] {
                let pin = await serviceError { try await parents.setPIN("0000", for: family.mia, in: community, as: admin) }
                #expect(pin?.code == .forbidden && pin?.rule == "a child's sign-in is managed by the child's own guardians only")
                let pair = await serviceError { try await parents.startPairing(for: family.mia, in: community, as: admin) }
                #expect(pair?.code == .forbidden)
                let list = await serviceError { try await parents.devices(of: family.mia, in: community, as: admin) }
                #expect(list?.code == .forbidden)
                let revoke = await serviceError { try await parents.revokeDevices(of: family.mia, in: community, as: admin) }
                #expect(revoke?.code == .forbidden)
            }
            // Nothing changed: the parents' PIN still signs Mia in, and no device was added or revoked.
            guard case .signedIn = try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") else {
                Issue.record("the parents' PIN no longer signs Mia in")
                return
            }
            let devices = try await database.withConnection { connection in
                try await connection.query("SELECT count(*) AS n, count(revoked_at) AS revoked FROM child_devices").single()
                    .decode((Int64, Int64).self)
            }
            #expect(devices == (1, 0))
            // Audited as refused, never as done.
            let done = try await database.withConnection { connection in
                try await connection.query(
                    "SELECT action FROM audit_log WHERE user_id = ANY(\([family.neighbour.uuid, family.dad.uuid])) AND action LIKE 'child.%' ORDER BY action"
                ).map { try $0.decode("action", as: String.self) }
            }
            #expect(done.allSatisfy { $0.hasSuffix(".refused") } && done.contains("child.pin_set.refused"), "\(done)")
            #expect(done.contains("child.device_pairing.refused") && done.contains("child.device_revoked.refused"))
        }
    }

    @Test(
        "a child's token reaches only the community its device was paired for: the household's child sees nothing of the club, and the other way round"
    )
    func childScopedToTheDevicesCommunity() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let chores = services.chores
            // Mum is in the neighbour's club too; Mia has a chore and a reward in each.
            _ = try await services.members.add(family.mum, to: family.next, as: family.neighbour)
            var rewards: [CommunityID: RewardID] = [:]
            for (community, admin) in [(family.home, family.mum), (family.next, family.neighbour)] {
                _ = try await chores.create(
                    .init(title: "Chore", points: 10, requiresApproval: false, assignees: [family.mia.uuid]), in: community, as: admin)
                _ = try await chores.adjust(in: community, for: family.mia.uuid, delta: 50, reason: "Start", as: admin)
                rewards[community] = try await chores.createReward(in: community, title: "Treat", cost: 5, as: admin).id
            }
            let atHome = try await services.signedInChild(family.mia, in: family.home, guardian: family.mum)
            let atClub = try await services.signedInChild(family.mia, in: family.next, guardian: family.mum)
            for (principal, mine, other) in [(atHome, family.home, family.next), (atClub, family.next, family.home)] {
                #expect(try await chores.list(in: mine, as: principal).items.count == 1)
                #expect(try await chores.points(in: mine, as: principal).balance == 50)
                #expect(try await chores.rewards(in: mine, as: principal).items.count == 1)
                _ = try await chores.redeem(try #require(rewards[mine]), as: principal)
                let list = await serviceError { try await chores.list(in: other, as: principal) }
                let points = await serviceError { try await chores.points(in: other, as: principal) }
                let shop = await serviceError { try await chores.rewards(in: other, as: principal) }
                let redeem = await serviceError { try await chores.redeem(try #require(rewards[other]), as: principal) }
                let history = await serviceError { try await chores.redemptions(in: other, as: principal) }
                for error in [list, points, shop, redeem, history] { #expect(error?.code == .notFound, "\(String(describing: error))") }
            }
            // Each redeemed once, in its own community.
            #expect(try await chores.points(in: family.home, for: family.mia.uuid, as: .user(family.mum)).balance == 45)
            #expect(try await chores.points(in: family.next, for: family.mia.uuid, as: .user(family.mum)).balance == 45)
        }
    }

    @Test("a parent lists and revokes a child's devices: a revoked device signs in no more and its token reaches nothing at once")
    func revokingDevices() async throws {
        try await withServices { services, _ in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            let chore = try await services.chores.create(
                .init(title: "Bins", points: 2, assignees: [family.mia.uuid]), in: family.home, as: family.mum)
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let first = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let second = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let waiting = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let tablet = try await parents.finishPairing(code: first.pairingCode).deviceToken
            let phone = try await parents.finishPairing(code: second.pairingCode).deviceToken
            guard case .signedIn(let session, _) = try await parents.signInChild(deviceToken: tablet, pin: "4321") else {
                Issue.record("the tablet does not sign in")
                return
            }
            let listed = try await parents.devices(of: family.mia, in: family.home, as: family.mum)
            #expect(
                Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.status) }) == [
                    first.deviceID: .paired, second.deviceID: .paired, waiting.deviceID: .pending,
                ])
            #expect(listed.first { $0.id == first.deviceID }?.lastUsedAt != nil)
            #expect(try await services.chores.get(chore.id, as: .child(session)).id == chore.id)

            try await parents.revokeDevices(of: family.mia, in: family.home, device: first.deviceID, as: family.mum)
            let gone = await serviceError { try await services.chores.get(chore.id, as: .child(session)) }
            #expect(gone?.code == .notFound)
            #expect(try await parents.signInChild(deviceToken: tablet, pin: "4321") == .unknownDevice)
            guard case .signedIn = try await parents.signInChild(deviceToken: phone, pin: "4321") else {
                Issue.record("revoking the tablet revoked the phone")
                return
            }
            // Again: nothing changes. An unknown device: not found.
            try await parents.revokeDevices(of: family.mia, in: family.home, device: first.deviceID, as: family.mum)
            let unknown = await serviceError {
                try await parents.revokeDevices(of: family.mia, in: family.home, device: ChildDeviceID(UUID()), as: family.mum)
            }
            #expect(unknown?.code == .notFound)
            // All: the phone, and the code not used yet.
            try await parents.revokeDevices(of: family.mia, in: family.home, as: family.mum)
            #expect(try await parents.signInChild(deviceToken: phone, pin: "4321") == .unknownDevice)
            let unused = await serviceError { try await parents.finishPairing(code: waiting.pairingCode) }
            #expect(unused?.code == .unauthenticated)
            #expect(
                try await parents.devices(of: family.mia, in: family.home, as: family.mum).allSatisfy {
                    $0.status == .revoked && $0.revokedBy == family.mum
                })
            let audit = try await services.communities.auditLog(family.home, limit: 200, as: family.mum).items.map(\.action)
            #expect(audit.filter { $0 == "child.device_revoked" }.count == 3)
        }
    }

    @Test("lockouts in a row last longer (15 minutes, 1 hour, 24 hours), each told to the parent; a sign-in starts again")
    func escalatingLockouts() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(
                code: try await parents.startPairing(for: family.mia, in: family.home, as: family.mum).pairingCode)
            func lockOut() async throws -> TimeInterval {
                for _ in 0..<4 { #expect(try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") == .wrongPIN) }
                guard case .locked(let until) = try await parents.signInChild(deviceToken: device.deviceToken, pin: "0000") else {
                    Issue.record("the fifth wrong PIN did not lock")
                    return 0
                }
                // The lockout ran out (as if the time had passed): its end moves into the past.
                try await database.withConnection { connection in
                    try await connection.query("UPDATE child_credentials SET locked_until = now() - interval '1 second'")
                }
                return until.timeIntervalSinceNow
            }
            let lengths = [try await lockOut(), try await lockOut(), try await lockOut(), try await lockOut()]
            for (length, expected) in zip(lengths, [15 * 60.0, 3600, 86_400, 86_400]) {
                #expect(abs(length - expected) < 120, "\(lengths)")
            }
            let told = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(
                told.map(\.body).sorted() == [
                    "Five wrong PINs: sign-in is locked for 1 hour (the second lockout in a row).",
                    "Five wrong PINs: sign-in is locked for 15 minutes.",
                    "Five wrong PINs: sign-in is locked for 24 hours (lockout 3 in a row).",
                    "Five wrong PINs: sign-in is locked for 24 hours (lockout 4 in a row).",
                ])
            // A right PIN after the lockout starts the count again.
            guard case .signedIn = try await parents.signInChild(deviceToken: device.deviceToken, pin: "4321") else {
                Issue.record("the right PIN after the lockout did not sign in")
                return
            }
            #expect(abs(try await lockOut() - 15 * 60) < 120)
        }
    }

    @Test("ten wrong PINs at once on ten connections are counted exactly: four wrong, the fifth starts the lockout, the rest find it locked")
    func concurrentWrongPINs() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            try await services.family.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await services.family.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await services.family.finishPairing(code: pairing.pairingCode).deviceToken
            let pool = database.makePool(maxConnections: 10)
            let wide = OrbitServices(pool: pool)
            // Ten connections open first (each held until all ten are), so the attempts meet in the
            // database, not in the pool's queue.
            let gathering = Gathering(of: 10)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 { group.addTask { try await pool.withConnection { _ in await gathering.arrive() } } }
                try await group.waitForAll()
            }
            let outcomes = try await withThrowingTaskGroup(of: ChildSignInOutcome.self) { group in
                for _ in 0..<10 { group.addTask { try await wide.family.signInChild(deviceToken: device, pin: "0000") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await pool.close()
            let lockEnds = Set(outcomes.compactMap { if case .locked(let until) = $0 { until } else { nil } })
            #expect(outcomes.filter { $0 == .wrongPIN }.count == 4, "\(outcomes)")
            #expect(outcomes.filter { if case .locked = $0 { true } else { false } }.count == 6, "\(outcomes)")
            #expect(lockEnds.count == 1, "one lockout, started by the fifth: \(lockEnds)")
            let state = try await database.withConnection { connection in
                try await connection.query("SELECT failed_attempts, lockouts_in_row FROM child_credentials").single().decode((Int32, Int32).self)
            }
            #expect(state == (0, 1))
            let told = try await services.notifications.list(limit: 200, as: family.mum).items.filter { $0.type.rawValue == "child_locked_out" }
            #expect(told.count == 1)
        }
    }

    @Test("a device unused for 30 days signs in no more; a parent pairs it again and the new pairing signs in; one used within 30 days does")
    func idleDevicesExpire() async throws {
        try await withServices { services, database in
            let family = try await Cast.Household.make(services)
            let parents = services.family
            try await parents.setPIN("4321", for: family.mia, in: family.home, as: family.mum)
            let pairing = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let device = try await parents.finishPairing(code: pairing.pairingCode).deviceToken
            try await database.withConnection { connection in
                try await connection.query(
                    "UPDATE child_devices SET paired_at = now() - interval '31 days', last_used_at = now() - interval '30 days 1 minute'")
            }
            #expect(try await parents.signInChild(deviceToken: device, pin: "4321") == .deviceExpired)
            #expect(try await parents.devices(of: family.mia, in: family.home, as: family.mum).map(\.status) == [.expired])
            // The parent pairs it again: the new pairing signs in, the expired one still does not.
            let again = try await parents.startPairing(for: family.mia, in: family.home, as: family.mum)
            let repaired = try await parents.finishPairing(code: again.pairingCode).deviceToken
            guard case .signedIn = try await parents.signInChild(deviceToken: repaired, pin: "4321") else {
                Issue.record("a device paired again did not sign in")
                return
            }
            #expect(try await parents.signInChild(deviceToken: device, pin: "4321") == .deviceExpired)
            // Used within 30 days: still signs in.
            try await database.withConnection { connection in
                try await connection.query("UPDATE child_devices SET last_used_at = now() - interval '29 days 23 hours'")
            }
            guard case .signedIn = try await parents.signInChild(deviceToken: device, pin: "4321") else {
                Issue.record("a device used within 30 days did not sign in")
                return
            }
        }
    }
}

/// Lets `count` tasks wait for one another: each `arrive()` returns once all have arrived.
private actor Gathering {
    private let count: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(of count: Int) { self.count = count }

    func arrive() async {
        if waiting.count + 1 == count {
            waiting.forEach { $0.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}
