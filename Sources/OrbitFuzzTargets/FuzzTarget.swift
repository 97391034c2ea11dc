import Foundation
import OrbitCore

/// The parsers that take user input, each with the property it must keep for any bytes.
/// libFuzzer drives them through `orbit-fuzz` (scripts/fuzz.sh); the corpus it keeps in
/// fuzz/corpus/<target>/ is replayed by the tests, so every input that once found new behaviour
/// stays a regression test.
package enum FuzzTarget: String, CaseIterable, Sendable {
    case amount
    case cursor
    case inviteCode = "invite-code"
    case settings
    case rrule

    /// Runs one input; returns what went wrong, or nil when the parser kept its property
    /// (parsed into a value that round-trips, or refused with the domain's error).
    package func check(_ input: [UInt8]) -> String? {
        switch self {
        case .amount: Self.amount(input)
        case .cursor: Self.cursor(input)
        case .inviteCode: Self.inviteCode(input)
        case .settings: Self.settings(input)
        case .rrule: Self.rrule(input)
        }
    }

    /// The input as text, as a request body or a command line would deliver it (invalid UTF-8
    /// repaired to U+FFFD).
    static func text(_ input: some Collection<UInt8>) -> String { String(decoding: input, as: UTF8.self) }

    /// Amounts: the first byte picks the currency (0, 2 and 3 decimals), the rest is the text.
    static func amount(_ input: [UInt8]) -> String? {
        let currencies = ["USD", "JPY", "BHD", "EUR"].compactMap(Currency.init)
        let currency = currencies[Int(input.first ?? 0) % currencies.count]
        let text = Self.text(input.dropFirst())
        do {
            let money = try Money(parsing: text, currency: currency)
            guard (1...Money.maximumMinorUnits).contains(money.minorUnits) else { return "\(text.debugDescription) parsed out of range: \(money)" }
            guard (try? Money(parsing: money.decimalString, currency: currency)) == money else {
                return "\(text.debugDescription) parsed to \(money), which does not round-trip"
            }
        } catch let error as ServiceError where error.code == .invalidInput {
            return nil
        } catch {
            return "\(text.debugDescription) failed with \(error)"
        }
        return nil
    }

    static func cursor(_ input: [UInt8]) -> String? {
        let text = Self.text(input)
        do {
            let cursor = try FeedCursor(decoding: text)
            guard (try? FeedCursor(decoding: cursor.encoded)) == cursor else { return "\(text.debugDescription) does not round-trip" }
        } catch let error as ServiceError where error.field == "cursor" {
            return nil
        } catch {
            return "\(text.debugDescription) failed with \(error)"
        }
        return nil
    }

    static func inviteCode(_ input: [UInt8]) -> String? {
        let text = Self.text(input)
        guard let code = InviteCode(text) else { return nil }
        guard code.value.count == InviteCode.length, code.value.allSatisfy({ InviteCode.alphabet.contains($0) }) else {
            return "\(text.debugDescription) gave the malformed code \(code.value)"
        }
        guard InviteCode(code.value.lowercased()) == code else { return "\(code.value) does not match in lower case" }
        return nil
    }

    static func settings(_ input: [UInt8]) -> String? {
        let text = Self.text(input)
        do {
            let settings = try CommunitySettings.parse(json: text)
            do {
                try settings.validate()
            } catch {
                return "\(text.debugDescription) parsed into settings that do not validate: \(error)"
            }
        } catch let error as ServiceError where error.code == .invalidInput && error.field?.hasPrefix("settings") == true {
            return nil
        } catch {
            return "\(text.debugDescription) failed with \(error)"
        }
        return nil
    }

    /// Recurrence rules, expanded from a start in a zone with a daylight-saving gap.
    static func rrule(_ input: [UInt8]) -> String? {
        let text = Self.text(input)
        guard let zone = TimeZone(identifier: "Europe/Berlin") else { return "no Europe/Berlin time zone" }
        let start = LocalDateTime(date: CivilDate(year: 2026, month: 3, day: 29), hour: 2, minute: 30)
        do {
            let rule = try RecurrenceRule(parsing: text)
            let dates = RecurringSeries(rule: rule, start: start, timeZone: zone).occurrences(limit: 50)
            guard dates.count <= 50 else { return "\(text.debugDescription) expanded to \(dates.count) dates" }
            guard zip(dates, dates.dropFirst()).allSatisfy({ $0 < $1 }) else { return "\(text.debugDescription) expanded out of order" }
        } catch is RecurrenceError {
            return nil
        } catch {
            return "\(text.debugDescription) failed with \(error)"
        }
        return nil
    }
}
