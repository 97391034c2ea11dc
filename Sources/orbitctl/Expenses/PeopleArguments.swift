import ArgumentParser
import Foundation
import OrbitCore

/// Parses `--between USER,USER` and `--parts USER=VALUE,…`: members by id or email, family
/// members (children, whose parent owes their share) by id.
func resolvePeople(_ references: [String], _ services: OrbitServices, as actor: UserID) async throws -> [Holder] {
    let found = try await services.expenses.participants(references.compactMap { UUID(uuidString: $0) }, as: actor)
    var people: [Holder] = []
    for reference in references {
        if let id = UUID(uuidString: reference), let person = found[id] {
            people.append(person)
        } else {
            people.append(.user(try await services.users.resolve(reference)))
        }
    }
    return people
}

func resolveUsers(_ list: String, _ services: OrbitServices, as actor: UserID) async throws -> [Holder] {
    try await resolvePeople(
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }, services, as: actor)
}

/// `USER=VALUE,…` pairs, in order, for `option`.
func pairs(_ list: String, option: String) throws -> [(String, String)] {
    try list.split(separator: ",").map { item in
        let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard pair.count == 2 else { throw CommandFailure("\(option) takes USER=VALUE pairs separated by commas (got \"\(item)\").") }
        return (pair[0], pair[1])
    }
}

func resolveParts(_ list: String, _ services: OrbitServices, as actor: UserID) async throws -> [Holder: String] {
    let given = try pairs(list, option: "--parts")
    let people = try await resolvePeople(given.map(\.0), services, as: actor)
    return Dictionary(zip(people, given.map(\.1)), uniquingKeysWith: { _, last in last })
}

/// `--paid-by USER` (who paid it all) or `--paid-by USER=AMOUNT,…` (several payers).
func resolvePayers(
    _ text: String, currency: Currency, _ services: OrbitServices
) async throws -> (paidBy: UserID?, payers: [UserID: Int64]?) {
    guard text.contains("=") else { return (try await services.users.resolve(text), nil) }
    var payers: [UserID: Int64] = [:]
    for (reference, amount) in try pairs(text, option: "--paid-by") {
        payers[try await services.users.resolve(reference)] = try Money(parsing: amount, currency: currency, field: "paid_by").minorUnits
    }
    return (nil, payers)
}
