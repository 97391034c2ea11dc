import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl expense settle-split SPLIT --as U [--via METHOD]`
struct ExpenseSettleSplitCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle-split",
        abstract: "Mark one split settled (its debtor, the payer or an admin); it stays in the balances, as settled.")
    @Argument(help: "Split id (an expense's `splits[].id`).") var split: SplitID
    @Option(help: "How it was paid (cash, venmo, …).") var via: String?
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
        try await services.settlements.settleSplit(split, via: via, as: actor)
    }

    func tell(_ expense: Expense) {
        print("Split \(split) of expense \(expense.id) settled.")
    }
}
