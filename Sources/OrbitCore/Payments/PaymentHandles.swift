package import Foundation
import OrbitPostgres

/// What a payment handle is (`payment_handle_kind`): where a user is paid, one of each per user.
package enum PaymentHandleKind: String, DatabaseEnum {
    case revolut
    case paypalMe = "paypal_me"
    case venmo
    case cashApp = "cash_app"
    case upi
    case iban
    case czechAccount = "czech_account"
    case lightning
    case text

    package var description: String { rawValue }
}

/// A bank account in IBAN form (Settle Up's `bankAccount`): the EPC QR code's beneficiary.
package struct BankAccount: Sendable, Codable, Equatable {
    /// Upper case, without spaces.
    package var iban: String
    /// Optional in SEPA; upper case.
    package var bic: String?
    /// The account holder's name, as the bank knows it.
    package var holder: String

    package init(iban: String, bic: String? = nil, holder: String) {
        self.iban = iban
        self.bic = bic
        self.holder = holder
    }
}

/// Where a user is paid back (Settle Up's `paymentHandles`, `bankAccount` and `lightningAddress`;
/// docs/money.md, "Getting paid back"): read by the people who share a community with them, put
/// whole by the user (a handle left out is removed). Each is checked as its kind says
/// (`validated()`); nil is none.
package struct PaymentHandles: Sendable, Codable, Equatable {
    /// A Revolut username (revolut.me/…), without its @.
    package var revolut: String?
    /// A PayPal.me name (paypal.me/…).
    package var paypalMe: String?
    /// A Venmo username, without its @.
    package var venmo: String?
    /// A Cash App $Cashtag, without its $.
    package var cashApp: String?
    /// A UPI id (virtual payment address), name@bank.
    package var upi: String?
    package var iban: BankAccount?
    /// A Czech account number, [prefix-]number/bank.
    package var czechAccount: String?
    /// A Lightning address (LUD-16), user@domain.
    package var lightning: String?
    /// Anything else: "cash at practice is fine".
    package var text: String?

    enum CodingKeys: String, CodingKey {
        case revolut, paypalMe = "paypal_me", venmo, cashApp = "cash_app", upi, iban, czechAccount = "czech_account", lightning, text
    }

    package init(
        revolut: String? = nil, paypalMe: String? = nil, venmo: String? = nil, cashApp: String? = nil, upi: String? = nil,
        iban: BankAccount? = nil, czechAccount: String? = nil, lightning: String? = nil, text: String? = nil
    ) {
        self.revolut = revolut
        self.paypalMe = paypalMe
        self.venmo = venmo
        self.cashApp = cashApp
        self.upi = upi
        self.iban = iban
        self.czechAccount = czechAccount
        self.lightning = lightning
        self.text = text
    }

    /// The handles as stored: each checked, and normalized (an IBAN in upper case without spaces,
    /// a leading @ or $ dropped, a Lightning address in lower case).
    /// - Throws: `ServiceError.invalidInput(field:)` naming the first bad one (`iban.iban`, `upi`).
    package func validated() throws -> PaymentHandles {
        var result = PaymentHandles()
        result.revolut = try revolut.map { try Self.username($0, field: "revolut", strip: "@", length: 3...32, extra: "._-") }
        result.paypalMe = try paypalMe.map { try Self.username($0, field: "paypal_me", strip: nil, length: 1...20, extra: "") }
        result.venmo = try venmo.map { try Self.username($0, field: "venmo", strip: "@", length: 5...30, extra: "_-") }
        result.cashApp = try cashApp.map { handle in
            let tag = try Self.username(handle, field: "cash_app", strip: "$", length: 1...20, extra: "_-")
            guard tag.utf8.first.map(Validate.isLetter) == true else {
                throw ServiceError.invalidInput(field: "cash_app", reason: "must start with a letter, after its $")
            }
            return tag
        }
        result.upi = try upi.map(Self.upi)
        result.iban = try iban.map(Self.bankAccount)
        result.czechAccount = try czechAccount.map { try CzechAccount.parse($0).description }
        result.lightning = try lightning.map(Self.lightning)
        result.text = try text.map { try Self.counted(try Validate.text($0, field: "text", limit: 500, multiline: true), field: "text", limit: 500) }
        return result
    }

    /// The handles one by one, in the kinds' order.
    var entries: [(kind: PaymentHandleKind, handle: String, bic: String?, holder: String?)] {
        var entries: [(kind: PaymentHandleKind, handle: String, bic: String?, holder: String?)] = []
        func add(_ kind: PaymentHandleKind, _ handle: String?) { if let handle { entries.append((kind, handle, nil, nil)) } }
        add(.revolut, revolut)
        add(.paypalMe, paypalMe)
        add(.venmo, venmo)
        add(.cashApp, cashApp)
        add(.upi, upi)
        if let iban { entries.append((.iban, iban.iban, iban.bic, iban.holder)) }
        add(.czechAccount, czechAccount)
        add(.lightning, lightning)
        add(.text, text)
        return entries
    }

    /// Sets the handle of `kind` from a stored row.
    mutating func set(_ kind: PaymentHandleKind, handle: String, bic: String?, holder: String?) {
        switch kind {
        case .revolut: revolut = handle
        case .paypalMe: paypalMe = handle
        case .venmo: venmo = handle
        case .cashApp: cashApp = handle
        case .upi: upi = handle
        case .iban: iban = BankAccount(iban: handle, bic: bic, holder: holder ?? "")
        case .czechAccount: czechAccount = handle
        case .lightning: lightning = handle
        case .text: text = handle
        }
    }

    /// ASCII letters, digits and `extra`, `length` long, after an optional leading `strip`.
    private static func username(_ value: String, field: String, strip: Character?, length: ClosedRange<Int>, extra: String) throws -> String {
        var name = Substring(value)
        if let strip, name.first == strip { name = name.dropFirst() }
        let allowed = Set(extra.utf8)
        guard length.contains(name.utf8.count), name.utf8.allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) || allowed.contains($0) })
        else {
            let others = extra.isEmpty ? "" : " and \(extra.map { "\($0)" }.joined(separator: " "))"
            throw ServiceError.invalidInput(
                field: field, reason: "must be \(length.lowerBound) to \(length.upperBound) letters, digits\(others)")
        }
        return String(name)
    }

    /// `text`, at most `limit` code points long too (as the database and a JSON Schema count,
    /// where `Validate.text` counts characters).
    private static func counted(_ text: String, field: String, limit: Int) throws -> String {
        guard text.unicodeScalars.count <= limit else { throw ServiceError.invalidInput(field: field, reason: "must be at most \(limit) characters") }
        return text
    }

    /// NPCI's virtual payment address: name@bank.
    private static func upi(_ value: String) throws -> String {
        let parts = value.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (2...256).contains(parts[0].utf8.count),
            parts[0].utf8.allSatisfy({
                Validate.isLetter($0) || Validate.isDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
            }),
            (2...64).contains(parts[1].utf8.count), parts[1].utf8.first.map(Validate.isLetter) == true,
            parts[1].utf8.allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) })
        else {
            throw ServiceError.invalidInput(field: "upi", reason: "must be a UPI id, name@bank (such as ada@okaxis)")
        }
        return value
    }

    /// LUD-16: a user name of lower-case letters, digits and `-_.+`, then a domain name.
    private static func lightning(_ value: String) throws -> String {
        let address = value.lowercased()
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        let label = { (text: Substring) in !text.isEmpty && text.utf8.count <= 63 && text.utf8.allSatisfy(Validate.isLabelByte) }
        guard address.utf8.count <= 255, parts.count == 2, (1...64).contains(parts[0].utf8.count),
            parts[0].utf8.allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) || "-_.+".utf8.contains($0) }),
            parts[1].split(separator: ".", omittingEmptySubsequences: false).count >= 2,
            parts[1].split(separator: ".", omittingEmptySubsequences: false).allSatisfy(label)
        else {
            throw ServiceError.invalidInput(field: "lightning", reason: "must be a Lightning address, user@domain (such as ada@getalby.com)")
        }
        return address
    }

    private static func bankAccount(_ account: BankAccount) throws -> BankAccount {
        let iban = try IBAN.parse(account.iban, field: "iban.iban")
        let bic = try account.bic.map { value in
            let bic = value.uppercased()
            let bytes = Array(bic.utf8)
            guard bytes.count == 8 || bytes.count == 11, bytes.prefix(6).allSatisfy(Validate.isLetter),
                bytes.dropFirst(6).allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) })
            else {
                throw ServiceError.invalidInput(field: "iban.bic", reason: "must be a BIC of 8 or 11 letters and digits (such as DEUTDEFF)")
            }
            return bic
        }
        let holder = try counted(try Validate.text(account.holder, field: "iban.holder", limit: 70), field: "iban.holder", limit: 70)
        return BankAccount(iban: iban, bic: bic, holder: holder)
    }
}

/// International Bank Account Numbers (ISO 13616).
package enum IBAN {
    /// The lengths of the countries whose IBANs are checked by length too (the SEPA area and
    /// some others); any other country's is 15 to 34 characters.
    static let lengths: [String: Int] = [
        "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18,
        "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20,
        "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27,
        "VA": 22,
    ]

    /// `text` as an IBAN: spaces dropped, upper case, two letters, two check digits and the
    /// account, the country's length, and mod 97 of the rearranged number 1.
    /// - Throws: `ServiceError.invalidInput(field:)`.
    package static func parse(_ text: String, field: String) throws -> String {
        let iban = text.filter { $0 != " " }.uppercased()
        let bytes = Array(iban.utf8)
        guard (15...34).contains(bytes.count), bytes.prefix(2).allSatisfy(Validate.isLetter), bytes[2...3].allSatisfy(Validate.isDigit),
            bytes.dropFirst(4).allSatisfy({ Validate.isLetter($0) || Validate.isDigit($0) })
        else {
            throw ServiceError.invalidInput(field: field, reason: "must be an IBAN: two letters, two check digits and up to 30 letters and digits")
        }
        let country = String(iban.prefix(2))
        if let length = lengths[country], length != bytes.count {
            throw ServiceError.invalidInput(field: field, reason: "must be \(length) characters long for \(country)")
        }
        guard mod97(iban.dropFirst(4) + iban.prefix(4)) == 1 else {
            throw ServiceError.invalidInput(field: field, reason: "has wrong check digits (mod 97): a character is mistyped")
        }
        return iban
    }

    /// The IBAN of a domestic account: `country`, the check digits mod 97 gives, `bban`.
    static func make(country: String, bban: String) -> String {
        let check = 98 - mod97(bban + country + "00")
        return country + (check < 10 ? "0" : "") + String(check) + bban
    }

    /// The remainder of the number that `text` spells (letters as 10 to 35) divided by 97,
    /// digit by digit (ISO 7064 MOD 97-10).
    static func mod97<Text: StringProtocol>(_ text: Text) -> Int {
        var remainder = 0
        for byte in text.utf8 {
            if Validate.isDigit(byte) {
                remainder = (remainder * 10 + Int(byte - 0x30)) % 97
            } else {
                let value = Int((byte | 0x20) - 0x61) + 10
                remainder = (remainder * 100 + value) % 97
            }
        }
        return remainder
    }
}

/// A Czech bank account number, `[prefix-]number/bank` (the Czech National Bank's decree 169/2011):
/// each of prefix and number passes the weighted checksum mod 11.
package struct CzechAccount: Sendable, Equatable, CustomStringConvertible {
    package var prefix: String?
    package var number: String
    package var bank: String

    /// - Throws: `ServiceError.invalidInput(field: "czech_account")`.
    package static func parse(_ text: String) throws -> CzechAccount {
        let refusal = ServiceError.invalidInput(
            field: "czech_account", reason: "must be a Czech account number, [prefix-]number/bank (such as 19-2000145399/0800)")
        let slash = text.split(separator: "/", omittingEmptySubsequences: false)
        guard slash.count == 2, slash[1].utf8.count == 4, slash[1].utf8.allSatisfy(Validate.isDigit) else { throw refusal }
        let dash = slash[0].split(separator: "-", omittingEmptySubsequences: false)
        guard dash.count <= 2, dash.allSatisfy({ $0.utf8.allSatisfy(Validate.isDigit) }) else { throw refusal }
        let prefix = dash.count == 2 ? String(dash[0]) : nil
        let number = String(dash[dash.count - 1])
        guard (2...10).contains(number.utf8.count), prefix.map({ (1...6).contains($0.utf8.count) }) ?? true else { throw refusal }
        guard number.contains(where: { $0 != "0" }) else { throw refusal }
        let numberWeights = [6, 3, 7, 9, 10, 5, 8, 4, 2, 1]
        guard weighted(number, numberWeights) % 11 == 0, prefix.map({ weighted($0, Array(numberWeights.suffix(6))) % 11 == 0 }) ?? true else {
            throw ServiceError.invalidInput(field: "czech_account", reason: "fails the weighted checksum (mod 11): a digit is mistyped")
        }
        return CzechAccount(prefix: prefix, number: number, bank: String(slash[1]))
    }

    /// The digits' sum, each times the weight of its place counted from the right.
    private static func weighted(_ digits: String, _ weights: [Int]) -> Int {
        zip(digits.utf8.reversed(), weights.reversed()).reduce(0) { $0 + Int($1.0 - 0x30) * $1.1 }
    }

    package var description: String { (prefix.map { "\($0)-" } ?? "") + number + "/" + bank }

    /// The account's IBAN: CZ, the check digits, the bank, the prefix in 6 digits and the number in 10.
    package var iban: String {
        func padded(_ text: String, _ width: Int) -> String { String(repeating: "0", count: width - text.count) + text }
        return IBAN.make(country: "CZ", bban: bank + padded(prefix ?? "", 6) + padded(number, 10))
    }
}

/// One payment handle as the change feed carries it (`payment_handle`): a row of
/// `payment_handles`, its owner and kind, normalized as stored.
package struct PaymentHandle: Sendable, Codable, Equatable {
    package var id: UUID
    package var userID: UserID
    package var kind: PaymentHandleKind
    package var handle: String
    package var bic: String?
    package var holder: String?
    package var updatedAt: Date

    enum CodingKeys: String, CodingKey {
        case id, userID = "user_id", kind, handle, bic, holder, updatedAt = "updated_at"
    }

    static let columns = "h.id, h.user_id, h.kind, h.handle, h.bic, h.holder, h.updated_at"

    init(row: PostgresRow) throws {
        (id, userID, kind, handle, bic, holder, updatedAt) = try row.decode((UUID, UserID, PaymentHandleKind, String, String?, String?, Date).self)
    }
}
