import ArgumentParser
import Foundation
import HummingbirdWSClient
import Logging
import OrbitAPI
import OrbitCore
import OrbitPostgres
import ServiceLifecycle
import Synchronization

/// `orbit-bench chat` (issue 22, item 5): three measurements of chat.
///
/// 1. Send → delivered, in a community conversation of `members` people, each but the sender with
///    a real WebSocket client on `GET /live` of a real server: the time from the send (the service
///    call starting) to the `message` on each socket; each client then marks the message delivered
///    (`PUT …/delivered` through the service), and the sender's own socket counts the receipts:
///    the time until every other participant's receipt has arrived is "delivered" as the sender's
///    app shows it.
/// 2. History: one conversation with `history` messages (bulk-loaded); page 1 against page 500
///    (50 a page, from the page's cursor), each read `reads` times through the service.
/// 3. Unread counts: a user in 50 conversations with unread messages; the conversation list
///    (one statement computes every count) read `reads` times.
///
/// Clients, server and PostgreSQL share this machine's cores.
struct ChatBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat", abstract: "Chat: send → delivered on live sockets; history page 1 vs 500; unread counts of 50 conversations.")

    @Option(help: "Server to use (a superuser). Default: a throwaway local cluster.") var databaseURL: String?
    @Option(help: "People in the community conversation (the sender and members - 1 sockets).") var members = 200
    @Option(help: "Messages sent, one at a time, each awaited until delivered to all.") var messages = 30
    @Option(help: "Messages in the history conversation.") var history = 1_000_000
    @Option(help: "Reads of each page and of the list.") var reads = 200

    func validate() throws {
        guard history >= 500 * 50 else { throw ValidationError("--history must be at least 25000 (page 500 of 50 a page)") }
        guard members >= 2, messages >= 1, reads >= 1 else {
            throw ValidationError("--members must be at least 2, --messages and --reads at least 1")
        }
    }

    func run() async throws {
        try await BenchmarkServer.withMigrated(databaseURL: databaseURL) { server in
            // Receipts as a request each (the service call of PUT /chats/{id}/delivered), then as
            // a `delivered` message on the socket. The server closes its pool when it stops: each
            // run gets one of its own.
            for receipts in [Receipts.request, .socket] {
                let serverPool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 8))
                do {
                    try await sendToDelivered(OrbitServices(pool: serverPool), receipts: receipts)
                } catch {
                    await serverPool.close()
                    throw error
                }
            }
            let pool = ConnectionPool(configuration: server.configuration, options: .init(maxConnections: 4))
            do {
                let services = OrbitServices(pool: pool)
                try await historyPages(services, server: server)
                try await unreadCounts(services)
            } catch {
                await pool.close()
                throw error
            }
            await pool.close()
        }
    }

    // MARK: - 1. Send → delivered

    /// What the sockets saw, per message (the index of `sent`).
    final class Deliveries: Sendable {
        private let state: Mutex<(position: Int64, arrivals: [[ContinuousClock.Instant]], receipts: Set<String>)>
        private let delivered = Mutex<[ContinuousClock.Instant]>([])
        private let opened = Atomic<Int>(0)
        let sockets: Int

        init(sockets: Int) {
            self.sockets = sockets
            state = Mutex((0, [], []))
        }

        func open() { opened.add(1, ordering: .relaxed) }
        var openCount: Int { opened.load(ordering: .relaxed) }

        /// The message at `position` is about to be sent: its arrivals and receipts count from now.
        func sending(position: Int64) {
            state.withLock {
                $0.position = position
                $0.arrivals.append([])
                $0.receipts = []
            }
        }

        /// A socket received a `message`.
        func arrived() {
            state.withLock { state in
                guard !state.arrivals.isEmpty else { return }
                state.arrivals[state.arrivals.count - 1].append(.now)
            }
        }

        /// The sender's socket received a receipt of `user` up to `position`.
        func receipt(from user: String, delivered position: Int64) {
            let complete = state.withLock { state -> Bool in
                guard position >= state.position, state.position > 0 else { return false }
                state.receipts.insert(user)
                return state.receipts.count == sockets
            }
            if complete { delivered.withLock { $0.append(.now) } }
        }

        var deliveredCount: Int { delivered.withLock { $0.count } }
        var deliveredTimes: [ContinuousClock.Instant] { delivered.withLock { $0 } }
        var arrivalTimes: [[ContinuousClock.Instant]] { state.withLock { $0.arrivals } }
        func arrivals(of message: Int) -> Int { state.withLock { $0.arrivals.count > message ? $0.arrivals[message].count : 0 } }
    }

    /// How a client marks a message delivered.
    enum Receipts: String {
        /// `PUT /chats/{id}/delivered` (its service call): a transaction each.
        case request
        /// `{"type": "delivered", …}` on its socket: the server writes a batch at a time.
        case socket
    }

    private func sendToDelivered(_ services: OrbitServices, receipts: Receipts) async throws {
        let sender = try await services.users.create(email: "chat-sender-\(receipts)@example.com", displayName: "Sender").id
        let community = try await services.communities.create(name: "Chat", as: sender).id
        var people: [UserID] = []
        for index in 0..<(members - 1) {
            let user = try await services.users.create(email: "chat\(index)@example.com", displayName: "Chat \(index)").id
            _ = try await services.members.add(user, to: community, as: sender)
            people.append(user)
        }
        guard let conversation = try await services.chat.list(in: community, as: sender).items.first(where: { $0.kind == .community })
        else { throw ValidationError("the community has no conversation") }
        let deliveries = Deliveries(sockets: people.count)
        let clock = ContinuousClock()
        var sent: [ContinuousClock.Instant] = []

        try await BenchmarkLiveServer.run(services, clients: people.count + 1) { api, port in
            var tokens: [String] = []
            for person in people { tokens.append(try await api.tokens.issue(for: person)) }
            let senderToken = try await api.tokens.issue(for: sender)
            try await withThrowingTaskGroup(of: Void.self) { clients in
                // The sender's socket: counts receipts.
                clients.addTask {
                    try await BenchmarkLiveServer.listen(port: port, token: senderToken, opened: deliveries.open) { text in
                        guard text.contains(#""type":"receipts""#),
                            let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                            let receipts = object["receipts"] as? [[String: Any]]
                        else { return }
                        for receipt in receipts {
                            guard let user = receipt["user_id"] as? String, let position = receipt["delivered_position"] as? Int else { continue }
                            deliveries.receipt(from: user, delivered: Int64(position))
                        }
                    }
                }
                // Every other participant's socket: on a message, marks it delivered.
                for (index, token) in tokens.enumerated() {
                    let person = people[index]
                    clients.addTask {
                        try await BenchmarkLiveServer.converse(
                            port: port, token: token, opened: deliveries.open,
                            answer: { text -> String? in
                                guard text.contains(#""type":"message""#) else { return nil }
                                deliveries.arrived()
                                guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                                    let id = ((object["message"] as? [String: Any])?["id"] as? String).flatMap(MessageID.init)
                                else { throw ValidationError("a message without its id: \(text)") }
                                switch receipts {
                                case .request:
                                    _ = try await services.chat.mark(.delivered, upTo: id, in: conversation.id, as: person)
                                    return nil
                                case .socket:
                                    return #"{"type":"delivered","conversation_id":"\#(conversation.id)","message_id":"\#(id)"}"#
                                }
                            })
                    }
                }
                try await LiveBenchmark.wait("\(members) sockets to open", timeout: .seconds(120)) { deliveries.openCount == members }
                // Warm-up: one message through the whole loop, so every socket is registered.
                for index in 0...messages {
                    deliveries.sending(position: Int64(index + 1))
                    let start = clock.now
                    let message = try await services.chat.send(to: conversation.id, text: "Message \(index)", as: sender).message
                    guard message.position == Int64(index + 1) else { throw ValidationError("message \(index) is at \(message.position)") }
                    if index > 0 { sent.append(start) }
                    try await LiveBenchmark.wait("message \(index) delivered to all", timeout: .seconds(60)) {
                        deliveries.deliveredCount == index + 1 && deliveries.arrivals(of: index) == people.count
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                clients.cancelAll()
            }
        }

        // Measured from the send's start: the send itself is in the numbers.
        let arrivals = deliveries.arrivalTimes.dropFirst()
        let delivered = deliveries.deliveredTimes.dropFirst()
        var each: [Double] = []
        var all: [Double] = []
        for (start, (times, done)) in zip(sent, zip(arrivals, delivered)) {
            each += times.map { ($0 - start).seconds * 1000 }
            all.append((done - start).seconds * 1000)
        }
        print(
            "| Chat, community conversation of \(members), \(members - 1) sockets, \(messages) messages, receipts by \(receipts) | p50 | p99 | max |")
        print("|---|---|---|---|")
        print(
            "| send → `message` on each socket (ms) | \(Self.percentile(each, 0.5)) | \(Self.percentile(each, 0.99)) | \(Self.percentile(each, 1)) |")
        print(
            "| send → delivered to all (every receipt on the sender's socket) (ms) | \(Self.percentile(all, 0.5)) | \(Self.percentile(all, 0.99)) | \(Self.percentile(all, 1)) |"
        )
    }

    // MARK: - 2. History pages

    private func historyPages(_ services: OrbitServices, server: BenchmarkServer) async throws {
        let alice = try await services.users.create(email: "history-a@example.com", displayName: "Alice").id
        let bob = try await services.users.create(email: "history-b@example.com", displayName: "Bob").id
        let community = try await services.communities.create(name: "History", as: alice).id
        _ = try await services.members.add(bob, to: community, as: alice)
        let (conversation, _) = try await services.chat.start(in: community, kind: .direct, with: [bob], as: alice)
        let clock = ContinuousClock()
        let loading = clock.now
        // Bulk load as the superuser, numbered as the trigger would number them (it is skipped:
        // session_replication_role = replica), then the conversation's counter.
        let connection = try await PostgresConnection.connect(server.configuration, logger: Logger(label: "orbit-bench"))
        do {
            try await connection.query("SET session_replication_role = replica")
            try await connection.query(
                """
                INSERT INTO messages (conversation_id, community_id, sender_id, position, text, created_at)
                SELECT \(conversation.id), \(community), CASE WHEN g % 2 = 0 THEN \(alice) ELSE \(bob) END, g,
                    'Message number ' || g, now() - (\(history) - g) * interval '1 second'
                FROM generate_series(1, \(history)) g
                """)
            try await connection.query("UPDATE conversations SET last_position = \(Int64(history)) WHERE id = \(conversation.id)")
            try await connection.query("RESET session_replication_role")
            try await connection.query("VACUUM ANALYZE messages")
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        print("\n\(history) messages loaded in \(String(format: "%.1f", (clock.now - loading).seconds)) s")

        // The cursor of page 500: 499 pages in.
        var cursor: String?
        for _ in 1..<500 {
            cursor = try await services.chat.history(of: conversation.id, limit: 50, cursor: cursor, as: alice).nextCursor
        }
        guard let page500 = cursor else { throw ValidationError("no page 500") }
        var first: [Double] = []
        var deep: [Double] = []
        for _ in 0..<reads {
            var start = clock.now
            let one = try await services.chat.history(of: conversation.id, limit: 50, as: alice)
            first.append((clock.now - start).seconds * 1000)
            start = clock.now
            let five = try await services.chat.history(of: conversation.id, limit: 50, cursor: page500, as: alice)
            deep.append((clock.now - start).seconds * 1000)
            guard one.items.count == 50, five.items.count == 50, five.items.first?.position == Int64(history - 499 * 50) else {
                throw ValidationError("unexpected pages")
            }
        }
        let ratio = Self.mean(deep) / Self.mean(first)
        print("| History of \(history) messages, 50 a page, \(reads) reads each | mean (ms) | p50 | p99 |")
        print("|---|---|---|---|")
        print("| page 1 | \(Self.format(Self.mean(first))) | \(Self.percentile(first, 0.5)) | \(Self.percentile(first, 0.99)) |")
        print("| page 500 (from its cursor) | \(Self.format(Self.mean(deep))) | \(Self.percentile(deep, 0.5)) | \(Self.percentile(deep, 0.99)) |")
        print("| page 500 / page 1 | \(String(format: "%.2f×", ratio)) | | |")
    }

    // MARK: - 3. Unread counts

    private func unreadCounts(_ services: OrbitServices) async throws {
        let reader = try await services.users.create(email: "unread@example.com", displayName: "Reader").id
        let friend = try await services.users.create(email: "unread-friend@example.com", displayName: "Friend").id
        let community = try await services.communities.create(name: "Unread", as: friend).id
        _ = try await services.members.add(reader, to: community, as: friend)
        // 49 groups and the community's conversation: 50, each with 40 messages of which the
        // reader has read 20.
        var conversations = [try await services.chat.list(in: community, as: reader).items[0].id]
        for index in 0..<49 {
            conversations.append(
                try await services.chat.start(in: community, kind: .group, with: [reader], title: "Group \(index)", as: friend).conversation.id)
        }
        for conversation in conversations {
            var twentieth: MessageID?
            for index in 1...40 {
                let message = try await services.chat.send(to: conversation, text: "Hello \(index)", as: friend).message
                if index == 20 { twentieth = message.id }
            }
            if let twentieth { _ = try await services.chat.mark(.read, upTo: twentieth, in: conversation, as: reader) }
        }
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<reads {
            let start = clock.now
            let page = try await services.chat.list(limit: 50, as: reader)
            times.append((clock.now - start).seconds * 1000)
            guard page.items.count == 50, page.items.allSatisfy({ $0.unreadCount == 20 }) else { throw ValidationError("unexpected counts") }
        }
        print("\n| Unread counts, 50 conversations × 20 unread (one statement), \(reads) reads | mean (ms) | p50 | p99 |")
        print("|---|---|---|---|")
        print("| GET /chats (service) | \(Self.format(Self.mean(times))) | \(Self.percentile(times, 0.5)) | \(Self.percentile(times, 0.99)) |")
    }

    static func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }
    static func format(_ value: Double) -> String { String(format: "%.2f", value) }
    static func percentile(_ values: [Double], _ p: Double) -> String {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return "—" }
        return String(format: "%.1f", sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }
}
