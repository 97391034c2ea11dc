import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl user profile USER --as U`
struct UserProfileCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "A user's public profile (name and avatar, never the email), as a co-member sees it.")
    @Argument(help: "User id or email.") var user: String
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> PublicProfile {
        try await services.users.profile(try await services.users.resolve(user), as: actor)
    }

    func tell(_ profile: PublicProfile) {
        printTable(["ID", "NAME", "AVATAR"], [[profile.id.description, profile.displayName, profile.avatarURL ?? ""]])
    }
}

/// `orbitctl user operator USER --grant|--revoke --as OPERATOR`
struct UserOperatorCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Make a user an operator (who may set subscriptions over the API), or take it back. Audit-logged.",
        discussion: "Runs with the database's operator role: only someone with the server's database credentials can do it."
    )
    @Argument(help: "User id or email.") var user: String
    @Flag(exclusivity: .exclusive, help: "--grant makes the user an operator, --revoke takes it back.") var change: Change
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    enum Change: EnumerableFlag {
        case grant, revoke
    }

    func act(_ services: OrbitServices, as actor: UserID) async throws -> User {
        try await services.users.setOperator(
            try await services.users.resolve(user), change == .grant, as: actor)
    }

    func tell(_ updated: User) {
        print("\(updated.email) is \(change == .grant ? "now" : "no longer") an operator.")
    }
}

/// `orbitctl user export --as U`: the user's own data, as `GET /users/me/export` gives it.
struct UserExportCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Your own data, portable (JSON): the account, notification preferences, payment handles, family and memberships.",
        discussion: "A community's content and money are in its own export (`orbitctl export`).")
    @OptionGroup var acting: ActingOptions
    /// Always JSON: the export is for another program.
    var output: JSONOutput { JSONOutput() }

    func act(_ services: OrbitServices, as actor: UserID) async throws -> UserExport {
        try await services.users.exportData(as: actor)
    }

    func tell(_ export: UserExport) {}
}

/// `orbitctl user update --as U`: the acting user's own profile, as `PATCH /users/me`.
struct UserUpdateCommand: ActingCommand {
    static let configuration = CommandConfiguration(
        commandName: "update", abstract: "Change your own profile: name, email, avatar, language; what is not given stays.")
    @Option(help: "Display name, up to 100 characters.") var name: String?
    @Option(help: "Email address.") var email: String?
    @Option(help: "An http(s) address of the avatar.") var avatarURL: String?
    @Option(help: "A BCP 47 language tag (en, hi-IN, cs): notifications and pushes come in it, amounts formatted by its locale.")
    var language: String?
    @Option(help: "An IANA time zone name (Asia/Kolkata): the weekly digest comes Monday morning there.") var timezone: String?
    @OptionGroup var acting: ActingOptions
    @OptionGroup var output: JSONOption

    func act(_ services: OrbitServices, as actor: UserID) async throws -> User {
        try await services.users.updateProfile(
            displayName: name, email: email, avatarURL: avatarURL, language: language, timezone: timezone, as: actor)
    }

    func tell(_ user: User) {
        printTable(
            ["ID", "NAME", "EMAIL", "LANGUAGE"], [[user.id.description, user.displayName, user.email, user.language ?? "(English)"]])
    }
}
