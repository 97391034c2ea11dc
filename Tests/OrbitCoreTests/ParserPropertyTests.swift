import Foundation
import OrbitCore
import OrbitScaleData
import Testing

/// Property tests of the parsers that take user input: random and mutated input,
/// seeded so that a failure can be replayed. Each either parses into a value that round-trips,
/// or refuses with the domain's error; none crashes or hangs.
@Suite("Properties of the input parsers over random and mutated input")
struct ParserPropertyTests {
    static let seed: UInt64 = 20_261_123
    static let iterations = 20_000

    /// A string of `count` tokens drawn from `tokens`.
    static func soup(_ tokens: [String], _ count: Int, using generator: inout SplitMix64) -> String {
        (0..<count).map { _ in tokens[Int.random(in: 0..<tokens.count, using: &generator)] }.joined()
    }

    @Test("amounts: any text parses to a positive amount that round-trips, or is refused as invalid input")
    func amountsAnyTextParsesToAPositive() throws {
        var generator = SplitMix64(seed: Self.seed)
        let currencies = ["USD", "JPY", "BHD", "EUR"].compactMap(Currency.init)
        let tokens = ["0", "1", "5", "9", "00", ".", ".", ",", "-", "+", " ", "e", "E", "١", "²", "999999999", "\u{0}", "½", "0x", "∞"]
        var parsed = 0
        for _ in 0..<Self.iterations {
            let text = Self.soup(tokens, Int.random(in: 0...8, using: &generator), using: &generator)
            let currency = currencies[Int.random(in: 0..<currencies.count, using: &generator)]
            do {
                let money = try Money(parsing: text, currency: currency)
                parsed += 1
                #expect((1...Money.maximumMinorUnits).contains(money.minorUnits), "\(text)")
                #expect(try Money(parsing: money.decimalString, currency: currency) == money)
            } catch let error as ServiceError {
                #expect(error.code == .invalidInput)
            }
        }
        #expect(parsed > 100)
        for _ in 0..<Self.iterations {
            let units = Int64.random(in: 1...Money.maximumMinorUnits, using: &generator)
            let currency = currencies[Int.random(in: 0..<currencies.count, using: &generator)]
            let money = Money(minorUnits: units, currency: currency)
            #expect(try Money(parsing: money.decimalString, currency: currency).minorUnits == units)
        }
    }

    @Test("feed cursors: every cursor round-trips; edited, truncated or random ones are refused")
    func feedCursorsEveryCursorRoundTripsEdited() {
        var generator = SplitMix64(seed: Self.seed)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.+/")
        var accepted = 0
        for _ in 0..<Self.iterations {
            let cursor = FeedCursor(
                pinned: Bool.random(using: &generator), createdMicroseconds: Int64.random(in: -1 << 50...1 << 50, using: &generator),
                id: UUID()
            )
            #expect((try? FeedCursor(decoding: cursor.encoded)) == cursor)
            var characters = Array(cursor.encoded)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: characters[Int.random(in: 0..<characters.count, using: &generator)] = alphabet.randomElement(using: &generator) ?? "A"
            case 1: characters.removeLast(Int.random(in: 1...characters.count, using: &generator))
            default: characters = (0..<Int.random(in: 0...120, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "A" }
            }
            let text = String(characters)
            do {
                _ = try FeedCursor(decoding: text)
                accepted += 1
            } catch let error as ServiceError {
                #expect(error.field == "cursor")
            } catch {
                Issue.record(error, "unexpected error for \(text)")
            }
        }
        // An edit can land in base64 padding bits and change nothing; anything more is a bug.
        #expect(accepted < Self.iterations / 100)
    }

    @Test("invite codes: six letters or digits of the alphabet in any case, nothing else")
    func inviteCodesSixLettersOrDigitsOf() {
        var generator = SplitMix64(seed: Self.seed)
        let tokens = ["A", "b", "C", "2", "9", "0", "O", "1", "I", "l", " ", "-", "é", "\u{0}", "ab", "XYZ"]
        for _ in 0..<Self.iterations {
            let text = Self.soup(tokens, Int.random(in: 0...8, using: &generator), using: &generator)
            if let code = InviteCode(text) {
                #expect(code.value.count == InviteCode.length)
                #expect(code.value.allSatisfy { InviteCode.alphabet.contains($0) })
                #expect(InviteCode(code.value.lowercased()) == code)
            }
        }
        for _ in 0..<1000 {
            let code = InviteCode.random()
            #expect(InviteCode(code.value) == code)
        }
    }

    @Test("community settings: JSON soup parses into settings that validate, or names the offending key")
    func communitySettingsJSONSoupParsesIntoSettings() {
        var generator = SplitMix64(seed: Self.seed)
        let tokens = [
            "{", "}", "[", "]", ",", ":", "\"timezone\"", "\"allowMemberEvents\"", "\"allowMemberPosts\"", "\"defaultReminderHours\"", "\"x\"",
            "\"Europe/Berlin\"", "\"Mars/Olympus\"", "true", "false", "null", "24", "-1", "169", "1e3", "\"24\"", " ",
        ]
        var parsed = 0
        for _ in 0..<Self.iterations {
            let text =
                Bool.random(using: &generator)
                ? "{" + Self.soup(tokens, Int.random(in: 0...6, using: &generator), using: &generator) + "}"
                : Self.soup(tokens, Int.random(in: 0...8, using: &generator), using: &generator)
            do {
                let settings = try CommunitySettings.parse(json: text)
                parsed += 1
                #expect(throws: Never.self) { try settings.validate() }
            } catch let error as ServiceError {
                #expect(error.code == .invalidInput)
                #expect(error.field?.hasPrefix("settings") == true)
            } catch {
                Issue.record(error, "unexpected error for \(text)")
            }
        }
        #expect(parsed > 0)
    }

    @Test("recurrence rules: token soup parses or names the part, and parsed rules expand within bounds")
    func recurrenceRulesTokenSoupParsesOrNames() throws {
        var generator = SplitMix64(seed: Self.seed)
        let tokens = [
            "FREQ=", "DAILY", "WEEKLY", "MONTHLY", "YEARLY", "HOURLY", ";", ";", "BYDAY=", "MO", "TU", "-1FR", "+2SA", "53MO", ",", "BYMONTHDAY=",
            "31", "-1", "0", "BYMONTH=", "2", "13", "COUNT=", "UNTIL=", "20261231T000000Z", "2026-12-31", "INTERVAL=", "1", "3",
            "999999999999", "BYSETPOS=", "-366", "WKST=", "SU", "=", "RRULE:", " ", "x",
        ]
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let start = LocalDateTime(date: CivilDate(year: 2026, month: 3, day: 29), hour: 2, minute: 30)
        var parsed = 0
        for _ in 0..<Self.iterations {
            var text = Self.soup(tokens, Int.random(in: 0...10, using: &generator), using: &generator)
            if Bool.random(using: &generator) {
                text = "FREQ=" + ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"][Int.random(in: 0..<4, using: &generator)] + ";" + text
            }
            do {
                let rule = try RecurrenceRule(parsing: text)
                parsed += 1
                let dates = RecurringSeries(rule: rule, start: start, timeZone: zone).occurrences(limit: 50)
                #expect(dates.count <= 50)
                #expect(zip(dates, dates.dropFirst()).allSatisfy { $0 < $1 }, "\(text)")
            } catch is RecurrenceError {
                continue
            }
        }
        #expect(parsed > 100)
    }
}
