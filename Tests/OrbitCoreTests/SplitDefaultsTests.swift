import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("Members in new splits: inactive members, default weights, the community's default split")
struct SplitDefaultsTests {
    @Test(
        "an inactive member is left out of new splits among everyone, kept in old ones and balances; default weights make the default split by shares"
    )
    func splitDefaults() async throws {
        try await withServices { services, _ in
            let cast = try await Cast.make(services)
            let old = try await services.expenses.addExpense(
                in: cast.community, description: "Balls", total: try dollars("20.00"), paidBy: cast.admin,
                split: try await services.expenses.defaultSplit(in: cast.community, as: cast.admin), as: cast.admin)
            #expect(Set(old.splits.map(\.userID)) == [cast.admin, cast.member])

            let away = try await services.members.setSplitDefaults(of: cast.member, in: cast.community, active: false, as: cast.admin)
            #expect(!away.active && away.defaultWeight == 1)
            #expect(try await services.members.activeUserIDs(of: cast.community, as: cast.member) == [cast.admin])
            #expect(try await services.expenses.defaultSplit(in: cast.community, as: cast.member) == .equal([cast.admin]))
            // Still in the old split and in balances; still named in a new split when named.
            #expect(try await services.expenses.expense(old.id, as: cast.member).splits.count == 2)
            #expect(
                try await services.settlements.balances(in: cast.community, as: cast.member).contains {
                    $0.userID == cast.member && $0.balance == -1000
                })
            let named = try await services.expenses.addExpense(
                in: cast.community, description: "Named", total: try dollars("2.00"), split: .equal([cast.admin, cast.member]), as: cast.admin)
            #expect(named.splits.count == 2)

            // Who may: admins for anyone, a member for themselves, any member for a guest.
            #expect(
                await serviceError {
                    try await services.members.setSplitDefaults(of: cast.admin, in: cast.community, active: false, as: cast.member)
                }?.code == .forbidden)
            #expect(
                await serviceError {
                    try await services.members.setSplitDefaults(of: cast.member, in: cast.community, active: true, as: cast.outsider)
                }?.code == .notFound)
            #expect(
                await serviceError {
                    try await services.members.setSplitDefaults(of: cast.member, in: cast.community, defaultWeight: 0, as: cast.member)
                }?.field == "default_weight")
            let back = try await services.members.setSplitDefaults(
                of: cast.member, in: cast.community, active: true, defaultWeight: 3, as: cast.member)
            #expect(back.active && back.defaultWeight == 3)
            let guest = try await services.members.addGuest(named: "Gina", to: cast.community, as: cast.admin)
            let quiet = try await services.members.setSplitDefaults(of: guest.userID, in: cast.community, active: false, as: cast.member)
            #expect(quiet.isGuest && !quiet.active)

            // The default split by shares: the default weights of those in new splits.
            let shares = try CommunitySettings.parse(json: #"{"defaultSplit": "shares"}"#)
            _ = try await services.communities.update(cast.community, settings: shares, as: cast.admin)
            let split = try await services.expenses.defaultSplit(in: cast.community, as: cast.member)
            #expect(split == .shares([cast.admin: 1, cast.member: 3]))
            let dinner = try await services.expenses.addExpense(
                in: cast.community, description: "Dinner", total: try dollars("40.00"), split: split, as: cast.member)
            #expect(Dictionary(uniqueKeysWithValues: dinner.splits.map { ($0.userID, $0.amount) }) == [cast.admin: 1000, cast.member: 3000])
            #expect(await serviceError { _ = try CommunitySettings.parse(json: #"{"defaultSplit": "percent"}"#) }?.field == "settings.defaultSplit")

            // Nobody in new splits: the expense must say who shares it.
            _ = try await services.members.setSplitDefaults(of: cast.member, in: cast.community, active: false, as: cast.member)
            _ = try await services.members.setSplitDefaults(of: cast.admin, in: cast.community, active: false, as: cast.admin)
            #expect(await serviceError { try await services.expenses.defaultSplit(in: cast.community, as: cast.member) }?.field == "split")
        }
    }
}
