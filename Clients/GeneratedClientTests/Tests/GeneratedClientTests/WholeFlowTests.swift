import Foundation
import OpenAPIRuntime
import OrbitCoveClient
import Testing

/// The client that swift-openapi-generator makes of openapi.yaml, as the iOS app would use it,
/// against a live `orbitctl dev`. Every response is decoded into the generated types, so a field
/// the document gets wrong (a null where it promises a value, another format, an undocumented
/// status) fails here.
@Suite("The generated client against a live server")
struct WholeFlowTests {
    /// A demo user signed in with dev auth, and a client that sends their access token.
    struct SignedIn {
        var userID: String
        var client: Client
    }

    func signIn(_ email: String, at server: DevServer) async throws -> SignedIn {
        let tokens = try await Client(serverURL: server.url).devSignIn(body: .json(.init(email: email, deviceName: "client test")))
            .ok.body.json
        #expect(tokens.tokenType == .bearer)
        #expect(tokens.expiresIn > 0)
        #expect(tokens.refreshTokenExpiresAt > Date())
        let client = Client(serverURL: server.url, accessToken: tokens.accessToken)
        #expect(try await client.getMe().ok.body.json.email == email)
        return SignedIn(userID: tokens.userId, client: client)
    }

    @Test(
        "two users sign in, join a community by invite, answer an event, vote in a poll, share an expense and pay dues",
        .timeLimit(.minutes(5))
    )
    func twoUsersRunACommunity() async throws {
        try await withDevServer { server in
            let ada = try await signIn("ada@example.com", at: server)
            let max = try await signIn("max@example.com", at: server)

            let community = try await ada.client.createCommunity(
                body: .json(.init(value1: .init(name: "Harbour Rowing Club", description: "Saturday crews"), value2: .init()))
            ).created.body.json
            #expect(community.name == "Harbour Rowing Club")
            #expect(community.description == "Saturday crews")
            #expect(community.createdBy == ada.userID)
            #expect(community.memberCount == 1)
            #expect(community.deletedAt == nil)

            try await inviteAndJoin(community: community.id, admin: ada, joiner: max)
            try await eventWithAnswers(community: community.id, ada: ada, max: max)
            try await pollInTheFeed(community: community.id, ada: ada, max: max)
            try await sharedExpense(community: community.id, payer: ada, other: max)
            try await duesWithAPayment(community: community.id, admin: ada, member: max)
        }
    }

    func inviteAndJoin(community: String, admin: SignedIn, joiner: SignedIn) async throws {
        let invite = try await admin.client.createInvite(path: .init(communityId: community), body: .json(.init(maxUses: 5)))
            .created.body.json
        #expect(invite.communityId == community)
        #expect(invite.usesRemaining == 5)
        #expect(invite.expiresAt == nil)

        // Codes are accepted in any case.
        let redemption = try await joiner.client.joinByCode(body: .json(.init(code: invite.code.lowercased()))).ok.body.json
        #expect(redemption.communityId == community)
        #expect(redemption.rejoined == false)

        let members = try await admin.client.listMembers(path: .init(communityId: community)).ok.body.json.items
        #expect(Set(members.map(\.userId)) == [admin.userID, joiner.userID])
        let joined = try #require(members.first { $0.userId == joiner.userID })
        #expect(joined.id == redemption.memberId)
        #expect(joined.role == .member)
        #expect(joined.invitedBy == admin.userID)
        #expect(joined.leftAt == nil)
        #expect(try await joiner.client.getCommunity(path: .init(communityId: community)).ok.body.json.memberCount == 2)
    }

    func eventWithAnswers(community: String, ada: SignedIn, max: SignedIn) async throws {
        // A whole hour a week ahead: the server keeps microseconds, the client's format milliseconds.
        let startsAt = Date(timeIntervalSince1970: ((Date().timeIntervalSince1970 / 3600).rounded(.up) + 7 * 24) * 3600)
        let event = try await ada.client.createEvent(
            path: .init(communityId: community),
            body: .json(
                .init(
                    value1: .init(title: "Autumn regatta", startsAt: startsAt, locationName: "Boathouse", category: .game),
                    value2: .init()
                )
            )
        ).created.body.json
        #expect(event.communityId == community)
        #expect(event.startsAt == startsAt)
        #expect(event.category == "game")
        #expect(event.recurrenceRule == nil)

        let yes = try await ada.client.rsvp(path: .init(eventId: event.id), body: .json(.init(status: .yes, plusOnes: 1))).ok.body.json
        #expect(yes.userId == ada.userID)
        #expect(yes.status == .yes)
        #expect(yes.plusOnes == 1)
        let maybe = try await max.client.rsvp(
            path: .init(eventId: event.id),
            body: .json(.init(status: .maybe, note: "If the tide allows"))
        ).ok.body.json
        #expect(maybe.status == .maybe)
        #expect(maybe.note == "If the tide allows")
        #expect(maybe.familyMemberId == nil)

        let attendance = try await ada.client.attendance(path: .init(eventId: event.id)).ok.body.json
        #expect(attendance.eventId == event.id)
        #expect(attendance.yes.responses == 1)
        #expect(attendance.yes.people == 2)
        #expect(attendance.maybe.responses == 1)
        #expect(attendance.maybe.people == 1)
        #expect(attendance.no.responses == 0)
        #expect(attendance.notAnswered == [])
    }

    func pollInTheFeed(community: String, ada: SignedIn, max: SignedIn) async throws {
        let poll = try await ada.client.createPost(
            path: .init(communityId: community),
            body: .json(
                .init(
                    _type: .poll,
                    content: "Snacks after the regatta?",
                    poll: .init(question: "Which snack?", options: ["Oranges", "Pretzels", "Both"])
                )
            )
        ).created.body.json
        #expect(poll._type == "poll")
        let pollData = try #require(poll.pollData)
        #expect(pollData.question == "Which snack?")
        #expect(pollData.options == ["Oranges", "Pretzels", "Both"])
        #expect(pollData.allowMultiple == false)
        #expect(poll.myVotes == [])

        let maxVoted = try await max.client.vote(path: .init(postId: poll.id), body: .json(.init(option: 2))).ok.body.json
        #expect(maxVoted.myVotes == [2])
        let adaVoted = try await ada.client.vote(path: .init(postId: poll.id), body: .json(.init(option: 0))).ok.body.json
        #expect(adaVoted.myVotes == [0])

        let text = try await max.client.createPost(
            path: .init(communityId: community),
            body: .json(.init(_type: .text, content: "See you at the boathouse"))
        ).created.body.json
        #expect(text.pollData == nil)

        let page = try await max.client.feed(path: .init(communityId: community)).ok.body.json
        let ids = page.items.map(\.id)
        #expect(ids.contains(poll.id))
        #expect(ids.contains(text.id))
        #expect(ids.firstIndex(of: text.id) ?? .max < ids.firstIndex(of: poll.id) ?? .max, "newest first")
        #expect(page.items.first { $0.id == poll.id }?.myVotes == [2])
        #expect(page.items.first { $0.id == text.id }?.pollData == nil)
    }

    func sharedExpense(community: String, payer: SignedIn, other: SignedIn) async throws {
        let request = Operations.AddExpense.Input(
            path: .init(communityId: community),
            headers: .init(idempotencyKey: UUID().uuidString),
            body: .json(
                .init(
                    description: "Boat trailer hire",
                    amount: 4_501,
                    currency: .eur,
                    split: .equal(.init(method: .equal, userIds: [payer.userID, other.userID])),
                    category: .travel
                )
            )
        )
        let expense = try await payer.client.addExpense(request).created.body.json
        #expect(expense.totalAmount == 4_501)
        #expect(expense.currency == "EUR")
        #expect(expense.paidBy == payer.userID)
        #expect(expense._type == .expense)
        #expect(Set(expense.splits.map(\.userId)) == [payer.userID, other.userID])
        #expect(expense.splits.map(\.amount).reduce(0, +) == 4_501, "the splits add up to the amount")
        #expect(expense.splits.map(\.amount).sorted() == [2_250, 2_251])

        // A retry with the same Idempotency-Key gets the first expense, not a second one.
        let replayed = try await payer.client.addExpense(request).created.body.json
        #expect(replayed.id == expense.id)
        let listed = try await other.client.listExpenses(path: .init(communityId: community)).ok.body.json.items
        #expect(listed.map(\.id) == [expense.id])

        let owed = try #require(expense.splits.first { $0.userId == other.userID }).amount
        // Without `view` the balances are a BalanceList; `view=pairs` gives who owes whom
        // (openapi.yaml's anyOf: an empty list is either).
        let balances = try #require(try await other.client.balances(path: .init(communityId: community)).ok.body.json.value1).items
        let pairs = try await other.client.balances(path: .init(communityId: community), query: .init(view: .pairs)).ok.body.json
        #expect(pairs.value1 == nil)
        let debts = try #require(pairs.value2).items
        #expect(debts.map(\.amount) == [owed] && debts.first?.fromUserId == other.userID)
        #expect(balances.allSatisfy { $0.currency == "EUR" })
        #expect(balances.map(\.balance).reduce(0, +) == 0, "balances sum to zero")
        #expect(Dictionary(uniqueKeysWithValues: balances.map { ($0.userId, $0.balance) }) == [payer.userID: owed, other.userID: -owed])

        let payments = try await other.client.settleUp(path: .init(communityId: community)).ok.body.json.items
        #expect(payments.count == 1)
        #expect(payments.first?.fromUserId == other.userID)
        #expect(payments.first?.toUserId == payer.userID)
        #expect(payments.first?.amount == owed)
        #expect(payments.first?.currency == "EUR")
    }

    func duesWithAPayment(community: String, admin: SignedIn, member: SignedIn) async throws {
        let dueDate = Date().addingTimeInterval(30 * 86_400).formatted(.iso8601.year().month().day())
        let body = Operations.CreateDues.Input.Body.json(.init(name: "Season fee", amount: 12_000, currency: .eur, dueDate: dueDate))

        // A member may not set up dues: a typed 403 whose problem names the rule.
        let refused = try await member.client.createDues(path: .init(communityId: community), body: body)
        guard case .forbidden(let forbidden) = refused else {
            Issue.record("a member set up dues: \(refused)")
            return
        }
        let problem = try forbidden.body.applicationProblemJson
        #expect(problem.status == 403)
        #expect(problem._type == "https://orbitcove.app/problems/forbidden")
        #expect(problem.rule != nil)

        let dues = try await admin.client.createDues(path: .init(communityId: community), body: body).created.body.json
        #expect(dues.amount == 12_000)
        #expect(dues.currency == "EUR")
        #expect(dues.dueDate == dueDate)
        #expect(dues.isActive)

        let payment = try await admin.client.payDues(
            path: .init(duesId: dues.id),
            body: .json(.init(userId: member.userID, amount: 5_000, paymentMethod: "bank transfer"))
        ).created.body.json
        #expect(payment.duesId == dues.id)
        #expect(payment.userId == member.userID)
        #expect(payment.amountPaid == 5_000)
        #expect(payment.currency == "EUR")
        #expect(payment.recordedBy == admin.userID)
        #expect(payment.paymentMethod == "bank transfer")
        #expect(payment.notes == nil)

        let report = try await admin.client.duesReport(path: .init(duesId: dues.id)).ok.body.json.items
        #expect(report.allSatisfy { $0.outstanding == $0.amountDue - $0.amountPaid && !$0.overdue })
        let line = try #require(report.first { $0.userId == member.userID })
        #expect(line.amountDue == 12_000)
        #expect(line.amountPaid == 5_000)
        #expect(line.outstanding == 7_000)
        #expect(line.status == .partial)
        #expect(line.currency == "EUR")

        // Every member sees the same report as the admin.
        #expect(try await member.client.duesReport(path: .init(duesId: dues.id)).ok.body.json.items == report)
    }
}
