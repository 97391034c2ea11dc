import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl settle …`
struct SettleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settle",
        abstract: "Record settlements and suggest the payments that clear balances.",
        subcommands: [Record.self, Suggest.self]
    )

    struct Record: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Record that one member paid another.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "Who paid (id or email).") var from: String
        @Option(help: "Who was paid (id or email).") var to: String
        @Option(help: "Amount paid (20.00; \(MoneyHelp.amounts)).") var amount: String
        @Option(help: "ISO 4217 code of what was paid.") var currency: Currency = .usd
        @Option(help: "The currency of the debt it settles, when paid in another: recorded in it, converted.") var settles: Currency?
        @Option(
            help:
                "With --settles: 1 paid currency = RATE of the debt's (default: the rate known today; \(MoneyHelp.rates); the amount converted at it must be at most 2147483647 minor units of the debt's currency)."
        ) var rate: String?
        @Option(help: "How (cash, venmo, …).") var method: String?
        @Option(help: "The day it was paid, YYYY-MM-DD: today or earlier in the community's time zone (default today).") var date: String?
        @Option(help: "Notes, up to 2,000 characters.") var notes: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Expense {
            let money = try Money(parsing: amount, currency: currency)
            return try await services.settlements.recordSettlement(
                in: community, from: try await services.users.resolve(from), to: try await services.users.resolve(to), amount: money,
                settles: settles, rate: try rate.map { try DecimalRate.parse($0) }, method: method,
                date: try date.map { try CivilDate.parse($0, field: "date") }, notes: notes, as: actor
            )
        }

        func tell(_ settlement: Expense) {
            if let conversion = settlement.conversion {
                let paid = Money(minorUnits: conversion.paidAmount, currency: Currency(conversion.paidCurrency) ?? .usd)
                let settled = Money(minorUnits: settlement.totalAmount, currency: Currency(settlement.currency) ?? .usd)
                print("Recorded settlement \(settlement.id): \(paid) at \(conversion.rate) settles \(settled).")
            } else {
                print("Recorded settlement \(settlement.id).")
            }
        }
    }

    struct Suggest: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "The payments that clear the community's balances: the fewest, or pair by pair.")
        @Option(help: "Community id.") var community: CommunityID
        @Option(
            name: .customLong("in"),
            help: "Propose every payment in this currency, balances in others converted at the rates known today.") var currency: Currency?
        @Flag(
            inversion: .prefixedNo,
            help:
                "The fewest payments (--simplify), or each pair's own debt (--no-simplify); default: the community's minimizeDebts setting, on unless turned off."
        ) var simplify: Bool?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> [SettleUp.Payment] {
            let payments =
                if let currency {
                    try await services.settlements.settleUpSuggestions(in: community, currency: currency, simplify: simplify, as: actor)
                } else {
                    try await services.settlements.settleUpSuggestions(in: community, simplify: simplify, as: actor)
                }
            return try await services.payments.withPayOptions(payments, in: community, as: actor)
        }

        func tell(_ payments: [SettleUp.Payment]) {
            printTable(
                ["FROM", "TO", "AMOUNT"],
                payments.map {
                    [$0.from.description, $0.to.description, Money(minorUnits: $0.amount, currency: Currency($0.currency) ?? .usd).description]
                }
            )
            // The ways to pay each (the payee's handles and the active providers), a link or a QR code's text.
            for payment in payments where !payment.payOptions.isEmpty {
                print("\nPay \(payment.to) \(Money(minorUnits: payment.amount, currency: Currency(payment.currency) ?? .usd)):")
                for option in payment.payOptions {
                    print("  \(option.name): \(option.url ?? option.qr.map { "QR " + $0.replacingOccurrences(of: "\n", with: "|") } ?? "")")
                }
            }
        }
    }
}
