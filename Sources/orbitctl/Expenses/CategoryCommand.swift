import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl category …`: a community's own categories (docs/money.md, "Categories").
struct CategoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "category",
        abstract: "Add, list, rename, archive and unarchive a community's own expense categories.",
        discussion: """
            Besides the built-in categories (food, transport, groceries, rent, entertainment, utilities,
            shopping, health, travel, other, equipment, dues), a community has its own, each a name and an
            emoji. Any member adds one; its creator or an admin renames, archives or unarchives it. An
            archived category stays on the expenses that have it and is offered for no new one. Give an
            expense one with `expense add|update --category-id ID`.
            """,
        subcommands: [Add.self, List.self, Rename.self, Archive.self, Unarchive.self]
    )

    struct Add: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Add a category with an emoji (any member).")
        @Option(help: "Community id.") var community: CommunityID
        @Option(help: "The emoji shown with it (at most 16 code points).") var emoji: String
        @Argument(help: "Its name (1 to 50 characters, not the name of another category in use here).") var name: String
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CustomCategory {
            try await services.expenses.addCategory(named: name, emoji: emoji, to: community, as: actor)
        }

        func tell(_ category: CustomCategory) {
            print("Added category \(category.emoji) \(category.name) (\(category.id)) to community \(community).")
        }
    }

    struct List: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "List a community's own categories, oldest first (any member).")
        @Option(help: "Community id.") var community: CommunityID
        @Flag(help: "Archived categories too.") var archived = false
        @OptionGroup var page: PageOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> Page<CustomCategory> {
            try await services.expenses.categories(of: community, archived: archived, limit: page.limit, cursor: page.cursor, as: actor)
        }

        func tell(_ categories: Page<CustomCategory>) {
            printPage(categories, ["ID", "EMOJI", "NAME", "ARCHIVED"]) {
                [$0.id.description, $0.emoji, $0.name, $0.archivedAt.map(show) ?? ""]
            }
        }
    }

    struct Rename: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a category or change its emoji (its creator or an admin).")
        @Argument(help: "The category's id.") var category: CustomCategoryID
        @Option(help: "The new name.") var name: String?
        @Option(help: "The new emoji.") var emoji: String?
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if name == nil && emoji == nil { throw ValidationError("Give --name, --emoji or both.") }
        }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CustomCategory {
            try await services.expenses.updateCategory(category, name: name, emoji: emoji, as: actor)
        }

        func tell(_ category: CustomCategory) {
            print("Category \(category.id) is now \(category.emoji) \(category.name).")
        }
    }

    struct Archive: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Archive a category: its expenses keep it, no new one takes it (its creator or an admin).")
        @Argument(help: "The category's id.") var category: CustomCategoryID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CustomCategory {
            try await services.expenses.updateCategory(category, archived: true, as: actor)
        }

        func tell(_ category: CustomCategory) {
            print("Archived category \(category.emoji) \(category.name) (\(category.id)).")
        }
    }

    struct Unarchive: ActingCommand {
        static let configuration = CommandConfiguration(abstract: "Offer an archived category again (its creator or an admin).")
        @Argument(help: "The category's id.") var category: CustomCategoryID
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CustomCategory {
            try await services.expenses.updateCategory(category, archived: false, as: actor)
        }

        func tell(_ category: CustomCategory) {
            print("Category \(category.emoji) \(category.name) (\(category.id)) is in use again.")
        }
    }
}
