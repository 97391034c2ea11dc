package import Foundation
package import OrbitPostgres

/// Every domain of OrbitCove, each a service of its own (one folder per domain) over one shared
/// `RequestRunner`. `orbitctl` and the HTTP API are thin adapters over these.
///
/// Adding a domain takes its folder and one line here, and more around them (its SQL, its
/// policies, the change feed, routes, commands, docs): docs/architecture.md, "Adding a domain",
/// lists every file in order.
package struct OrbitServices: Sendable {
    package var runner: RequestRunner

    package init(
        pool: ConnectionPool, replicas: ReadReplicas? = nil, storage: (any MediaStorage)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        runner = RequestRunner(pool: pool, replicas: replicas, storage: storage, now: now)
    }

    package var pool: ConnectionPool { runner.pool }

    /// The services' clock; tests move it.
    package var now: @Sendable () -> Date {
        get { runner.now }
        set { runner.now = newValue }
    }

    /// Where uploads are kept.
    package var storage: (any MediaStorage)? {
        get { runner.storage }
        set { runner.storage = newValue }
    }

    /// What makes images' thumbnails at upload.
    package var thumbnailer: any ThumbnailMaking {
        get { runner.thumbnailer }
        set { runner.thumbnailer = newValue }
    }

    package var users: UserService { UserService(runner) }
    package var family: FamilyService { FamilyService(runner) }
    package var communities: CommunityService { CommunityService(runner) }
    package var members: MemberService { MemberService(runner) }
    package var invites: InviteService { InviteService(runner) }
    package var events: EventService { EventService(runner) }
    package var calendarFeeds: CalendarFeedService { CalendarFeedService(runner) }
    package var communityKeys: CommunityKeyService { CommunityKeyService(runner) }
    package var feed: FeedService { FeedService(runner) }
    package var media: MediaService { MediaService(runner) }
    package var expenses: ExpenseService { ExpenseService(runner) }
    package var settlements: SettlementService { SettlementService(runner) }
    package var payments: PaymentService { PaymentService(runner) }
    package var rates: RateService { RateService(runner) }
    package var exports: ExportService { ExportService(runner) }
    package var dues: DuesService { DuesService(runner) }
    package var recurringCharges: RecurringChargeService { RecurringChargeService(runner) }
    package var billing: BillingService { BillingService(runner) }
    package var chat: ChatService { ChatService(runner) }
    package var chores: ChoreService { ChoreService(runner) }
    package var search: SearchService { SearchService(runner) }
    package var notifications: NotificationService { NotificationService(runner) }
    package var sessions: SessionService { SessionService(runner) }
    package var devices: DeviceService { DeviceService(runner) }
    package var idempotency: IdempotencyService { IdempotencyService(runner) }
    package var clientCreates: ClientCreateService { ClientCreateService(runner) }
    package var lifecycle: LifecycleService { LifecycleService(runner) }
    package var sync: SyncService { SyncService(runner) }
}
