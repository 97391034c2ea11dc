import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Synchronization
import Testing

/// The short, in-CI version of `orbit-bench faults`: expenses written while every
/// backend of the database is terminated, twice.
@Suite("Writes survive terminated backends")
struct FaultTests {
    final class Ledger: Sendable {
        private let state = Mutex<(acknowledged: [String], failed: Int, stop: Bool)>(([], 0, false))
        func acknowledge(_ marker: String) { state.withLock { $0.acknowledged.append(marker) } }
        func fail() { state.withLock { $0.failed += 1 } }
        func stop() { state.withLock { $0.stop = true } }
        var stopped: Bool { state.withLock { $0.stop } }
        var acknowledged: [String] { state.withLock { $0.acknowledged } }
    }

    @Test("every acknowledged expense survives terminated backends exactly once, and nothing is half-written")
    func everyAcknowledgedExpenseSurvivesTerminatedBackendsExactly() async throws {
        try await withServices { services, database in
            let admin = try await services.users.create(email: "admin@example.com", displayName: "Admin").id
            let member = try await services.users.create(email: "member@example.com", displayName: "Member").id
            let community = try await services.communities.create(name: "Club", as: admin).id
            _ = try await services.members.add(member, to: community, as: admin)
            let ledger = Ledger()
            let writers = Task {
                await withTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            var sequence = 0
                            while !ledger.stopped {
                                sequence += 1
                                let marker = "op-\(writer)-\(sequence)"
                                do {
                                    _ = try await services.expenses.addExpense(
                                        in: community, description: marker, total: try dollars("10.01"), paidBy: admin,
                                        split: .equal([admin, member]), as: admin)
                                    ledger.acknowledge(marker)
                                } catch {
                                    ledger.fail()
                                }
                            }
                        }
                    }
                }
            }
            /// Waits (up to 30 s, however loaded the machine) until `count` more writes than now
            /// have been acknowledged; false if they never come.
            func acknowledgements(_ count: Int) async -> Bool {
                let target = ledger.acknowledged.count + count
                let deadline = ContinuousClock.now + .seconds(30)
                while ledger.acknowledged.count < target {
                    guard ContinuousClock.now < deadline else { return false }
                    await Task.yield()
                }
                return true
            }
            var terminated = 0
            for _ in 0..<2 {
                // Terminate in the middle of a running load, and again once it is running again.
                #expect(await acknowledgements(20), "the writers made no progress")
                terminated += try await database.withConnection { connection in
                    Int(
                        try await connection.query(
                            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                        ).single().decode(0, as: Int64.self))
                }
            }
            // Recovery: writes succeed again after the last termination.
            let beforeLast = ledger.acknowledged.count
            let recovered = await acknowledgements(20)
            ledger.stop()
            await writers.value
            let acknowledged = ledger.acknowledged
            #expect(terminated > 0)
            #expect(recovered && acknowledged.count > beforeLast, "no write succeeded after the last termination")

            let (counts, unbalanced, balanceSum) = try await database.withConnection { connection in
                let counts = Dictionary(
                    uniqueKeysWithValues: try await connection.query("SELECT description, count(*) AS n FROM transactions GROUP BY description").map {
                        (try $0.decode("description", as: String.self), Int(try $0.decode("n", as: Int64.self)))
                    })
                let unbalanced = try await connection.query(
                    "SELECT count(*) FROM transactions t WHERE t.total_amount <> (SELECT coalesce(sum(amount), 0) FROM splits WHERE transaction_id = t.id)"
                ).single().decode(0, as: Int64.self)
                let sum = try await connection.query("SELECT coalesce(sum(balance), 0)::bigint FROM balances").single().decode(0, as: Int64.self)
                return (counts, unbalanced, sum)
            }
            #expect(acknowledged.allSatisfy { counts[$0] == 1 }, "an acknowledged write is missing or duplicated")
            #expect(counts.values.allSatisfy { $0 == 1 })
            #expect(unbalanced == 0)
            #expect(balanceSum == 0)
        }
    }
}
