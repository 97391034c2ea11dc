/// The prepared statements of one connection: SQL text and parameter types → server-side name.
///
/// Least recently used statements are evicted once `capacity` is reached. Confined to the
/// connection's thread.
struct StatementCache {
    /// A statement is its SQL text and its parameter types. Holds the query's bindings (a
    /// reference, no copy) but compares only their types.
    struct Key: Hashable {
        var sql: String
        var bindings: PostgresBindings

        init(_ query: PostgresQuery) {
            sql = query.sql
            bindings = query.binds
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.sql == rhs.sql && lhs.bindings.hasSameTypes(as: rhs.bindings)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(sql)
            bindings.hashTypes(into: &hasher)
        }
    }

    private struct Entry {
        var name: String
        var lastUse: UInt64
    }

    private(set) var capacity: Int
    private var entries: [Key: Entry] = [:]
    private var clock: UInt64 = 0
    private var nextNumber = 0
    /// Names are unique to this client connection, not only within it: behind a pooler a
    /// server connection may hold other clients' statements, and a name of ours must never
    /// run one of theirs.
    private let prefix = "orbit_" + String(UInt32.random(in: .min ... .max), radix: 16) + "_s"

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var isEnabled: Bool { capacity > 0 }

    /// Stops caching: every statement is sent unnamed from now on (the server connection
    /// behind this one changes between transactions, as behind a transaction-mode pooler).
    mutating func disable() {
        capacity = 0
        entries.removeAll()
    }
    var count: Int { entries.count }

    /// The statement's name if it is prepared, marking it as just used.
    mutating func name(for key: Key) -> String? {
        clock += 1
        guard let index = entries.index(forKey: key) else { return nil }
        entries.values[index].lastUse = clock
        return entries.values[index].name
    }

    /// A name for a statement about to be prepared: `orbit_<random hex>_s<n>`, no quoting needed.
    mutating func makeName() -> String {
        nextNumber += 1
        return prefix + String(nextNumber)
    }

    /// Records a prepared statement; returns the name of the statement evicted to make room.
    mutating func insert(_ key: Key, name: String) -> String? {
        clock += 1
        var evicted: String?
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            entries[oldest.key] = nil
            evicted = oldest.value.name
        }
        entries[key] = Entry(name: name, lastUse: clock)
        return evicted
    }

    mutating func remove(_ key: Key) {
        entries[key] = nil
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}
