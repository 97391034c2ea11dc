/// The domains of OrbitCove, each a folder of `Sources/OrbitCore` with its service, and what
/// "Adding a domain" (docs/architecture.md) asks of each around it: its routes, its commands,
/// its SQL, its tests, its section of docs/api.md and its rows in the API's authorization
/// matrix. `DomainTests` checks every domain against its parts; a part a domain leaves out is
/// exempted here, with the reason, and an exemption of a part that exists fails too.
package enum Domain: String, CaseIterable, Sendable {
    case users = "Users", family = "Family", communities = "Communities", members = "Members", invites = "Invites"
    case events = "Events", calendarFeeds = "CalendarFeeds", feed = "Feed", media = "Media"
    case expenses = "Expenses", settlements = "Settlements", payments = "Payments", rates = "Rates", export = "Export", dues = "Dues"
    case recurringCharges = "RecurringCharges", billing = "Billing"
    case notifications = "Notifications", devices = "Devices", chat = "Chat", chores = "Chores", search = "Search"
    case encryption = "Encryption", sync = "Sync", sessions = "Sessions", idempotency = "Idempotency", lifecycle = "Lifecycle"
    case jobs = "Jobs"

    /// The parts of a domain around its Core folder.
    package enum Part: String, CaseIterable, Sendable {
        /// `Sources/OrbitCore/<Domain>/`.
        case coreFolder
        /// `Sources/OrbitAPI/Routes/<Stem>Routes.swift`.
        case routes
        /// `Sources/orbitctl/<Domain>/`.
        case commands
        /// `sql/NNN_<sqlName>.sql`.
        case sql
        /// `<Stem>Tests.swift`, in any test target.
        case tests
        /// A `## <apiSection>` or `### <apiSection>` heading of docs/api.md.
        case docs
        /// A case of `AuthorizationMatrixTests` calling `matrixPath`.
        case authorizationMatrix
    }

    /// The folders of `Sources/OrbitCore` that are not domains: shared mechanisms.
    package static let mechanisms: [String: String] = [
        "Runner": "the request runner every service shares (transactions, roles, paging, errors)",
        "Values": "the typed values every domain takes (Money, Currency, CivilDate, identifiers)",
        "Recurrence": "the RFC 5545 rule engine, used by events, chores and calendar feeds",
    ]

    /// The singular of the domain's name, in its routes' and tests' file names.
    package var stem: String {
        switch self {
        case .users: "User"
        case .communities: "Community"
        case .members: "Member"
        case .invites: "Invite"
        case .events: "Event"
        case .calendarFeeds: "CalendarFeed"
        case .expenses: "Expense"
        case .settlements: "Settlement"
        case .payments: "Payment"
        case .rates: "Rate"
        case .recurringCharges: "RecurringCharge"
        case .notifications: "Notification"
        case .devices: "Device"
        case .chores: "Chore"
        case .sessions: "Session"
        case .jobs: "Job"
        case .family, .feed, .media, .export, .dues, .billing, .chat, .search, .encryption, .sync, .idempotency, .lifecycle: rawValue
        }
    }

    /// The name of its file in sql/ after the number (`calendar_feeds` for 135_calendar_feeds.sql).
    package var sqlName: String {
        rawValue.reduce(into: "") { name, character in
            if character.isUppercase && !name.isEmpty { name += "_" }
            name += character.lowercased()
        }
    }

    /// The heading of its section in docs/api.md (`## ` or `### `).
    package var apiSection: String {
        switch self {
        case .users, .family, .devices, .lifecycle: "Users and family"
        case .communities, .members, .invites: "Communities, members, invites"
        case .events: "Calendar"
        case .calendarFeeds: "Calendar feeds"
        case .feed: "Feed"
        case .media: "Media"
        case .expenses, .settlements, .rates, .export, .dues, .recurringCharges, .billing: "Money"
        case .payments: "Getting paid back"
        case .notifications: "Notifications"
        case .chat: "Chat"
        case .chores: "Chores, points and rewards"
        case .search: "Search"
        case .encryption: "End-to-end encryption"
        case .sync: "Sync"
        case .sessions: "Authentication"
        case .idempotency: "Idempotency"
        case .jobs: "Jobs"
        }
    }

    /// A path of its routes, as `AuthorizationMatrixTests` writes it (`{c}` the community).
    package var matrixPath: String {
        switch self {
        case .users: "/users/me"
        case .family: "/communities/{c}/family"
        case .communities: "/communities/{c}"
        case .members: "/communities/{c}/members"
        case .invites: "/communities/{c}/invites"
        case .events: "/communities/{c}/events"
        case .calendarFeeds: "/users/me/calendar"
        case .feed: "/communities/{c}/posts"
        case .media: "/communities/{c}/media"
        case .expenses: "/communities/{c}/expenses"
        case .settlements: "/communities/{c}/settle-up"
        case .payments: "/users/{a}/payment-handles"
        case .rates: "/communities/{c}/exchange-rates"
        case .export: "/communities/{c}/export"
        case .dues: "/communities/{c}/dues"
        case .recurringCharges: "/communities/{c}/recurring-charges"
        case .billing: "/communities/{c}/billing"
        case .notifications: "/notifications"
        case .devices: "/users/me/devices"
        case .chat: "/chats/{v}"
        case .chores: "/communities/{c}/chores"
        case .search: "/communities/{c}/search"
        case .encryption: "/communities/{c}/keys"
        case .sync: "/communities/{c}/changes"
        case .sessions: "/auth/"
        case .idempotency, .lifecycle, .jobs: ""
        }
    }

    /// The parts this domain leaves out, and why.
    package var exemptions: [Part: String] {
        switch self {
        case .users:
            [.authorizationMatrix: "a user's own routes (/users/me) touch no community; SessionTests covers them"]
        case .family:
            [
                .routes: "a user's family is served by UserRoutes (/users/me/family) and a child's sign-in by ChoreRoutes",
                .authorizationMatrix: "a user's own family touches no community; ChoreAPITests covers the child's sign-in",
            ]
        case .members:
            [
                .routes: "members are served by CommunityRoutes (/communities/{id}/members)",
                .sql: "its SQL is in sql/110_communities.sql: a member is a row of its community",
            ]
        case .invites:
            [.routes: "invites are served by CommunityRoutes (/communities/{id}/invites, /invites/redeem)"]
        case .calendarFeeds:
            [.authorizationMatrix: "a feed is a user's own (/users/me/calendar) and its address is its credential; CalendarFeedTests covers both"]
        case .settlements:
            [.sql: "a settlement is a transaction (sql/150_expenses.sql); balances and settle-up are sql/155_balances.sql"]
        case .export:
            [.sql: "an export reads the money tables; it has no SQL of its own"]
        case .billing:
            [.authorizationMatrix: "its routes are webhooks, checked by their signatures (TokenlessRoutesTests, StripeWebhookTests)"]
        case .notifications:
            [.authorizationMatrix: "a user's notifications (/notifications) touch no community's routes; NotificationTests covers whose they are"]
        case .devices:
            [
                .routes: "devices are served by UserRoutes (/users/me/devices) and a child's by ChoreRoutes",
                .sql: "its SQL is in sql/190_notifications.sql: a device is where notifications go",
                .authorizationMatrix: "a user's own devices touch no community; DeviceTests and DeviceAPITests cover them",
            ]
        case .sync:
            [.sql: "the change log is sql/800_changes.sql and sql/810_client_ids.sql, shared by every domain"]
        case .sessions:
            [
                .routes: "sessions are served by the auth routes (OrbitAPI/Auth/AuthRoutes.swift)",
                .commands: "a session is an app's sign-in; an operator has none to manage",
                .sql: "its tables' rules are in sql/100_users.sql",
                .authorizationMatrix: "signing in touches no community; SessionTests covers it",
            ]
        case .idempotency:
            [
                .routes: "it is a middleware of every write, not a resource",
                .commands: "keys expire by themselves (a scheduled job)",
                .sql: "its table's rights are in sql/100_users.sql, beside the users whose keys they are",
                .tests: "its rules are in APIBehaviourTests, ClientIDTests and ContractEdgeTests",
                .authorizationMatrix: "it is no resource of a community",
            ]
        case .lifecycle:
            [
                .routes: "account deletion is served by UserRoutes (POST and DELETE /users/me/deletion)",
                .sql: "its tables and rules are in migrations/0012_account_deletion.sql; it has no functions in sql/",
                .authorizationMatrix: "deleting one's account touches no community's routes; LifecycleTests covers it",
            ]
        case .jobs:
            [
                .routes: "jobs run on a schedule beside the requests (OrbitRuntime), not as routes",
                .sql: "each job's SQL is in its domain's file",
                .docs: "docs/operations.md describes them: they have no API",
                .authorizationMatrix: "jobs run as the operator, outside any request",
            ]
        case .communities, .events, .feed, .media, .expenses, .payments, .rates, .dues, .recurringCharges, .chat, .chores, .search, .encryption:
            [:]
        }
    }
}
