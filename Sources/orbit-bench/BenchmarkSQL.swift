/// The benchmark's tables and pgbench scripts: the same SQL the peer benchmarks (raw libpq, postgres-nio) run,
/// so that OrbitCove, raw libpq, postgres-nio and pgbench measure the same statements.
enum BenchmarkSQL {
    static let schema = """
        DROP TABLE IF EXISTS items, txn, split;
        CREATE TABLE items (id bigint PRIMARY KEY, community_id uuid, name text, amount int, created_at timestamptz);
        INSERT INTO items
        SELECT g, gen_random_uuid(), 'item-' || g, (g * 7919) % 100000, now() - (g || ' seconds')::interval
        FROM generate_series(1, 100000) g;
        CREATE TABLE txn (id uuid PRIMARY KEY, community_id uuid, total int);
        CREATE TABLE split (id uuid PRIMARY KEY, txn_id uuid, user_id uuid, amount int);
        """

    /// Run on its own: VACUUM cannot run inside the implicit transaction of a multi-statement string.
    static let vacuum = "VACUUM ANALYZE items"

    static let pointSelect = "SELECT id, community_id, name, amount, created_at FROM items WHERE id = $1"
    static let insertTransaction = "INSERT INTO txn (id, community_id, total) VALUES ($1, $2, $3)"
    static let insertSplit = "INSERT INTO split (id, txn_id, user_id, amount) VALUES ($1, $2, $3, $4)"

    /// pgbench's W1: one point select.
    static let pgbenchPointSelect = """
        \\set id random(1, 100000)
        SELECT id, community_id, name, amount, created_at FROM items WHERE id = :id;

        """

    /// pgbench's W3: one parent row and ten child rows in a transaction.
    static var pgbenchWriteTransaction: String {
        var script = """
            BEGIN;
            \\set total random(0, 99990)
            INSERT INTO txn(id, community_id, total) VALUES (gen_random_uuid(), gen_random_uuid(), :total) RETURNING id AS txn_id \\gset
            \\set amount random(0, 9999)

            """
        for _ in 0..<10 {
            script += "INSERT INTO split(id, txn_id, user_id, amount) VALUES (gen_random_uuid(), :txn_id, gen_random_uuid(), :amount);\n"
        }
        return script + "COMMIT;\n"
    }
}
