import Foundation
import OrbitPostgres
import OrbitTestSupport
import Testing

/// Two communities with one row of everything, and users in every relation to them.
///
///   A: admin `a`, member `a2`, member `ab`, and `former`, who left.   B: admin `b`, member `ab`.
///   `none` belongs nowhere.
struct World {
    enum Person: String, CaseIterable, Sendable {
        case a, a2, b, ab, none, former
    }

    /// Who may see a row.
    enum Audience: Sendable {
        case membersOf(UUID)
        case adminsOf(UUID)
        case only(Person)
        /// The person and everyone who shares an active community with them.
        case contactsOf(Person)
        /// Exactly these people (the participants of a conversation).
        case people(Set<Person>)
        /// The community's members, and the signed-in children of these people (a child's own
        /// chore rows; a community's rewards name every parent).
        case membersAndChildren(UUID, childrenOf: Set<Person>)
    }

    /// A signed-in child (`app.current_family_member_id`): the `Kid` of `parent`, on a device
    /// paired for `community` (`app.current_child_device_id`).
    struct Child: Hashable, Sendable {
        var parent: Person
        var community: String
    }

    /// The devices paired for kids: one for each community their parent is or was in (`former`
    /// left A), and one of `none`'s kid "for A", although `none` was never a member.
    static let pairedKids: [Child] = [
        Child(parent: .a, community: "A"), Child(parent: .a2, community: "A"), Child(parent: .ab, community: "A"),
        Child(parent: .ab, community: "B"), Child(parent: .b, community: "B"), Child(parent: .former, community: "A"),
        Child(parent: .none, community: "A"),
    ]

    var people: [Person: UUID] = [:]
    /// Each person's family member, `Kid`.
    var kids: [Person: UUID] = [:]
    /// The device of each paired kid (`pairedKids`).
    var devices: [Child: UUID] = [:]
    var communityA = UUID()
    var communityB = UUID()
    /// The poll post of each community.
    var posts: [UUID: UUID] = [:]
    /// Chat in A: a group of a, a2 and ab (who left it), and a direct conversation of a2 and ab.
    var group = UUID()
    var direct = UUID()
    /// table → [(row id, who may see it)]
    var rows: [String: [(id: UUID, audience: Audience)]] = [:]

    static let tables = [
        "users", "family_members", "communities", "members", "invites", "events", "rsvps", "posts", "reactions",
        "comments", "poll_votes", "transactions", "splits", "transaction_payers", "money_activity", "recurring_charges", "exchange_rates",
        "expense_categories", "nudges", "dues",
        "dues_payments", "dues_attendees",
        "media",
        "notifications", "audit_log", "refresh_tokens", "calendar_feeds", "devices", "conversations", "conversation_participants", "messages",
        "chores", "chore_assignees", "chore_completions", "rewards", "reward_redemptions", "points_ledger", "points_accounts",
        "community_keys", "user_public_keys", "payment_handles", "family_guardians",
    ]

    /// A row's id for the matrix: its `id`, or, for a table keyed by two ids, one made of them.
    static func idColumn(_ table: String) -> String {
        table == "family_guardians" ? "md5(family_member_id::text || user_id::text)::uuid" : "id"
    }

    /// Tables only the server reads and writes, as orbit_admin (billing: what the payment
    /// providers said): orbit_app has no right on them at all, so no user, admin or child reaches
    /// a row, whatever a policy might say.
    static let serverOnly = [
        "billing_events", "billing_subscriptions", "billing_app_account_tokens", "billing_refunds", "billing_payments", "billing_disputes",
    ]

    func id(_ person: Person) -> UUID { people[person]! }

    /// Active memberships: community → [(person, admin?)].
    var memberships: [UUID: [(Person, Bool)]] {
        [communityA: [(.a, true), (.a2, false), (.ab, false)], communityB: [(.b, true), (.ab, false)]]
    }

    func canSee(_ viewer: Person, _ audience: Audience) -> Bool {
        switch audience {
        case .membersOf(let community):
            return memberships[community]?.contains { $0.0 == viewer } ?? false
        case .adminsOf(let community):
            return memberships[community]?.contains { $0.0 == viewer && $0.1 } ?? false
        case .only(let person):
            return viewer == person
        case .people(let people):
            return people.contains(viewer)
        case .contactsOf(let person):
            return viewer == person
                || memberships.values.contains { members in
                    members.contains { $0.0 == viewer } && members.contains { $0.0 == person }
                }
        case .membersAndChildren(let community, _):
            return canSee(viewer, .membersOf(community))
        }
    }

    func community(_ name: String) -> UUID { name == "A" ? communityA : communityB }

    /// What a signed-in child sees: rows of `membersAndChildren` audiences that name their
    /// parent, of the community their device was paired for, while the parent is an active
    /// member of it; nothing else.
    func canSee(_ child: Child, _ audience: Audience) -> Bool {
        guard case .membersAndChildren(let community, let parents) = audience else { return false }
        return community == self.community(child.community) && parents.contains(child.parent) && canSee(child.parent, .membersOf(community))
    }

    func expectedIDs(_ table: String, for child: Child) -> Set<UUID> {
        Set((rows[table] ?? []).filter { canSee(child, $0.audience) }.map(\.id))
    }

    func expectedIDs(_ table: String, for viewer: Person?) -> Set<UUID> {
        guard let viewer else { return [] }
        return Set((rows[table] ?? []).filter { canSee(viewer, $0.audience) }.map(\.id))
    }

    static func build(_ connection: PostgresConnection) async throws -> World {
        var world = World()
        let seed = Seed(connection: connection)
        func add(_ table: String, _ id: UUID, _ audience: Audience) { world.rows[table, default: []].append((id, audience)) }

        for person in Person.allCases {
            let id = try await seed.user(person.rawValue)
            world.people[person] = id
            add("users", id, .contactsOf(person))
            let family = try await seed.id("INSERT INTO family_members (user_id, name) VALUES (\(id), 'Kid') RETURNING id")
            add("family_members", family, .contactsOf(person))
            world.kids[person] = family
            let notification = try await seed.id(
                "INSERT INTO notifications (user_id, type, title, body) VALUES (\(id), 'new_post', 'Hi', 'There') RETURNING id"
            )
            add("notifications", notification, .only(person))
            let token = try await seed.id(
                "INSERT INTO refresh_tokens (user_id, token_hash, expires_at) VALUES (\(id), \(person.rawValue + "-token"), now() + interval '1 day') RETURNING id"
            )
            add("refresh_tokens", token, .only(person))
            let feedToken = String(repeating: person.rawValue, count: 43).prefix(43)
            let feed = try await seed.id(
                "INSERT INTO calendar_feeds (user_id, token_hash) VALUES (\(id), sha256(convert_to(\(String(feedToken)), 'UTF8'))) RETURNING id")
            add("calendar_feeds", feed, .only(person))
            let hex = String(format: "%02x", Person.allCases.firstIndex(of: person) ?? 0)
            let device = try await seed.id(
                "INSERT INTO devices (user_id, token, environment, bundle_id) VALUES (\(id), \(String(repeating: hex, count: 32)), 'production', 'app.orbitcove.ios') RETURNING id"
            )
            add("devices", device, .only(person))
            // A payment handle (sql/159_payments.sql): read by the people who share a community with its owner.
            let handle = try await seed.id(
                "INSERT INTO payment_handles (user_id, kind, handle) VALUES (\(id), 'revolut', \(person.rawValue + "-pays")) RETURNING id")
            add("payment_handles", handle, .contactsOf(person))
        }
        world.communityA = try await seed.community("A", creator: world.id(.a))
        world.communityB = try await seed.community("B", creator: world.id(.b))
        for (community, others) in [(world.communityA, [Person.a2, .ab, .former]), (world.communityB, [.ab])] {
            for person in others { try await seed.member(community, world.id(person)) }
        }
        try await connection.query(
            "UPDATE members SET left_at = now() WHERE community_id = \(world.communityA) AND user_id = \(world.id(.former))"
        )
        for child in pairedKids {
            world.devices[child] = try await seed.id(
                """
                INSERT INTO child_devices (family_member_id, community_id, pairing_expires_at, token_hash, paired_at)
                VALUES (\(world.kids[child.parent]), \(world.community(child.community)), now(), sha256(convert_to(gen_random_uuid()::text, 'UTF8')), now())
                RETURNING id
                """)
        }

        // Guardians (sql/205_family.sql): each kid's first is their parent (a trigger writes it);
        // a2 is the second guardian of a's kid, and ab is invited, not accepted yet, to be b's.
        // A guardian sees every guardian of their kids; an invitee their own invitation.
        try await connection.query(
            """
            INSERT INTO family_guardians (family_member_id, user_id, invited_by, accepted_at)
            VALUES (\(world.kids[.a]), \(world.id(.a2)), \(world.id(.a)), now()), (\(world.kids[.b]), \(world.id(.ab)), \(world.id(.b)), NULL)
            """)
        for row in try await connection.query(
            "SELECT \(unescaped: idColumn("family_guardians")) AS id, family_member_id, user_id FROM family_guardians")
        {
            let (id, kid, user) = try row.decode((UUID, UUID, UUID).self)
            let audience: Audience =
                if kid == world.kids[.a] { .people([.a, .a2]) } else if kid == world.kids[.b] {
                    user == world.id(.ab) ? .people([.b, .ab]) : .only(.b)
                } else { .only(try #require(world.people.first { $0.value == user }?.key)) }
            add("family_guardians", id, audience)
        }

        for (community, owner, member) in [(world.communityA, Person.a, Person.a2), (world.communityB, .b, .ab)] {
            let everyone = Audience.membersOf(community)
            add("communities", community, everyone)
            // A guest (a person without an account, migrations/0055) is community data: their user
            // row is seen by the community's members only, their member row as every member's,
            // their link (an invite) by admins, as every invite.
            let guest = try await seed.id(
                """
                INSERT INTO users (id, apple_id, email, display_name, is_guest)
                SELECT g, 'guest.' || g::text, '', 'Guest', true FROM gen_random_uuid() AS g RETURNING id
                """)
            add("users", guest, everyone)
            let guestMember = try await seed.id(
                "INSERT INTO members (community_id, user_id, invited_by) VALUES (\(community), \(guest), \(world.id(member))) RETURNING id")
            add(
                "invites",
                try await seed.id(
                    """
                    INSERT INTO invites (community_id, code, created_by, uses_remaining, guest_member_id)
                    VALUES (\(community), \(owner == .a ? "GAAAAA" : "GBBBBB"), \(world.id(member)), 1, \(guestMember)) RETURNING id
                    """
                ),
                .adminsOf(community)
            )
            for row in try await connection.query("SELECT id FROM members WHERE community_id = \(community)") {
                add("members", try row.decode("id", as: UUID.self), everyone)
            }
            let ownerID = world.id(owner)
            let memberID = world.id(member)
            add(
                "invites",
                try await seed.id(
                    "INSERT INTO invites (community_id, code, created_by) VALUES (\(community), \(owner == .a ? "AAAAAA" : "BBBBBB"), \(ownerID)) RETURNING id"
                ),
                .adminsOf(community)
            )
            let event = try await seed.event(community, by: ownerID)
            add("events", event, everyone)
            add(
                "rsvps", try await seed.id("INSERT INTO rsvps (event_id, user_id, status) VALUES (\(event), \(memberID), 'yes') RETURNING id"),
                everyone)
            let poll = try await seed.poll(community, by: ownerID)
            add("posts", poll, everyone)
            world.posts[community] = poll
            add(
                "reactions", try await seed.id("INSERT INTO reactions (post_id, user_id, type) VALUES (\(poll), \(memberID), 'like') RETURNING id"),
                everyone)
            add("comments", try await seed.comment(poll, by: memberID), everyone)
            add(
                "poll_votes",
                try await seed.id("INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(poll), \(memberID), 1) RETURNING id"),
                everyone
            )
            let transaction = try await seed.expense(community, paidBy: ownerID, total: 1000, splits: [(ownerID, 500), (memberID, 500)])
            add("transactions", transaction, everyone)
            for row in try await connection.query("SELECT id FROM splits WHERE transaction_id = \(transaction)") {
                add("splits", try row.decode("id", as: UUID.self), everyone)
            }
            // Paid by two: the owner 600, the member 400 (one statement: the sum is checked at its commit).
            for row in try await connection.query(
                """
                INSERT INTO transaction_payers (transaction_id, user_id, amount)
                VALUES (\(transaction), \(ownerID), 600), (\(transaction), \(memberID), 400) RETURNING id
                """
            ) {
                add("transaction_payers", try row.decode("id", as: UUID.self), everyone)
            }
            add(
                "money_activity",
                try await seed.id(
                    """
                    INSERT INTO money_activity (community_id, actor_id, action, entity, entity_id, after)
                    VALUES (\(community), \(ownerID), 'created', 'expense', \(transaction), orbit.expense_state(\(transaction))) RETURNING id
                    """
                ), everyone)
            add(
                "recurring_charges",
                try await seed.id(
                    """
                    INSERT INTO recurring_charges (community_id, kind, description, amount, currency, recurrence_rule, starts_on, next_on, created_by)
                    VALUES (\(community), 'dues', 'Monthly', 2500, 'USD', 'FREQ=MONTHLY', current_date, current_date, \(ownerID)) RETURNING id
                    """
                ), everyone)
            // A community's own category (sql/152_categories.sql), added by its owner; the expense
            // above takes it.
            let category = try await seed.id(
                """
                INSERT INTO expense_categories (community_id, name, emoji, created_by)
                VALUES (\(community), 'Camp', '🏕️', \(ownerID)) RETURNING id
                """)
            add("expense_categories", category, everyone)
            // A nudge (sql/158_nudges.sql): the owner asks the member; only the two of them see it.
            add(
                "nudges",
                try await seed.id(
                    "INSERT INTO nudges (community_id, from_user_id, to_user_id) VALUES (\(community), \(ownerID), \(memberID)) RETURNING id"),
                .people([owner, member]))
            try await connection.query("UPDATE transactions SET category = 'other', category_id = \(category) WHERE id = \(transaction)")
            add(
                "exchange_rates",
                try await seed.id(
                    """
                    INSERT INTO exchange_rates (community_id, base, quote, rate, rate_on, source, entered_by)
                    VALUES (\(community), 'GBP', 'USD', 1.25, current_date, 'admin', \(ownerID)) RETURNING id
                    """
                ), everyone)
            let dues = try await seed.id(
                "INSERT INTO dues (community_id, name, amount, due_date, created_by) VALUES (\(community), 'Season', 5000, current_date, \(ownerID)) RETURNING id"
            )
            add("dues", dues, everyone)
            add(
                "dues_payments",
                try await seed.id(
                    "INSERT INTO dues_payments (dues_id, user_id, amount_paid, recorded_by) VALUES (\(dues), \(memberID), 5000, \(ownerID)) RETURNING id"
                ),
                everyone
            )
            add(
                "dues_attendees",
                try await seed.id(
                    "INSERT INTO dues_attendees (dues_id, community_id, user_id, heads) VALUES (\(dues), \(community), \(memberID), 2) RETURNING id"
                ),
                everyone
            )
            // Dues and their payments write money's history by trigger (sql/160_dues.sql): the community's too.
            for row in try await connection.query("SELECT id FROM money_activity WHERE entity_id = \(dues)") {
                add("money_activity", try row.decode("id", as: UUID.self), everyone)
            }
            add(
                "media",
                try await seed.id(
                    """
                    INSERT INTO media (id, community_id, uploaded_by, type, filename, mime_type, size_bytes, storage_path)
                    SELECT id, \(community), \(memberID), 'image', 'a.jpg', 'image/jpeg', 10, \(community)::text || '/' || id || '/a.jpg'
                    FROM (SELECT gen_random_uuid() AS id) AS new RETURNING id
                    """
                ),
                everyone
            )
            add(
                "notifications",
                try await seed.id(
                    "INSERT INTO notifications (user_id, community_id, type, title, body) VALUES (\(memberID), \(community), 'new_post', 'New', 'Post') RETURNING id"
                ),
                .only(member)
            )
            add(
                "audit_log",
                try await seed.id(
                    "INSERT INTO audit_log (community_id, user_id, action, target_type, target_id) VALUES (\(community), \(ownerID), 'member.added', 'member', \(memberID)) RETURNING id"
                ),
                .adminsOf(community)
            )
        }

        // Chat. Each community's own conversation (made by trigger, its active members in it:
        // `former` left with the community), a message in each; in A a group of a, a2 and ab,
        // which ab left, and a direct conversation of a2 and ab, each with a message.
        for community in [world.communityA, world.communityB] {
            let conversation = try await seed.id("SELECT id FROM conversations WHERE community_id = \(community) AND kind = 'community'")
            add("conversations", conversation, .membersOf(community))
            for row in try await connection.query("SELECT id FROM conversation_participants WHERE conversation_id = \(conversation)") {
                add("conversation_participants", try row.decode("id", as: UUID.self), .membersOf(community))
            }
            let sender = community == world.communityA ? world.id(.a2) : world.id(.b)
            add(
                "messages",
                try await seed.id(
                    "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(conversation), \(community), \(sender), 'Hi all') RETURNING id"
                ),
                .membersOf(community))
        }
        let a = world.communityA
        let group = try await seed.id(
            "INSERT INTO conversations (community_id, kind, title, created_by) VALUES (\(a), 'group', 'Coaches', \(world.id(.a))) RETURNING id")
        let direct = try await seed.id(
            """
            INSERT INTO conversations (community_id, kind, created_by, direct_user_low, direct_user_high)
            VALUES (\(a), 'direct', \(world.id(.a2)), least(\(world.id(.a2)), \(world.id(.ab))), greatest(\(world.id(.a2)), \(world.id(.ab)))) RETURNING id
            """)
        add("conversations", group, .people([.a, .a2]))
        add("conversations", direct, .people([.a2, .ab]))
        for (conversation, people, audience) in [
            (group, [World.Person.a, .a2, .ab], Set([World.Person.a, .a2])), (direct, [.a2, .ab], [.a2, .ab]),
        ] {
            for person in people {
                add(
                    "conversation_participants",
                    try await seed.id(
                        "INSERT INTO conversation_participants (conversation_id, user_id, community_id) VALUES (\(conversation), \(world.id(person)), \(a)) RETURNING id"
                    ),
                    .people(audience))
            }
            add(
                "messages",
                try await seed.id(
                    "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(conversation), \(a), \(world.id(.a2)), 'Psst') RETURNING id"
                ),
                .people(audience))
        }
        try await connection.query(
            "UPDATE conversation_participants SET left_at = now() WHERE conversation_id = \(group) AND user_id = \(world.id(.ab))")
        world.group = group
        world.direct = direct
        for (table, id, audience) in try await choreRows(world, seed: seed) { add(table, id, audience) }
        // End-to-end encryption: each community's key wrapped for its members (former's too, from
        // before they left), seen by the community's members; each user's public key, seen by
        // their contacts.
        for (community, holders) in [(world.communityA, [Person.a, .a2, .ab, .former]), (world.communityB, [Person.b, .ab])] {
            for holder in holders {
                let key = try await seed.id(
                    "INSERT INTO community_keys (community_id, user_id, encrypted_key, key_version) VALUES (\(community), \(world.id(holder)), '\\x01', 1) RETURNING id"
                )
                add("community_keys", key, .membersOf(community))
            }
        }
        for person in Person.allCases {
            let key = try await seed.id("INSERT INTO user_public_keys (user_id, public_key) VALUES (\(world.id(person)), '\\x02') RETURNING id")
            add("user_public_keys", key, .contactsOf(person))
        }
        // A live socket of a (presence): servers only (orbit_app may not touch the table; below).
        try await connection.query(
            "INSERT INTO live_connections (id, user_id, server_id) VALUES (gen_random_uuid(), \(world.id(.a)), gen_random_uuid())")
        return world
    }
}

extension World {
    /// The ids of every table's rows the connection's role and settings see.
    static func visibleRows(on connection: PostgresConnection) async throws -> [String: Set<UUID>] {
        var seen: [String: Set<UUID>] = [:]
        for table in tables {
            seen[table] = Set(
                try await connection.query("SELECT \(unescaped: World.idColumn(table)) AS id FROM \(unescaped: table)").map {
                    try $0.decode("id", as: UUID.self)
                })
        }
        return seen
    }

    /// Chores in each community: one the admin assigned to a member and the member's kid,
    /// which the kid did (approved: credited), one for the admin alone; a reward the kid
    /// redeemed; an adjustment for the member. In A, also a chore for `former`'s kid, given
    /// while `former` was a member.
    fileprivate static func choreRows(_ world: World, seed: Seed) async throws -> [(String, UUID, Audience)] {
        var rows: [(String, UUID, Audience)] = []
        func add(_ table: String, _ id: UUID, _ audience: Audience) { rows.append((table, id, audience)) }
        let connection = seed.connection
        for (community, owner, member) in [(world.communityA, Person.a, Person.a2), (world.communityB, .b, .ab)] {
            let ownerID = world.id(owner)
            let kid = try #require(world.kids[member])
            let forKid = Audience.membersAndChildren(community, childrenOf: [member])
            let everyone = Audience.membersAndChildren(community, childrenOf: [])
            let chore = try await seed.id(
                "INSERT INTO chores (community_id, title, points, created_by) VALUES (\(community), 'Dishes', 10, \(ownerID)) RETURNING id")
            add("chores", chore, forKid)
            // A chore the member (not an admin) set for their own kid alone.
            let homework = try await seed.id(
                "INSERT INTO chores (community_id, title, points, created_by) VALUES (\(community), 'Homework', 5, \(world.id(member))) RETURNING id")
            add("chores", homework, forKid)
            add(
                "chore_assignees",
                try await seed.id("INSERT INTO chore_assignees (chore_id, family_member_id) VALUES (\(homework), \(kid)) RETURNING id"), forKid)
            // The kid's photo proof, uploaded on their device on behalf of their parent: the
            // members' and the kid's, no other child's.
            add(
                "media",
                try await seed.id(
                    """
                    INSERT INTO media (id, community_id, uploaded_by, family_member_id, type, filename, mime_type, size_bytes, storage_path)
                    SELECT id, \(community), \(world.id(member)), \(kid), 'image', 'room.jpg', 'image/jpeg', 10,
                        \(community)::text || '/' || id || '/room.jpg'
                    FROM (SELECT gen_random_uuid() AS id) AS new RETURNING id
                    """
                ),
                forKid)
            let own = try await seed.id(
                "INSERT INTO chores (community_id, title, points, created_by) VALUES (\(community), 'Taxes', 50, \(ownerID)) RETURNING id")
            add("chores", own, everyone)
            add(
                "chore_assignees",
                try await seed.id("INSERT INTO chore_assignees (chore_id, family_member_id) VALUES (\(chore), \(kid)) RETURNING id"), forKid)
            add(
                "chore_assignees",
                try await seed.id("INSERT INTO chore_assignees (chore_id, user_id) VALUES (\(chore), \(world.id(member))) RETURNING id"),
                everyone)
            add(
                "chore_assignees",
                try await seed.id("INSERT INTO chore_assignees (chore_id, user_id) VALUES (\(own), \(ownerID)) RETURNING id"), everyone)
            let completion = try await seed.id(
                """
                INSERT INTO chore_completions (chore_id, occurrence_at, family_member_id)
                SELECT id, created_at, \(kid) FROM chores WHERE id = \(chore) RETURNING id
                """)
            add("chore_completions", completion, forKid)
            try await connection.query(
                "UPDATE chore_completions SET status = 'approved', reviewed_by = \(ownerID), reviewed_at = now() WHERE id = \(completion)")
            let reward = try await seed.id(
                "INSERT INTO rewards (community_id, title, points_cost, created_by) VALUES (\(community), 'Ice cream', 3, \(ownerID)) RETURNING id")
            add("rewards", reward, .membersAndChildren(community, childrenOf: Set(Person.allCases)))
            // A reward the member (not an admin) set for their own kids: the members' and those
            // kids'. In A the member, a2, is also the second guardian of a's kid, who sees it too;
            // in B, ab is only invited to be b's kid's guardian, which counts for nothing.
            add(
                "rewards",
                try await seed.id(
                    """
                    INSERT INTO rewards (community_id, title, points_cost, created_by, family_of)
                    VALUES (\(community), 'Lego', 30, \(world.id(member)), \(world.id(member))) RETURNING id
                    """),
                .membersAndChildren(community, childrenOf: member == .a2 ? [.a2, .a] : [member]))
            // A hidden reward and an archived one: the members' (the parents keep them), no child's.
            for hiddenOrArchived in ["available = false", "archived_at = now()"] {
                let offShelf = try await seed.id(
                    "INSERT INTO rewards (community_id, title, points_cost, created_by) VALUES (\(community), 'Pony', 3, \(ownerID)) RETURNING id")
                try await connection.query("UPDATE rewards SET \(unescaped: hiddenOrArchived) WHERE id = \(offShelf)")
                add("rewards", offShelf, .membersOf(community))
            }
            add(
                "reward_redemptions",
                try await seed.id("INSERT INTO reward_redemptions (reward_id, family_member_id) VALUES (\(reward), \(kid)) RETURNING id"),
                forKid)
            try await connection.query(
                """
                INSERT INTO points_ledger (community_id, user_id, delta, kind, reason, created_by)
                VALUES (\(community), \(world.id(member)), 5, 'adjustment', 'Birthday', \(ownerID))
                """)
            for table in ["points_ledger", "points_accounts"] {
                for row in try await connection.query("SELECT id, family_member_id FROM \(unescaped: table) WHERE community_id = \(community)") {
                    let (id, child) = try row.decode((UUID, UUID?).self)
                    add(table, id, child == nil ? everyone : forKid)
                }
            }
        }
        // former's kid was given a chore while former was a member; former has left since.
        let formerKid = try #require(world.kids[.former])
        let old = try await seed.id(
            "INSERT INTO chores (community_id, title, points, created_by) VALUES (\(world.communityA), 'Old', 1, \(world.id(.a))) RETURNING id")
        add("chores", old, .membersAndChildren(world.communityA, childrenOf: [.former]))
        try await connection.query("UPDATE members SET left_at = NULL WHERE community_id = \(world.communityA) AND user_id = \(world.id(.former))")
        add(
            "chore_assignees",
            try await seed.id("INSERT INTO chore_assignees (chore_id, family_member_id) VALUES (\(old), \(formerKid)) RETURNING id"),
            .membersAndChildren(world.communityA, childrenOf: [.former]))
        try await connection.query(
            "UPDATE members SET left_at = now() WHERE community_id = \(world.communityA) AND user_id = \(world.id(.former))")
        // What the triggers told people (assigned, waiting for approval, approved, redeemed).
        for row in try await connection.query(
            "SELECT id, user_id FROM notifications WHERE type IN ('chore_assigned', 'chore_completed', 'chore_approved', 'reward_redeemed')")
        {
            let (id, user) = try row.decode((UUID, UUID).self)
            let person = try #require(Person.allCases.first { world.id($0) == user })
            add("notifications", id, .only(person))
        }
        return rows
    }
}

@Suite("Row-level security, as orbit_app")
struct RowLevelSecurityTests {
    static let viewers: [String] = World.Person.allCases.map(\.rawValue) + ["(no setting)", "(empty setting)"]

    @Test("the server's own tables: orbit_app has no right on them, a signed-in user's read is refused, and each has forced row-level security")
    func serverOnlyTables() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                for table in World.serverOnly {
                    for right in ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"] {
                        let granted = try await connection.query("SELECT has_table_privilege('orbit_app', \(table), \(right)) AS granted")
                            .single().decode("granted", as: Bool.self)
                        #expect(!granted, "orbit_app has \(right) on \(table)")
                    }
                    let forced = try await connection.query(
                        "SELECT relrowsecurity AND relforcerowsecurity AS forced FROM pg_class WHERE oid = \(table)::regclass"
                    ).single().decode("forced", as: Bool.self)
                    #expect(forced, "\(table) has forced row-level security")
                    // Every column, from the catalog: a right on one column is a right on the table's data.
                    let columnRights = try await connection.query(
                        """
                        SELECT a.attname::text AS name, r.privilege
                        FROM pg_attribute a CROSS JOIN unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'REFERENCES']) AS r(privilege)
                        WHERE a.attrelid = \(table)::regclass AND a.attnum > 0 AND NOT a.attisdropped
                          AND has_column_privilege('orbit_app', a.attrelid, a.attnum, r.privilege)
                        """
                    ).map { try $0.decode((String, String).self) }
                    #expect(columnRights.isEmpty, "orbit_app has column rights on \(table): \(columnRights)")
                    let columns = try await connection.query(
                        "SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = \(table)::regclass AND attnum > 0 AND NOT attisdropped"
                    ).single().decode("n", as: Int.self)
                    #expect(columns > 0)
                    // A read of every column is refused for want of the right (42501), not for a
                    // column that does not exist.
                    let refusal = await #expect(throws: PostgresError.self, "a member reads \(table)") {
                        try await connection.asApp(world.id(.a)) { connection in
                            try await connection.query("SELECT * FROM \(unescaped: table)")
                        }
                    }
                    #expect(refusal?.isInsufficientPrivilege == true, "\(String(describing: refusal))")
                }
            }
        }
    }

    @Test("each user sees exactly the rows of every table that the visibility rules give them", arguments: viewers)
    func visibilityMatrix(viewer: String) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let person = World.Person(rawValue: viewer)
                let rawSetting: String? = viewer == "(empty setting)" ? "" : nil
                try await connection.asApp(person.map(world.id), rawSetting: rawSetting) { connection in
                    for table in World.tables {
                        let visible = Set(
                            try await connection.query("SELECT \(unescaped: World.idColumn(table)) AS id FROM \(unescaped: table)").map {
                                try $0.decode("id", as: UUID.self)
                            })
                        let expected = world.expectedIDs(table, for: person)
                        #expect(visible == expected, "\(viewer) on \(table): saw \(visible.count) rows, expected \(expected.count)")
                    }
                    // The money views have no id of their own: each shows the viewer's
                    // communities (both have a split between two people), and no other.
                    let mine = Set(world.memberships.filter { members in members.value.contains { $0.0 == person } }.keys)
                    for view in ["balances", "pair_balances"] {
                        let seen = Set(
                            try await connection.query("SELECT DISTINCT community_id FROM \(unescaped: view)").map {
                                try $0.decode("community_id", as: UUID.self)
                            })
                        #expect(seen == mine, "\(viewer) on \(view): saw \(seen.count) communities, expected \(mine.count)")
                    }
                }
            }
        }
    }

    @Test("an archived community: every row reads as before, and every write of its members in it is refused, as orbit_app")
    func archivedCommunity() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                try await connection.query("UPDATE communities SET archived_at = now() WHERE id = \(world.communityA)")
                for person in [World.Person.a, .a2, .ab] {
                    try await connection.asApp(world.id(person)) { connection in
                        for table in World.tables {
                            let visible = Set(
                                try await connection.query("SELECT \(unescaped: World.idColumn(table)) AS id FROM \(unescaped: table)").map {
                                    try $0.decode("id", as: UUID.self)
                                })
                            #expect(visible == world.expectedIDs(table, for: person), "\(person) on \(table)")
                        }
                    }
                }
                let a = world.communityA
                let writes: [(String, PostgresQuery)] = [
                    ("a post", "INSERT INTO posts (community_id, author_id, content) VALUES (\(a), \(world.id(.a)), 'late')"),
                    ("a post edited", "UPDATE posts SET content = 'x' WHERE community_id = \(a)"),
                    ("a comment edited", "UPDATE comments SET content = 'x' WHERE community_id = \(a)"),
                    ("a vote", "INSERT INTO poll_votes (post_id, user_id, option_index) VALUES (\(world.posts[a]), \(world.id(.a)), 0)"),
                    ("an expense edited", "UPDATE transactions SET description = 'x' WHERE community_id = \(a)"),
                    ("a split settled", "UPDATE splits SET is_settled = true, settled_at = now() WHERE community_id = \(a)"),
                    ("an event", "INSERT INTO events (community_id, created_by, title, starts_at) VALUES (\(a), \(world.id(.a)), 'x', now())"),
                    ("dues edited", "UPDATE dues SET name = 'x' WHERE community_id = \(a)"),
                    ("a rate", "UPDATE exchange_rates SET rate = 2 WHERE community_id = \(a)"),
                    ("a category", "INSERT INTO expense_categories (community_id, name, emoji, created_by) VALUES (\(a), 'x', '⛺', \(world.id(.a)))"),
                    ("an invite", "INSERT INTO invites (community_id, code, created_by) VALUES (\(a), 'ARCHVD', \(world.id(.a)))"),
                    (
                        "a message",
                        "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(world.group), \(a), \(world.id(.a)), 'hi')"
                    ),
                    ("a reward edited", "UPDATE rewards SET title = 'x' WHERE community_id = \(a)"),
                    ("the community renamed", "UPDATE communities SET name = 'x' WHERE id = \(a)"),
                ]
                for (what, statement) in writes {
                    let error = await #expect(throws: PostgresError.self, "\(what)") {
                        try await connection.asApp(world.id(.a)) { connection in try await connection.query(statement) }
                    }
                    #expect(error?.constraint == "community_archived", "\(what): \(String(describing: error))")
                }
                // B is not archived: its admin writes as ever.
                try await connection.asApp(world.id(.b)) { connection in
                    try await connection.query("UPDATE posts SET content = 'still here' WHERE community_id = \(world.communityB)")
                }
            }
        }
    }

    @Test(
        "a signed-in child sees their own chores, completions, redemptions and points and the rewards of their device's community; nothing else",
        arguments: World.pairedKids.map { "\($0.parent.rawValue)@\($0.community)" })
    func childVisibilityMatrix(child: String) async throws {
        let parts = child.split(separator: "@").map(String.init)
        let child = World.Child(parent: try #require(World.Person(rawValue: parts[0])), community: parts[1])
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let seen = try await connection.asChild(try #require(world.kids[child.parent]), device: world.devices[child]) { connection in
                    try await World.visibleRows(on: connection)
                }
                for table in World.tables {
                    let expected = world.expectedIDs(table, for: child)
                    #expect(seen[table] == expected, "kid of \(child) on \(table): saw \(seen[table]?.count ?? -1) rows, expected \(expected.count)")
                }
            }
        }
    }

    @Test("a child uploads an image on behalf of their parent, to their device's community only; any other upload is refused")
    func childUploads() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let kid = try #require(world.kids[.a2])
                let device = world.devices[World.Child(parent: .a2, community: "A")]
                func upload(community: UUID, uploadedBy: UUID, type: String = "image", child: UUID? = nil) -> PostgresQuery {
                    """
                    INSERT INTO media (id, community_id, uploaded_by, family_member_id, type, filename, mime_type, size_bytes, storage_path)
                    SELECT id, \(community), \(uploadedBy), \(child ?? kid), \(type)::media_type, 'room.jpg', 'image/jpeg', 10,
                        \(community)::text || '/' || id || '/room.jpg'
                    FROM (SELECT gen_random_uuid() AS id) AS new
                    """
                }
                try await connection.asChild(kid, device: device) { connection in
                    try await connection.query(upload(community: world.communityA, uploadedBy: world.id(.a2)))
                }
                let refused: [(String, PostgresQuery)] = [
                    ("as another parent", upload(community: world.communityA, uploadedBy: world.id(.a))),
                    ("to another community", upload(community: world.communityB, uploadedBy: world.id(.a2))),
                    ("a video", upload(community: world.communityA, uploadedBy: world.id(.a2), type: "video")),
                    ("as another child", upload(community: world.communityA, uploadedBy: world.id(.a), child: try #require(world.kids[.a]))),
                ]
                for (what, statement) in refused {
                    let error = await #expect(throws: PostgresError.self, "\(what)") {
                        try await connection.asChild(kid, device: device) { connection in try await connection.query(statement) }
                    }
                    #expect(error?.sqlState == "42501", "\(what): \(String(describing: error))")
                }
                // A member may not pass an upload off as a child's.
                let member = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(world.id(.a2)) { connection in
                        try await connection.query(upload(community: world.communityA, uploadedBy: world.id(.a2)))
                    }
                }
                #expect(member?.sqlState == "42501")
            }
        }
    }

    @Test("a child sees nothing without their device, on another child's device, or once their device is revoked")
    func childWithoutTheirDevice() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let kid = try #require(world.kids[.ab])
                let device = try #require(world.devices[World.Child(parent: .ab, community: "A")])
                let before = try await connection.asChild(kid, device: device) { try await World.visibleRows(on: $0) }
                #expect(before.values.contains { !$0.isEmpty }, "the kid of ab sees their rows on their device")
                let a2sDevice = world.devices[World.Child(parent: .a2, community: "A")]
                for (label, device) in [("no device", nil), ("a2's kid's device", a2sDevice)] {
                    let seen = try await connection.asChild(kid, device: device) { try await World.visibleRows(on: $0) }
                    let leaked = seen.filter { !$0.value.isEmpty }.keys.sorted()
                    #expect(leaked.isEmpty, "\(label): \(leaked)")
                }
                try await connection.query("UPDATE child_devices SET revoked_at = now() WHERE id = \(device)")
                let revoked = try await connection.asChild(kid, device: device) { try await World.visibleRows(on: $0) }
                let leaked = revoked.filter { !$0.value.isEmpty }.keys.sorted()
                #expect(leaked.isEmpty, "revoked: \(leaked)")
            }
        }
    }

    @Test(
        "the change log (sync feed): each user sees the changes of their active communities, only their own notifications, chat's only as a participant (or their own leaving), and of their own feed (no community) only their own",
        arguments: viewers)
    func changeLogVisibility(viewer: String) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let person = World.Person(rawValue: viewer)
                let rawSetting: String? = viewer == "(empty setting)" ? "" : nil
                let all = try await connection.query("SELECT seq, community_id, user_id, conversation_id FROM changes").map {
                    try $0.decode((Int64, UUID?, UUID?, UUID?).self)
                }
                #expect(all.contains { $0.1 != nil && $0.2 != nil && $0.3 == nil }, "the world has notification changes")
                #expect(Set(all.filter { $0.1 == nil }.compactMap(\.2)).count > 2, "the world has several users' own changes (devices)")
                #expect(all.contains { $0.2 != nil && $0.3 == world.group }, "the world has someone's leaving of a group")
                // Who takes part in each conversation now: the community's own, its active members.
                var participants: [UUID: Set<World.Person>] = [world.group: [.a, .a2], world.direct: [.a2, .ab]]
                for row in try await connection.query("SELECT id, community_id FROM conversations WHERE kind = 'community'") {
                    let (conversation, community) = try row.decode((UUID, UUID).self)
                    participants[conversation] = Set(world.memberships[community]?.map(\.0) ?? [])
                }
                #expect(all.filter { $0.3 != nil }.count > 10, "the world has chat changes")
                let expected = Set(
                    all.filter { change in
                        guard let person else { return false }
                        // A user's own feed: theirs alone.
                        guard let community = change.1 else { return change.2 == world.id(person) }
                        let member = world.memberships[community]?.contains { $0.0 == person } ?? false
                        let own = change.2 == nil || change.2 == world.id(person)
                        let chat = change.3.map { change.2 != nil || participants[$0]?.contains(person) == true } ?? true
                        return member && own && chat
                    }.map(\.0))
                try await connection.asApp(person.map(world.id), rawSetting: rawSetting) { connection in
                    let visible = Set(try await connection.query("SELECT seq FROM changes").map { try $0.decode("seq", as: Int64.self) })
                    #expect(visible == expected, "\(viewer): saw \(visible.count) changes, expected \(expected.count)")
                }
            }
        }
    }

    @Test(
        "presence (orbit.presence): one's own and of people who share an active community; someone hiding it shows nothing but that",
        arguments: viewers)
    func presenceVisibility(viewer: String) async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let person = World.Person(rawValue: viewer)
                let rawSetting: String? = viewer == "(empty setting)" ? "" : nil
                // a is online (World's socket); a2 hides their presence; b was seen an hour ago.
                try await connection.query("UPDATE users SET presence_visible = false WHERE id = \(world.id(.a2))")
                try await connection.query("UPDATE users SET last_seen_at = now() - interval '1 hour' WHERE id = \(world.id(.b))")
                let everyone = World.Person.allCases.map { world.id($0) }
                let rows = try await connection.asApp(person.map(world.id), rawSetting: rawSetting) { connection in
                    try await connection.query("SELECT user_id, visible, online, last_seen_at FROM orbit.presence(\(everyone)::uuid[])").map {
                        try $0.decode((UUID, Bool, Bool, Date?).self)
                    }
                }
                var seen: [World.Person: (visible: Bool, online: Bool, lastSeen: Date?)] = [:]
                for (id, visible, online, lastSeen) in rows {
                    let who = try #require(World.Person.allCases.first { world.id($0) == id })
                    seen[who] = (visible, online, lastSeen)
                }
                do {
                    let expected = Set(World.Person.allCases.filter { other in person.map { world.canSee($0, .contactsOf(other)) } ?? false })
                    #expect(Set(seen.keys) == expected, "\(viewer) sees the presence of \(seen.keys.map(\.rawValue).sorted())")
                    if let a = seen[.a] {
                        #expect(a.visible && a.online && a.lastSeen != nil)
                    }
                    if let a2 = seen[.a2] {
                        // Hidden from others; one's own is always there.
                        #expect(a2.visible == (person == .a2) && !a2.online)
                        if person != .a2 { #expect(a2.lastSeen == nil) }
                    }
                    if let b = seen[.b] {
                        #expect(b.visible && !b.online && b.lastSeen != nil)
                    }
                }
            }
        }
    }

    @Test("a soft-deleted community disappears for its members, with everything in it")
    func softDeletedCommunity() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                try await connection.query("UPDATE communities SET deleted_at = now() WHERE id = \(world.communityB)")
                for person in [World.Person.b, .ab] {
                    try await connection.asApp(world.id(person)) { connection in
                        for table in [
                            "communities", "members", "events", "posts", "transactions", "splits", "transaction_payers", "dues", "balances",
                            "pair_balances",
                        ] {
                            let inB: Int64 = try await connection.value(
                                "SELECT count(*) FROM \(unescaped: table) WHERE \(unescaped: table == "communities" ? "id" : "community_id") = \(world.communityB)"
                            )
                            #expect(inB == 0, "\(person) still sees \(table) of the deleted community")
                        }
                    }
                }
                let stillSeesA: Int64 = try await connection.asApp(world.id(.ab)) { connection in
                    try await connection.value("SELECT count(*) FROM posts WHERE community_id = \(world.communityA)")
                }
                #expect(stillSeesA == 1)
            }
        }
    }

    /// Writes a user must not be able to make, as (who, statement).
    static let deniedWrites: [(String, World.Person, @Sendable (World) -> PostgresQuery)] = [
        (
            "post into a community one is not in", .a2,
            { w in
                "INSERT INTO posts (community_id, author_id, content) VALUES (\(w.communityB), \(w.id(.a2)), 'hi')"
            }
        ),
        (
            "post as somebody else", .a2,
            { w in
                "INSERT INTO posts (community_id, author_id, content) VALUES (\(w.communityA), \(w.id(.a)), 'hi')"
            }
        ),
        (
            "announcement by a plain member", .a2,
            { w in
                "INSERT INTO posts (community_id, author_id, type, content) VALUES (\(w.communityA), \(w.id(.a2)), 'announcement', 'hi')"
            }
        ),
        (
            "event created as somebody else", .a2,
            { w in
                "INSERT INTO events (community_id, created_by, title, starts_at) VALUES (\(w.communityA), \(w.id(.a)), 'x', now())"
            }
        ),
        (
            "comment as somebody else", .a2,
            { w in
                "INSERT INTO comments (post_id, author_id, content) SELECT id, \(w.id(.a)), 'x' FROM posts WHERE community_id = \(w.communityA)"
            }
        ),
        (
            "reaction on a post of another community", .a2,
            { w in
                "INSERT INTO reactions (post_id, user_id, type) VALUES (\(w.posts[w.communityB]), \(w.id(.a2)), 'like')"
            }
        ),
        (
            "RSVP for somebody else", .a2,
            { w in
                "INSERT INTO rsvps (event_id, user_id, status) SELECT id, \(w.id(.a)), 'no' FROM events WHERE community_id = \(w.communityA)"
            }
        ),
        (
            "naming oneself a payer of another community's expense", .a2,
            { w in
                // ab is a member of B (the membership check passes); a2 is not (the policy refuses).
                let inB = w.rows["transactions", default: []].first {
                    if case .membersOf(let community) = $0.audience { community == w.communityB } else { false }
                }
                return
                    "INSERT INTO transaction_payers (transaction_id, community_id, user_id, amount) VALUES (\(inB?.id), \(w.communityB), \(w.id(.ab)), 1)"
            }
        ),
        ("rewriting money's history", .a, { _ in "UPDATE money_activity SET before = NULL" }),
        (
            "dues per attendee charged by a plain member", .a2,
            { w in
                "INSERT INTO dues_attendees (dues_id, community_id, user_id, heads) SELECT id, community_id, \(w.id(.a2)), 1 FROM dues WHERE community_id = \(w.communityA)"
            }
        ),
        ("changing who owes dues per attendee", .a, { _ in "UPDATE dues_attendees SET heads = 9" }),
        ("erasing money's history", .a, { _ in "DELETE FROM money_activity" }),
        (
            "invite by a plain member", .a2,
            { w in
                "INSERT INTO invites (community_id, code, created_by) VALUES (\(w.communityA), 'ZZZZZZ', \(w.id(.a2)))"
            }
        ),
        (
            "recurring dues set up by a plain member", .a2,
            { w in
                """
                INSERT INTO recurring_charges (community_id, kind, description, amount, currency, recurrence_rule, starts_on, next_on, created_by)
                VALUES (\(w.communityA), 'dues', 'x', 100, 'USD', 'FREQ=MONTHLY', current_date, current_date, \(w.id(.a2)))
                """
            }
        ),
        ("deleting a recurring charge", .a, { _ in "DELETE FROM recurring_charges" }),
        (
            "an exchange rate set by a plain member", .a2,
            { w in
                """
                INSERT INTO exchange_rates (community_id, base, quote, rate, rate_on, source, entered_by)
                VALUES (\(w.communityA), 'CHF', 'USD', 1.1, current_date, 'admin', \(w.id(.a2)))
                """
            }
        ),
        (
            "a reference rate written by an admin (operators import them)", .a,
            { _ in "INSERT INTO exchange_rates (base, quote, rate, rate_on, source) VALUES ('EUR', 'USD', 1.1, current_date, 'ecb')" }
        ),
        ("changing what a recurring charge charges", .a, { _ in "UPDATE recurring_charges SET amount = 1" }),
        (
            "dues set up by a plain member", .a2,
            { w in
                "INSERT INTO dues (community_id, name, amount, due_date, created_by) VALUES (\(w.communityA), 'x', 100, current_date, \(w.id(.a2)))"
            }
        ),
        (
            "joining a community without an admin", .none,
            { w in
                "INSERT INTO members (community_id, user_id) VALUES (\(w.communityA), \(w.id(.none)))"
            }
        ),
        (
            "promoting oneself to admin", .a2,
            { w in
                "UPDATE members SET role = 'admin' WHERE community_id = \(w.communityA) AND user_id = \(w.id(.a2))"
            }
        ),
        (
            "moving one's post to another community", .ab,
            { w in
                "UPDATE posts SET community_id = \(w.communityB) WHERE community_id = \(w.communityA)"
            }
        ),
        (
            "registering a device for somebody else", .a2,
            { w in
                "INSERT INTO devices (user_id, token, environment, bundle_id) VALUES (\(w.id(.a)), \(String(repeating: "ee", count: 32)), 'sandbox', 'x')"
            }
        ),
        ("writing a counter", .a, { w in "UPDATE communities SET member_count = 100 WHERE id = \(w.communityA)" }),
        ("hard-deleting a post", .a, { w in "DELETE FROM posts WHERE community_id = \(w.communityA)" }),
        // Where an upload's files are is the server's to say: not even the uploader may point
        // the row elsewhere (orbit_app has no UPDATE on media; issue 37, item 3).
        (
            "pointing one's upload at another file", .a2,
            { w in "UPDATE media SET storage_path = '../../../etc/passwd' WHERE community_id = \(w.communityA)" }
        ),
        ("giving one's upload another thumbnail", .a2, { w in "UPDATE media SET thumbnail_path = NULL WHERE community_id = \(w.communityA)" }),
        ("reading the materialized balances", .a, { _ in "SELECT * FROM orbit_private.balances_snapshot" }),
        ("reading the materialized pairs", .a, { _ in "SELECT * FROM orbit_private.pair_balances_snapshot" }),
        ("reading the balances journal", .a, { _ in "SELECT * FROM orbit_private.balance_journal" }),
        ("reading schema_migrations", .a, { _ in "SELECT * FROM schema_migrations" }),
        ("reading the push queue", .a, { _ in "SELECT * FROM push_deliveries" }),
        ("reading who is connected (presence is orbit.presence)", .a, { _ in "SELECT * FROM live_connections" }),
        (
            "appearing online", .a,
            { w in "INSERT INTO live_connections (id, user_id, server_id) VALUES (gen_random_uuid(), \(w.id(.a)), gen_random_uuid())" }
        ),
        (
            "writing the change log", .a,
            { w in "INSERT INTO changes (community_id, entity, entity_id, op) VALUES (\(w.communityA), 'post', gen_random_uuid(), 'delete')" }
        ),
        (
            "queueing a push", .a,
            { w in
                "INSERT INTO push_deliveries (notification_id, device_id) SELECT n.id, d.id FROM notifications n, devices d WHERE n.user_id = \(w.id(.a)) AND d.user_id = \(w.id(.a))"
            }
        ),
        (
            "notifying someone one shares no community with", .a2,
            { w in
                "INSERT INTO notifications (user_id, community_id, type, title, body) VALUES (\(w.id(.b)), \(w.communityA), 'mention', 'x', 'y')"
            }
        ),
        (
            "a message into a conversation one left", .ab,
            { w in
                "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(w.group), \(w.communityA), \(w.id(.ab)), 'back')"
            }
        ),
        (
            "a message into a direct conversation of others, in one's own community", .a,
            { w in
                "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(w.direct), \(w.communityA), \(w.id(.a)), 'hi')"
            }
        ),
        (
            "a message in somebody else's name", .a2,
            { w in
                "INSERT INTO messages (conversation_id, community_id, sender_id, text) VALUES (\(w.direct), \(w.communityA), \(w.id(.ab)), 'hi')"
            }
        ),
        (
            "adding oneself back to a group one left", .ab,
            { w in
                "INSERT INTO conversation_participants (conversation_id, user_id, community_id) VALUES (\(w.group), \(w.id(.ab)), \(w.communityA))"
            }
        ),
        (
            "a participant adding people to a group they did not start", .a2,
            { w in
                "INSERT INTO conversation_participants (conversation_id, user_id, community_id) VALUES (\(w.group), \(w.id(.ab)), \(w.communityA))"
            }
        ),
        (
            "a second community conversation", .a,
            { w in
                "INSERT INTO conversations (community_id, kind, created_by) VALUES (\(w.communityA), 'community', \(w.id(.a)))"
            }
        ),
        (
            "a parent who is not an admin assigns another's child to their own child's chore", .a2,
            { w in
                """
                INSERT INTO chore_assignees (chore_id, family_member_id)
                SELECT id, \(w.kids[.ab]) FROM chores WHERE community_id = \(w.communityA) AND title = 'Homework'
                """
            }
        ),
        (
            "a reward for everyone set by a member who is not an admin", .a2,
            { w in
                "INSERT INTO rewards (community_id, title, points_cost, created_by) VALUES (\(w.communityA), 'Pony', 5, \(w.id(.a2)))"
            }
        ),
        (
            "a reward set by a member for another parent's children", .a2,
            { w in
                "INSERT INTO rewards (community_id, title, points_cost, created_by, family_of) VALUES (\(w.communityA), 'Pony', 5, \(w.id(.a2)), \(w.id(.a)))"
            }
        ),
        (
            "a parent who is not an admin assigns themselves to their child's chore", .a2,
            { w in
                "INSERT INTO chore_assignees (chore_id, user_id) SELECT id, \(w.id(.a2)) FROM chores WHERE community_id = \(w.communityA) AND title = 'Homework'"
            }
        ),
        (
            "a chore marked done in another member's name", .a2,
            { w in
                """
                INSERT INTO chore_completions (chore_id, occurrence_at, user_id, recorded_by)
                SELECT id, created_at, \(w.id(.a)), \(w.id(.a2)) FROM chores WHERE community_id = \(w.communityA) AND title = 'Taxes'
                """
            }
        ),
        (
            "a reward redeemed for another parent's child", .ab,
            { w in
                """
                INSERT INTO reward_redemptions (reward_id, family_member_id, requested_by)
                SELECT id, \(w.kids[.a2]), \(w.id(.ab)) FROM rewards WHERE community_id = \(w.communityA)
                """
            }
        ),
        (
            "points given by a plain member", .a2,
            { w in
                """
                INSERT INTO points_ledger (community_id, user_id, delta, kind, reason, created_by)
                VALUES (\(w.communityA), \(w.id(.a2)), 100, 'adjustment', 'Mine', \(w.id(.a2)))
                """
            }
        ),
        (
            "a chore credit written by hand, even by an admin", .a,
            { w in
                """
                INSERT INTO points_ledger (community_id, user_id, delta, kind, completion_id, created_by)
                SELECT community_id, \(w.id(.a)), 10, 'chore', id, \(w.id(.a)) FROM chore_completions WHERE community_id = \(w.communityA)
                """
            }
        ),
        ("changing the points ledger, even by an admin", .a, { _ in "UPDATE points_ledger SET delta = 1000" }),
        ("deleting from the points ledger, even by an admin", .a, { _ in "DELETE FROM points_ledger" }),
        ("writing a points balance, even by an admin", .a, { _ in "UPDATE points_accounts SET balance = 1000" }),
        (
            "a stranger admin making themselves a guardian of another's child", .b,
            { w in
                "INSERT INTO family_guardians (family_member_id, user_id, accepted_at) VALUES (\(w.kids[.a]), \(w.id(.b)), now())"
            }
        ),
        ("a stranger admin inviting themselves through the function", .b, { w in "SELECT orbit.invite_guardian(\(w.kids[.a]), \(w.id(.b)))" }),
        ("an invitee accepting by writing the row", .ab, { _ in "UPDATE family_guardians SET accepted_at = now()" }),
        ("a guardian removing the other by deleting the row", .a, { w in "DELETE FROM family_guardians WHERE user_id = \(w.id(.a2))" }),
        ("a guardian removing the other through the function", .a2, { w in "SELECT orbit.remove_guardian(\(w.kids[.a]), \(w.id(.a)))" }),
        (
            "someone only invited pairing the child's device", .ab,
            { w in "SELECT orbit.start_child_pairing(\(w.kids[.b]), \(w.communityB), '\\x00', now() + interval '1 hour')" }
        ),
        ("reading children's PIN hashes", .a, { _ in "SELECT * FROM child_credentials" }),
        ("reading paired children's devices", .a, { _ in "SELECT * FROM child_devices" }),
        (
            "a category added to a community one is not in", .a2,
            { w in
                "INSERT INTO expense_categories (community_id, name, emoji, created_by) VALUES (\(w.communityB), 'Mine', '🎲', \(w.id(.a2)))"
            }
        ),
        (
            "a category added in somebody else's name", .a2,
            { w in
                "INSERT INTO expense_categories (community_id, name, emoji, created_by) VALUES (\(w.communityA), 'Mine', '🎲', \(w.id(.a)))"
            }
        ),
        (
            "a payment handle in somebody else's name", .a2,
            { w in "INSERT INTO payment_handles (user_id, kind, handle) VALUES (\(w.id(.a)), 'venmo', 'not-theirs')" }
        ),
        (
            "a payment provider added by a user", .a,
            { _ in
                "INSERT INTO payment_providers (id, name, handle_kind, link_template) VALUES ('evil', 'Evil', 'revolut', 'https://evil.example/{handle}')"
            }
        ),
        ("a payment provider changed by a user", .a, { _ in "UPDATE payment_providers SET link_template = 'https://evil.example/{handle}'" }),
        (
            "a nudge in somebody else's name", .a2,
            { w in "INSERT INTO nudges (community_id, from_user_id, to_user_id) VALUES (\(w.communityA), \(w.id(.a)), \(w.id(.a2)))" }
        ),
        (
            "a category moved to another community, even by an admin of both", .a,
            { w in "UPDATE expense_categories SET community_id = \(w.communityB) WHERE community_id = \(w.communityA)" }
        ),
        (
            "a new community created in somebody else's name", .a2,
            { w in
                "INSERT INTO communities (name, created_by) VALUES ('Mine', \(w.id(.a)))"
            }
        ),
    ]

    @Test("writes outside one's rights are refused with an error", arguments: deniedWrites.map(\.0))
    func deniedWrite(name: String) async throws {
        let (_, person, statement) = try #require(Self.deniedWrites.first { $0.0 == name })
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let error = await #expect(throws: PostgresError.self) {
                    try await connection.asApp(world.id(person)) { connection in
                        try await connection.query(statement(world))
                    }
                }
                #expect(error?.isInsufficientPrivilege == true || error?.sqlState == "23001", "\(String(describing: error))")
            }
        }
    }

    @Test("payment providers: every user, and a signed-in child, reads the active ones only; none is written as orbit_app")
    func paymentProviders() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                try await connection.query(
                    """
                    INSERT INTO payment_providers (id, name, handle_kind, link_template, active) VALUES
                        ('shown', 'Shown', 'revolut', 'https://pay.example/{handle}', true), ('hidden', 'Hidden', 'venmo', 'https://pay.example/{handle}', false)
                    """)
                for person in World.Person.allCases {
                    let seen = try await connection.asApp(world.id(person)) { connection in
                        try await connection.query("SELECT id FROM payment_providers").map { try $0.decode("id", as: String.self) }
                    }
                    #expect(seen == ["shown"], "\(person): \(seen)")
                }
                let kid = try #require(world.kids[.a])
                let seenByKid = try await connection.asChild(kid, device: world.devices[World.Child(parent: .a, community: "A")]) { connection in
                    try await connection.query("SELECT id FROM payment_providers").map { try $0.decode("id", as: String.self) }
                }
                #expect(seenByKid == ["shown"], "\(seenByKid)")
            }
        }
    }

    @Test("updates of rows one cannot see change nothing")
    func invisibleUpdates() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let world = try await World.build(connection)
                let affected = try await connection.asApp(world.id(.a2)) { connection in
                    [
                        try await connection.query("UPDATE posts SET content = 'x' WHERE community_id = \(world.communityB)").affectedRows,
                        try await connection.query("UPDATE posts SET content = 'x' WHERE author_id = \(world.id(.a))").affectedRows,
                        try await connection.query("UPDATE users SET display_name = 'x' WHERE id = \(world.id(.a))").affectedRows,
                        try await connection.query("UPDATE communities SET name = 'x' WHERE id = \(world.communityA)").affectedRows,
                        // a's message in the group, and the message of B's conversation.
                        try await connection.query("UPDATE messages SET text = 'x' WHERE sender_id <> \(world.id(.a2))").affectedRows,
                        try await connection.query("UPDATE conversation_participants SET read_position = 9 WHERE user_id <> \(world.id(.a2))")
                            .affectedRows,
                        // A's category, which a2 sees but did not add and, not an admin, may not change.
                        try await connection.query("UPDATE expense_categories SET name = 'x' WHERE community_id = \(world.communityA)").affectedRows,
                        // a's payment handle, which a2 reads (they share A) but may not change or remove.
                        try await connection.query("UPDATE payment_handles SET handle = 'x' WHERE user_id = \(world.id(.a))").affectedRows,
                        try await connection.query("DELETE FROM payment_handles WHERE user_id = \(world.id(.a))").affectedRows,
                        // A's chores but their own kid's alone, which a2, not an admin, may not change or delete.
                        try await connection.query("UPDATE chores SET points = 99 WHERE community_id = \(world.communityA) AND title <> 'Homework'")
                            .affectedRows,
                        try await connection.query("DELETE FROM chores WHERE community_id = \(world.communityA) AND title <> 'Homework'")
                            .affectedRows,
                        // a's kid's completions and redemptions, which a2 may not review or resolve.
                        try await connection.query(
                            "UPDATE chore_completions SET status = 'rejected' WHERE community_id = \(world.communityA) AND family_member_id <> \(world.kids[.a2])"
                        ).affectedRows,
                    ]
                }
                #expect(affected == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
                // Their own kid's chore, a2 changes and deletes.
                let own = try await connection.asApp(world.id(.a2)) { connection in
                    [
                        try await connection.query("UPDATE chores SET points = 6 WHERE community_id = \(world.communityA) AND title = 'Homework'")
                            .affectedRows,
                        try await connection.query("DELETE FROM chores WHERE community_id = \(world.communityA) AND title = 'Homework'").affectedRows,
                    ]
                }
                #expect(own == [1, 1])
                // A kid's guardians rename them; a stranger admin (b, for a's kid) and someone only
                // invited (ab, for b's kid) change nothing; only the guardian of record removes.
                var renamed: [Int] = []
                for (who, parent) in [(World.Person.b, World.Person.a), (.ab, .b), (.a2, .a)] {
                    renamed.append(
                        try await connection.asApp(world.id(who)) { connection in
                            try await connection.query("UPDATE family_members SET name = 'x' WHERE id = \(world.kids[parent])").affectedRows ?? -1
                        })
                }
                #expect(renamed == [0, 0, 1])
                let removedByCoGuardian = try await connection.asApp(world.id(.a2)) { connection in
                    try await connection.query("DELETE FROM family_members WHERE id = \(world.kids[.a])").affectedRows
                }
                #expect(removedByCoGuardian == 0)
                // Even A's admin deletes no chore that has a completion (sql/210_chores.sql): it is archived instead.
                let done = try await connection.asApp(world.id(.a)) { connection in
                    try await connection.query(
                        "DELETE FROM chores c WHERE c.community_id = \(world.communityA) AND EXISTS (SELECT FROM chore_completions d WHERE d.chore_id = c.id)"
                    ).affectedRows
                }
                #expect(done == 0)
            }
        }
    }

    @Test("the service's own path works as orbit_app: create a community, add a member, post, split, read balances")
    func servicePath() async throws {
        try await withTestDatabase { database in
            try await database.withConnection { connection in
                let (founder, friend) = try await database.seeding { seed, _ in (try await seed.user("founder"), try await seed.user("friend")) }
                let community = UUID()
                try await connection.asApp(founder) { connection in
                    try await connection.query("INSERT INTO communities (id, name, created_by) VALUES (\(community), 'Ours', \(founder))")
                    try await connection.query("INSERT INTO members (community_id, user_id, role) VALUES (\(community), \(founder), 'admin')")
                    try await connection.query("INSERT INTO members (community_id, user_id) VALUES (\(community), \(friend))")
                }
                let (count, balances) = try await connection.asApp(friend) { connection in
                    try await connection.query("INSERT INTO posts (community_id, author_id, content) VALUES (\(community), \(friend), 'hi')")
                    let transaction = UUID()
                    try await connection.query(
                        """
                        INSERT INTO transactions (id, community_id, created_by, type, description, total_amount, paid_by, transaction_date)
                        VALUES (\(transaction), \(community), \(friend), 'expense', 'Balls', 2000, \(friend), current_date)
                        """
                    )
                    try await connection.query(
                        "INSERT INTO splits (transaction_id, user_id, amount) VALUES (\(transaction), \(founder), 1000), (\(transaction), \(friend), 1000)"
                    )
                    let count: Int32 = try await connection.value("SELECT member_count FROM communities WHERE id = \(community)")
                    return (count, 0)
                }
                #expect(count == 2 && balances == 0)
                let owed: Int64 = try await connection.asApp(founder) { connection in
                    try await connection.value("SELECT balance FROM balances WHERE community_id = \(community) AND user_id = \(founder)")
                }
                #expect(owed == -1000)
            }
        }
    }
}
