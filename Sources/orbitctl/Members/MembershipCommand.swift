import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl community membership --community C --as U [--nickname N | --clear-nickname] [--notify TYPE=on|off …]
/// [--pin [--position N] | --unpin]`
struct CommunityMembershipCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "membership",
        abstract: "Show or change one's own membership: nickname, which notifications one gets, and the community's pin in one's list.",
        discussion:
            "Without changes it shows the membership. Notification types: \(NotificationType.allCases.map(\.rawValue).joined(separator: ", "))."
    )
    @Option(help: "Community id.") var community: CommunityID
    @Option(help: "A nickname in this community.") var nickname: String?
    @Flag(help: "Remove the nickname.") var clearNickname = false
    @Option(help: "TYPE=on or TYPE=off, e.g. new_post=off (repeatable).") var notify: [String] = []
    @Flag(help: "Pin the community first in one's list (community list, GET /communities).") var pin = false
    @Flag(help: "Unpin it (its position goes too).") var unpin = false
    @Option(help: "With --pin (or when pinned): its place among the pinned, 0–9999, ascending.") var position: Int?
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
        if pin && unpin { throw ValidationError("Give --pin or --unpin, not both.") }
        if unpin && position != nil { throw ValidationError("--position is a place among pinned communities: give it with --pin.") }
        if let position, !(0...9999).contains(position) { throw ValidationError("--position must be between 0 and 9999.") }
    }

    func act(_ services: OrbitServices, as actor: UserID) async throws -> MyMembership {
        let prefs = try prefs
        let nicknameChange: String?? = clearNickname ? .some(nil) : nickname.map { .some($0) }
        let pinned: Bool? = pin ? true : unpin ? false : nil
        if nicknameChange == nil && prefs.isEmpty && pinned == nil && position == nil {
            return try await services.members.mine(in: community, as: actor)
        }
        return try await services.members.updateMine(
            in: community, nickname: nicknameChange, notificationPrefs: prefs.isEmpty ? nil : prefs, pinned: pinned,
            position: position.map { .some($0) }, as: actor)
    }

    func tell(_ membership: MyMembership) {
        let off = membership.notificationPrefs.filter { !$0.value }.keys.sorted()
        let pin = membership.pinned ? "yes" + (membership.position.map { " (\($0))" } ?? "") : "no"
        printTable(
            ["ROLE", "NICKNAME", "NOTIFICATIONS OFF", "PINNED"],
            [[membership.member.role.rawValue, membership.member.nickname ?? "", off.isEmpty ? "none" : off.joined(separator: ", "), pin]])
    }
}
