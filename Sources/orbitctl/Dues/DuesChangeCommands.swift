import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl dues update DUES [--name N] [--amount A] [--due-date D] --as U`
struct DuesUpdateCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change dues' name, amount or due date (admins); never below what a member already paid.")
    @Argument(help: "Dues id.") var dues: DuesID
    @Option(help: "New name.") var name: String?
    @Option(help: "New amount per member, in the dues' currency (50.00; \(MoneyHelp.amounts)).") var amount: String?
    @Option(help: "New due date, YYYY-MM-DD.") var dueDate: String?
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    /// The due date, parsed (validate() parses it before connecting).
    private var day: CivilDate? {
        get throws { try dueDate.map { try CivilDate.parse($0, field: "due_date") } }
    }

    func validate() throws { _ = try day }

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Dues {
        let day = try day
        var money: Money?
        if let amount {
            let current = try await services.dues.get(dues, as: actor)
            money = try Money(parsing: amount, currency: try Currency.parse(current.currency))
        }
        return try await services.dues.update(dues, name: name, amount: money, dueDate: day, as: actor)
    }

    func tell(_ updated: Dues) {
        print(
            "Dues \(updated.id): \(updated.name), \(Money(minorUnits: updated.amount, currency: Currency(updated.currency) ?? .usd)) due \(updated.dueDate)."
        )
    }
}

/// `orbitctl dues payments DUES --as U [--limit N] [--cursor C]`
struct DuesPaymentsCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "payments", abstract: "Dues' individual payments, newest first (admins see all, a member their own).")
    @Argument(help: "Dues id.") var dues: DuesID
    @OptionGroup var page: PageOptions
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<DuesPayment> {
        try await services.dues.payments(of: dues, limit: page.limit, cursor: page.cursor, as: actor)
    }

    func tell(_ payments: Page<DuesPayment>) {
        printPage(payments, ["PAID", "USER", "AMOUNT", "METHOD", "NOTE"]) {
            [
                show($0.paidAt), $0.userID.description, Money(minorUnits: $0.amountPaid, currency: Currency($0.currency) ?? .usd).description,
                $0.paymentMethod ?? "", $0.notes ?? "",
            ]
        }
    }
}
