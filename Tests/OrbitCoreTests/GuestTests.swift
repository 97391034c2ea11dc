import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Guests: people without an account in a community's money", .serialized)
struct GuestTests {
    /// Each person's net balance and each pair, per currency, with one user's id put for another's.
    private static func ledger(
        _ services: OrbitServices, in community: CommunityID, as reader: UserID, renaming: [UserID: UserID] = [:]
    ) async throws -> (balances: [String], pairs: [String]) {
        let name = { (user: UserID) in (renaming[user] ?? user).description }
        let balances = try await services.settlements.balances(in: community, as: reader)
            .filter { $0.balance != 0 }.map { "\(name($0.userID)) \($0.currency) \($0.balance)" }.sorted()
        let pairs = try await services.settlements.pairs(in: community, as: reader)
            .map { "\(name($0.from))→\(name($0.to)) \($0.currency) \($0.amount)" }.sorted()
        return (balances, pairs)
    }

    @Test("any member adds a guest; guests split, pay, settle and count in balances, pairs and settle-up; removed only once settled")
    func guestsInMoney() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let guest = try await services.members.addGuest(named: "  Gina Guest ", to: cast.community, as: cast.member)
            #expect(guest.isGuest && guest.displayName == "Gina Guest" && guest.role == .member && guest.invitedBy == cast.member)
            #expect(try await services.members.guests(of: cast.community, as: cast.admin).items.map(\.id) == [guest.id])
            #expect(try await services.members.list(of: cast.community, as: cast.member).items.contains(guest))
            #expect(try await services.members.activeUserIDs(of: cast.community, as: cast.member).contains(guest.userID))
            // The change feed (and so live updates) carries the guest as a member, and their new name.
            let added = try await services.sync.changes(of: cast.community, as: cast.admin)
            #expect(added.changes.contains { $0.entity == .member && $0.id == guest.id.uuid && ($0.data as? Member)?.isGuest == true })
            _ = try await services.members.renameGuest(guest.id, to: "Gina G.", as: cast.admin)
            let renamed = try await services.sync.changes(of: cast.community, cursor: added.nextCursor, as: cast.member)
            #expect(renamed.changes.map(\.id) == [guest.id.uuid], "\(renamed.changes.map(\.entity))")

            // Every split method, as a payer and among payers, in a settlement.
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Cabin", total: try dollars("90.00"), paidBy: cast.member,
                split: .equal([cast.admin, cast.member, guest.userID]), as: cast.member)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Fuel", total: try dollars("30.00"), paidBy: guest.userID,
                split: .shares([cast.member: 1, guest.userID: 2]), as: cast.admin)
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("40.00"), payers: [cast.admin: 1000, guest.userID: 3000],
                split: .exact([cast.admin: 2000, guest.userID: 2000]), as: cast.member)
            // Gina owes Max 30.00 for the cabin; Max owes Gina 10.00 for fuel; Ada owes Gina 10.00 for dinner.
            let ledger = try await Self.ledger(services, in: cast.community, as: cast.member)
            #expect(
                ledger.pairs.sorted()
                    == [
                        "\(cast.admin)→\(cast.member) USD 3000", "\(cast.admin)→\(guest.userID) USD 1000",
                        "\(guest.userID)→\(cast.member) USD 2000",
                    ].sorted(), "\(ledger.pairs)")
            #expect(ledger.balances.contains("\(guest.userID) USD -1000"))
            let payments = try await services.settlements.settleUpSuggestions(in: cast.community, simplify: false, as: cast.member)
            #expect(payments.contains { $0.from == guest.userID && $0.to == cast.member && $0.amount == 2000 })

            // Not while anything is owed between the guest and anyone.
            let unsettled = await serviceError { try await services.members.removeGuest(guest.id, as: cast.member) }
            #expect(unsettled?.code == .conflict && unsettled?.message.contains("settle up") == true, "\(String(describing: unsettled))")
            // The plain removal, the admin role and another community are not a guest's.
            #expect(await serviceError { try await services.members.remove(guest.userID, from: cast.community, as: cast.admin) }?.code == .conflict)
            #expect(
                await serviceError { try await services.members.setRole(.admin, of: guest.userID, in: cast.community, as: cast.admin) }?.code
                    == .conflict)
            let other = try await services.communities.create(name: "Other", as: cast.admin).id
            #expect(await serviceError { try await services.members.add(guest.userID, to: other, as: cast.admin) }?.code == .conflict)
            // The database holds it, whoever inserts the row.
            let elsewhere = await #expect(throws: PostgresError.self) {
                try await database.withConnection { connection in
                    try await connection.query("INSERT INTO members (community_id, user_id) VALUES (\(other), \(guest.userID))")
                }
            }
            #expect(elsewhere?.constraint == "members_guest_one_community", "\(String(describing: elsewhere))")

            _ = try await services.settlements.recordSettlement(
                in: cast.community, from: guest.userID, to: cast.member, amount: try dollars("20.00"), as: cast.member)
            _ = try await services.settlements.recordSettlement(
                in: cast.community, from: cast.admin, to: guest.userID, amount: try dollars("10.00"), as: cast.admin)
            // Settled with everyone (Ada still owes Max): the guest goes, their expenses keep them.
            #expect(try await Self.ledger(services, in: cast.community, as: cast.member).pairs == ["\(cast.admin)→\(cast.member) USD 3000"])
            try await services.members.removeGuest(guest.id, as: cast.member)
            #expect(try await services.members.guests(of: cast.community, as: cast.member).items.isEmpty)
            #expect(try await !services.members.activeUserIDs(of: cast.community, as: cast.member).contains(guest.userID))
            #expect(await serviceError { try await services.members.removeGuest(guest.id, as: cast.member) }?.code == .notFound)
            #expect(await serviceError { try await services.members.renameGuest(guest.id, to: "Gina", as: cast.member) }?.code == .notFound)
        }
    }

    @Test("a guest is community data: strangers can neither see, add, rename, remove nor invite one; nobody signs in or acts as one")
    func strangersAndSignIn() async throws {
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            let guest = try await services.members.addGuest(named: "Gina Guest", to: cast.community, as: cast.admin)
            // Nobody notifies a guest: a post notifies the member, not the guest.
            _ = try await services.feed.createPost(in: cast.community, PostDraft(content: "Kit on Saturday"), as: cast.admin)
            let notified = try await database.withConnection { connection in
                try await connection.query("SELECT user_id FROM notifications WHERE type = 'new_post'").map {
                    try $0.decode("user_id", as: UserID.self)
                }
            }
            #expect(notified == [cast.member], "\(notified)")
            #expect(
                await serviceError { try await services.members.addGuest(named: "Eve", to: cast.community, as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.members.addGuest(named: "Eve", to: cast.community, as: cast.former) }?.code == .notFound)
            #expect(await serviceError { try await services.members.guests(of: cast.community, as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.members.renameGuest(guest.id, to: "Eve", as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.members.removeGuest(guest.id, as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.members.inviteGuest(guest.id, as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.members.addGuest(named: " ", to: cast.community, as: cast.member) }?.field == "name")
            let long = String(repeating: "g", count: 101)
            #expect(await serviceError { try await services.members.addGuest(named: long, to: cast.community, as: cast.member) }?.field == "name")
            // A member's own user id is no guest's.
            let notAGuest = try await services.members.mine(in: cast.community, as: cast.member).member.id
            #expect(await serviceError { try await services.members.renameGuest(notAGuest, to: "Eve", as: cast.admin) }?.code == .notFound)
            let renamed = try await services.members.renameGuest(guest.id, to: "Gina G.", as: cast.member)
            #expect(renamed.displayName == "Gina G." && renamed.isGuest)

            // The sign-in and the operators' --as never find a guest.
            #expect(await serviceError { try await services.users.resolve(guest.userID.description, acting: true) }?.code == .notFound)
            #expect(try await services.users.resolve(guest.userID.description) == guest.userID)
            #expect(try await !services.users.list().contains { $0.id == guest.userID })
            let signIn = try? await services.sessions.signIn(
                appleID: "guest.\(guest.userID)", email: "eve@example.com", displayName: nil, device: nil, refreshLifetime: .seconds(60))
            #expect(signIn?.user.id != guest.userID)
        }
    }

    @Test(
        "the user who joins through a guest's link claims the guest: the guest's money becomes theirs, balances and pairs unchanged but for the name")
    func claim() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let guest = try await services.members.addGuest(named: "Gina Guest", to: cast.community, as: cast.member)
            let cabin = try await services.expenses.addExpense(
                in: cast.community, description: "Cabin", total: try dollars("90.00"), paidBy: cast.member,
                split: .equal([cast.admin, cast.member, guest.userID]), as: cast.member)
            let fuel = try await services.expenses.addExpense(
                in: cast.community, description: "Fuel", total: try dollars("30.00"), payers: [guest.userID: 2000, cast.admin: 1000],
                split: .shares([cast.member: 1, guest.userID: 2]), as: cast.admin)
            _ = try await services.settlements.recordSettlement(
                in: cast.community, from: guest.userID, to: cast.member, amount: try dollars("5.00"), as: cast.member)
            // Half the lines in the snapshot, half in the journal after it.
            _ = try await services.settlements.refreshBalancesSnapshot()
            _ = try await services.expenses.addExpense(
                in: cast.community, description: "Snacks", total: try dollars("12.00"), paidBy: guest.userID,
                split: .equal([cast.admin, guest.userID]), as: cast.admin)
            let newcomer = try await services.users.create(email: "gina@example.com", displayName: "Gina").id
            let before = try await Self.ledger(services, in: cast.community, as: cast.admin, renaming: [guest.userID: newcomer])

            let invite = try await services.members.inviteGuest(guest.id, as: cast.member)
            #expect(invite.guestMemberID == guest.id && invite.usesRemaining == 1 && invite.communityID == cast.community)
            let preview = try await services.invites.preview(try InviteCode.parse(invite.code))
            #expect(preview.guestName == "Gina Guest")
            // A member, and someone who left, cannot claim a guest.
            #expect(await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.admin) }?.code == .conflict)
            let former = await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.former) }
            #expect(former?.code == .conflict && former?.message.contains("member of this community before") == true)

            let redemption = try await services.invites.redeem(try InviteCode.parse(invite.code), as: newcomer)
            #expect(redemption.claimedGuestMemberID == guest.id && redemption.communityID == cast.community && !redemption.rejoined)
            let after = try await Self.ledger(services, in: cast.community, as: cast.admin)
            #expect(after.balances == before.balances && after.pairs == before.pairs, "\(before) \(after)")
            #expect(!after.balances.joined().contains(guest.userID.description))
            // Both with the snapshot refreshed and from the plain aggregate.
            _ = try await services.settlements.refreshBalancesSnapshot()
            #expect(try await Self.ledger(services, in: cast.community, as: cast.admin) == after)

            // The expenses are the newcomer's now, the split as entered too: an edit keeps them.
            let cabinNow = try await services.expenses.expense(cabin.id, as: newcomer)
            #expect(cabinNow.splits.contains { $0.userID == newcomer } && !cabinNow.splits.contains { $0.userID == guest.userID })
            let fuelNow = try await services.expenses.expense(fuel.id, as: cast.admin)
            #expect(fuelNow.splits.contains { $0.userID == newcomer } && fuelNow.payers.contains { $0.userID == newcomer })
            // A new total is divided again as the split was entered: among the newcomer, not the guest.
            let cabinEdited = try await services.expenses.updateExpense(cabin.id, total: try dollars("120.00"), as: cast.member)
            #expect(
                Set(cabinEdited.splits.map(\.userID)) == [cast.admin, cast.member, newcomer] && cabinEdited.splits.allSatisfy { $0.amount == 4000 })
            // The guest is gone, the newcomer a member; the link is spent.
            #expect(try await services.members.guests(of: cast.community, as: cast.admin).items.isEmpty)
            #expect(try await services.members.mine(in: cast.community, as: newcomer).member.isGuest == false)
            #expect(await serviceError { try await services.invites.redeem(try InviteCode.parse(invite.code), as: cast.outsider) }?.code == .notFound)
            #expect(await serviceError { try await services.invites.preview(try InviteCode.parse(invite.code)) }?.code == .notFound)
        }
    }
}
