import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl user …`
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "Create, list and show users.",
        subcommands: [
            Create.self, List.self, Show.self, UserProfileCommand.self, UserOperatorCommand.self, UserExportCommand.self, UserUpdateCommand.self,
        ]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a user (as if they signed up).")
        @OptionGroup var database: DatabaseOptions
        @Option(help: "Email address.") var email: String
        @Option(help: "Display name (at most 100 characters).") var name: String
        @Option(help: "Sign in with Apple id (default: a generated local id).") var appleID: String?
        @OptionGroup var output: JSONOption

        func run() async throws {
            let user = try await withServices(database) { try await $0.users.create(email: email, displayName: name, appleID: appleID) }
            if output.json { return try printJSON(user) }
            print("Created user \(user.id) (\(user.displayName) <\(user.email)>).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List all users (operator).")
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let users = try await withServices(database) { try await $0.users.list() }
            if output.json { return try printJSON(users) }
            printTable(["ID", "NAME", "EMAIL", "CREATED"], users.map { [$0.id.description, $0.displayName, $0.email, show($0.createdAt)] })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user (by id or email).")
        @OptionGroup var database: DatabaseOptions
        @Argument(help: "User id or email.") var user: String
        @OptionGroup var output: JSONOption

        func run() async throws {
            let found = try await withServices(database) { services in
                try await services.users.getAsOperator(try await services.users.resolve(user))
            }
            if output.json { return try printJSON(found) }
            printTable(
                ["ID", "NAME", "EMAIL", "APPLE ID", "CREATED"],
                [[found.id.description, found.displayName, found.email, found.appleID, show(found.createdAt)]])
        }
    }
}
