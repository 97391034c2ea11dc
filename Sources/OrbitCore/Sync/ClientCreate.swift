package import Foundation
import OrbitPostgres

/// A create that carries the id its client generated for the entity (issue 38, item 3;
/// docs/sync.md, "Offline writes"): an offline queue replayed after any time finds the entity it
/// made, never a duplicate.
///
/// Bound as `RequestRunner.clientCreate` around the create: the first row the create's
/// transaction inserts into `table` takes `id`, and the request's fingerprint is stored with it,
/// for as long as its author exists (sql/810_client_ids.sql).
package struct ClientCreate: Sendable, Equatable {
    package var id: UUID
    /// The table the entity goes into.
    package var table: ClientCreatable
    /// SHA-256 of the request (its method, path and canonical body): the same request again is
    /// a replay, other content with the same id a conflict.
    package var fingerprint: [UInt8]

    package init(id: UUID, table: ClientCreatable, fingerprint: [UInt8]) {
        self.id = id
        self.table = table
        self.fingerprint = fingerprint
    }

    func add(to settings: inout [String: String]) {
        settings["app.client_create_id"] = id.uuidString.lowercased()
        settings["app.client_create_table"] = table.rawValue
        settings["app.client_create_fingerprint"] = fingerprint.map { String(format: "%02x", $0) }.joined()
    }
}

/// The tables whose rows a client may create with its own id (each has the trigger
/// `trigger_a_client_id`).
package enum ClientCreatable: String, Sendable, CaseIterable {
    case communities, posts, comments, events, transactions, dues, chores, rewards, conversations, invites, media
    case recurringCharges = "recurring_charges"
    case duesPayments = "dues_payments"
    case choreCompletions = "chore_completions"
    case rewardRedemptions = "reward_redemptions"
    case familyMembers = "family_members"
}

/// What an id was used for before.
package enum ClientCreateMatch: Sendable, Equatable {
    /// Nothing was created with it.
    case unused
    /// The same author created an entity with it by the same request: a replay.
    case replay
    /// Someone else, or another request, did.
    case taken
}

/// Looks up what a client-generated id was used for.
package struct ClientCreateService: Sendable {
    let runner: RequestRunner

    init(_ runner: RequestRunner) {
        self.runner = runner
    }

    /// Whether `id` was used before, and whether by this very request of `principal`.
    package func match(_ id: UUID, fingerprint: [UInt8], as principal: Principal) async throws -> ClientCreateMatch {
        let found = try await runner.run(as: principal) { connection in
            try await connection.query("SELECT orbit.client_create_match(\(id), \(Data(fingerprint)))").single().decode(String?.self)
        }
        switch found {
        case nil: return .unused
        case "same": return .replay
        default: return .taken
        }
    }
}
