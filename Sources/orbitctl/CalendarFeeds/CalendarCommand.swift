import ArgumentParser
import Foundation
import OrbitCore

/// `orbitctl calendar url|rotate|revoke|feed --as U`: a user's calendar feed, the address a
/// phone's calendar subscribes to (docs/calendar-feeds.md).
struct CalendarCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar", abstract: "A user's calendar feed: the secret address a phone's calendar subscribes to.",
        subcommands: [URLCommand.self, Rotate.self, Revoke.self, Feed.self])

    /// Where the links point: the API's address as phones reach it.
    struct LinkOptions: ParsableArguments {
        @Option(help: "The API's address as phones reach it (default: ORBIT_PUBLIC_URL, else http://127.0.0.1:8080).")
        var publicURL: String?

        func link(_ token: CalendarFeedToken, community: CommunityID? = nil) throws -> CalendarFeedLink {
            let base = publicURL ?? ProcessInfo.processInfo.environment["ORBIT_PUBLIC_URL"] ?? "http://127.0.0.1:8080"
            guard let url = URL(string: base), ["https", "http"].contains(url.scheme), url.host != nil, url.query == nil else {
                throw ValidationError("--public-url must be an http(s) URL such as https://api.example.com.")
            }
            guard let secret = token.token else { return CalendarFeedLink(shownBefore: token.createdAt, community: community) }
            return CalendarFeedLink(token: secret, createdAt: token.createdAt, publicURL: base, community: community)
        }
    }

    /// A feed address for people: the link, or (when it was shown before) how to get a new one.
    static func tell(_ link: CalendarFeedLink) {
        guard let url = link.url, let https = link.httpsURL else {
            print("The feed address was made on \(link.createdAt.formatted(.iso8601)) and shown then; the server keeps only its digest.")
            print("`orbitctl calendar rotate` makes a new address (the old one stops working).")
            return
        }
        print(url)
        print("(over https: \(https))")
    }

    struct URLCommand: ActingCommand {
        static let configuration = CommandConfiguration(
            commandName: "url",
            abstract: "Print the acting user's feed address (webcal://…), made and shown the first time it is asked for (then only its date).")
        @Option(help: "Only this community's events (default: all of the user's communities).") var community: CommunityID?
        @OptionGroup var links: LinkOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CalendarFeedLink {
            if let community { _ = try await services.communities.get(community, as: actor) }
            return try links.link(try await services.calendarFeeds.token(as: actor), community: community)
        }

        func tell(_ link: CalendarFeedLink) { CalendarCommand.tell(link) }
    }

    struct Rotate: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Give the acting user a new feed address; the old one stops working at once (404).")
        @OptionGroup var links: LinkOptions
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> CalendarFeedLink {
            try links.link(try await services.calendarFeeds.rotate(as: actor))
        }

        func tell(_ link: CalendarFeedLink) { CalendarCommand.tell(link) }
    }

    struct Revoke: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke the acting user's feed address (404 from now on); `calendar url` makes a new one.")
        @OptionGroup var acting: ActingOptions
        @OptionGroup var output: JSONOption

        func act(_ services: OrbitServices, as actor: UserID) async throws -> DoneOutput {
            DoneOutput(revoked: try await services.calendarFeeds.revoke(as: actor))
        }

        func tell(_ done: DoneOutput) {
            print(done.revoked == true ? "Revoked the calendar feed address." : "There was no calendar feed address to revoke.")
        }
    }

    struct Feed: ActingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the acting user's feed (iCalendar, RFC 5545) as their calendar would fetch it.")
        @Option(help: "Only this community's events.") var community: CommunityID?
        @OptionGroup var acting: ActingOptions
        var output: TextOutput { TextOutput() }

        func act(_ services: OrbitServices, as actor: UserID) async throws -> String {
            try await services.calendarFeeds.feed(of: actor, community: community)
        }

        func tell(_ text: String) {
            FileHandle.standardOutput.write(Data(text.utf8))
        }
    }
}
