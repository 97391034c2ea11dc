import Foundation
import OrbitCore
import OrbitPostgres
import OrbitTestSupport
import Testing

@Suite("The permission matrix: each action for admin, member, non-member and former member")
struct PermissionTests {
    /// Actions on the cast's community, run as `actor`.
    static let actions: [String: @Sendable (OrbitServices, Cast, UserID) async throws -> Void] = [
        "view the community": { s, c, a in _ = try await s.communities.get(c.community, as: a) },
        "list members": { s, c, a in _ = (try await s.members.list(of: c.community, as: a)).items },
        "edit settings": { s, c, a in _ = try await s.communities.update(c.community, settings: .init(allowMemberPosts: false), as: a) },
        "add a member": { s, c, a in
            let newcomer = try await s.users.create(email: "new\(UUID().uuidString.prefix(6))@example.com", displayName: "New").id
            _ = try await s.members.add(newcomer, to: c.community, as: a)
        },
        "remove a member": { s, c, a in try await s.members.remove(c.member, from: c.community, as: a) },
        "change a role": { s, c, a in _ = try await s.members.setRole(.admin, of: c.member, in: c.community, as: a) },
        "create an invite": { s, c, a in _ = try await s.invites.create(to: c.community, as: a) },
        "list invites": { s, c, a in _ = (try await s.invites.list(of: c.community, as: a)).items },
        "read the audit log": { s, c, a in _ = (try await s.communities.auditLog(c.community, as: a)).items },
        "delete the community": { s, c, a in try await s.communities.delete(c.community, as: a) },
        "manage the subscription": { s, c, a in _ = try await s.communities.setSubscription(c.community, status: .active, expiresAt: nil, as: a) },
    ]

    /// nil = allowed; otherwise the expected error code.
    static func expected(_ action: String, _ role: String) -> ServiceError.Code? {
        switch role {
        // The subscription records what billing decided: only operators set it (the spec's
        // "Only creator initially" is the app's billing flow, not a write a member may make).
        // `BillingTests` covers the operator.
        case "admin" where action == "manage the subscription": return .forbidden
        case "admin": return nil
        case "member": return ["view the community", "list members"].contains(action) ? nil : .forbidden
        default: return .notFound  // outsiders and former members cannot see the community at all
        }
    }

    static let cases: [(String, String)] = actions.keys.sorted().flatMap { action in
        ["admin", "member", "outsider", "former"].map { (action, $0) }
    }

    @Test("allowed or refused as the matrix says", arguments: cases.map { "\($0.0) / \($0.1)" })
    func matrix(label: String) async throws {
        let parts = label.components(separatedBy: " / ")
        let (action, role) = (parts[0], parts[1])
        try await withServices { services, database in
            let cast = try await Cast.make(services)
            // (rows of changes, rows of refusals)
            let auditRows = { () async throws -> [Int64] in
                try await database.withConnection {
                    let row = try await $0.query(
                        "SELECT count(*) FILTER (WHERE action NOT LIKE '%.refused') AS changes, count(*) FILTER (WHERE action LIKE '%.refused') AS refusals FROM audit_log"
                    ).single()
                    return [try row.decode("changes"), try row.decode("refusals")]
                }
            }
            let before = try await auditRows()
            let error = await serviceError { try await Self.actions[action]!(services, cast, cast.user(role)) }
            #expect(error?.code == Self.expected(action, role), "\(action) as \(role): \(String(describing: error))")
            if error?.code == .forbidden {
                #expect(error?.rule?.isEmpty == false)
            }
            // A refused change leaves no audit row of the change behind; a member's refused
            // attempt at an action the spec audit-logs leaves one row saying so.
            if error != nil {
                let after = try await auditRows()
                #expect(after[0] == before[0])
                let logged = error?.code == .forbidden && Self.auditedActions.contains(action)
                #expect(after[1] == before[1] + (logged ? 1 : 0), "\(action) as \(role)")
            }
        }
    }

    /// The actions whose refusals are audit-logged (spec, "Logged Actions": members added and
    /// removed, role changes, settings, subscription changes; plus deleting the community).
    static let auditedActions: Set<String> = [
        "add a member", "remove a member", "change a role", "edit settings", "delete the community", "manage the subscription",
    ]
}
