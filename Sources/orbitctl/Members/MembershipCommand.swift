import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl community membership --community C --as U [--nickname N | --clear-nickname] [--notify TYPE=on|off …]`
struct CommunityMembershipCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "membership",
        abstract: "Show or change one's own membership: nickname and which notifications one gets.",
        discussion:
            "Without changes it shows the membership. Notification types: \(NotificationType.allCases.map(\.rawValue).joined(separator: ", "))."
    )
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "A nickname in this community.") var nickname: String?
    @Flag(help: "Remove the nickname.") var clearNickname = false
    @Option(help: "TYPE=on or TYPE=off, e.g. new_post=off (repeatable).") var notify: [String] = []
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    /// The notification preferences to change (validate() parses them before connecting).
    private var prefs: [NotificationType: Bool] {
        get throws {
            var prefs: [NotificationType: Bool] = [:]
            for item in notify {
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, let on = ["on": true, "off": false][pair[1]] else {
                    throw CommandFailure("--notify takes TYPE=on or TYPE=off (got \"\(item)\").")
                }
                prefs[try NotificationType.parse(pair[0], field: "notify")] = on
            }
            return prefs
        }
    }

    func validate() throws {
        if nickname != nil && clearNickname { throw ValidationError("Give --nickname or --clear-nickname, not both.") }
        _ = try prefs
    }

    func act(_ services: OrbitServices, as actor: UserID) async throws -> MyMembership {
        let prefs = try prefs
        let nicknameChange: String?? = clearNickname ? .some(nil) : nickname.map { .some($0) }
        if nicknameChange == nil && prefs.isEmpty { return try await services.members.mine(in: community, as: actor) }
        return try await services.members.updateMine(
            in: community, nickname: nicknameChange, notificationPrefs: prefs.isEmpty ? nil : prefs, as: actor)
    }

    func tell(_ membership: MyMembership) {
        let off = membership.notificationPrefs.filter { !$0.value }.keys.sorted()
        printTable(
            ["ROLE", "NICKNAME", "NOTIFICATIONS OFF"],
            [[membership.member.role.rawValue, membership.member.nickname ?? "", off.isEmpty ? "none" : off.joined(separator: ", ")]])
    }
}
