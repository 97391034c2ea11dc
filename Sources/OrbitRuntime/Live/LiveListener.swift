import Foundation
package import Logging
package import OrbitCore
package import ServiceLifecycle

/// On a connection of its own: reads the change log (`ChangeLog`) every `pollInterval` for the communities
/// changed by the transactions committed since its last read, and hands each to the sockets of
/// its active members; LISTENs to `orbit_chat` and hands each chat event to the sockets of the
/// conversation's participants (and wakes push delivery for a new message). Reconnects (after a
/// second) when the connection fails, and reads on from where it was, so nothing committed in
/// between is missed. Keeps this server's sockets fresh in `live_connections`.
///
/// Why it reads the log rather than LISTEN for it: a transaction that NOTIFYs holds a lock of
/// the whole database from its commit's start to its end, so every writer's commits queued
/// behind one another, and an expense cost 15% more for it alone (issue 38,
/// docs/benchmarks.md). One indexed read per server every 10 ms (every 2 ms while commits keep
/// coming) costs the writers nothing.
package struct LiveListener: Service {
    let hub: LiveHub
    let services: OrbitServices
    let pushSignal: PushSignal
    let logger: Logger
    /// A chat message as its sockets get it: the API's JSON (the same as its responses).
    let encode: @Sendable (ChatLiveMessage) throws -> String

    package init(
        hub: LiveHub, services: OrbitServices, pushSignal: PushSignal, logger: Logger,
        encode: @escaping @Sendable (ChatLiveMessage) throws -> String
    ) {
        self.hub = hub
        self.services = services
        self.pushSignal = pushSignal
        self.logger = logger
        self.encode = encode
    }

    /// How often the change log is read while nothing changes: the most a commit waits, beyond
    /// its delivery, to reach the sockets.
    static let pollInterval: Duration = .milliseconds(10)
    /// How soon it is read again after a read that found changes (commits come in bursts); each
    /// read that finds none doubles the wait, up to `pollInterval`. (At a steady 10 ms, a commit
    /// made just after a read, as the next one in a burst is, waits the whole interval: the
    /// live benchmark's p50 was 10 ms more than with NOTIFY; with 2 ms, 6 ms more.)
    static let busyPollInterval: Duration = .milliseconds(2)

    package func run() async throws {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await refreshPresence() }
                // The snapshot up to which the log has been read (kept across reconnects).
                var since: String?
                while !Task.isCancelled && !Task.isShuttingDownGracefully {
                    do {
                        try await listen(from: &since)
                    } catch is CancellationError {
                        break
                    } catch {
                        logger.warning("live updates: the listening connection failed; reconnecting", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
        }
    }

    /// Every 30 s: this server's sockets are still open (their users online).
    private func refreshPresence() async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do { try await Task.sleep(for: ChatService.presenceRefresh) } catch { return }
            do {
                try await services.chat.refreshSockets(on: hub.serverID)
            } catch {
                logger.warning("live updates: refreshing this server's sockets failed", metadata: ["error": "\(error)"])
            }
        }
    }

    private func listen(from since: inout String?) async throws {
        let log = try await ChangeLogReader.open(services.pool.configuration, logger: logger)
        do {
            let clock = ContinuousClock()
            var nextRead = clock.now
            var interval = Self.pollInterval
            var placed = false
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                // Waits in whole milliseconds (rounded up: rounded down, the loop would spin
                // through the last fraction of one).
                let remaining = nextRead - clock.now
                try await fanOut(try await log.chatEvents(waitingUpTo: remaining > .zero ? remaining + .milliseconds(1) : .zero))
                guard clock.now >= nextRead else { continue }
                let readAt = clock.now
                let changed = try await log.changed(since: &since)
                if !placed {
                    await hub.startedListening()
                    placed = true
                }
                interval = changed.isEmpty ? min(interval * 2, Self.pollInterval) : Self.busyPollInterval
                nextRead = readAt + interval
                for community in changed.communities { try await deliver(community) }
                if !changed.owners.isEmpty { await hub.send(LiveMessage.ownChanges, to: Set(changed.owners)) }
            }
        } catch {
            await log.close()
            throw error
        }
        await log.close()
    }

    /// Tells the connected active members of `community` that it changed, and the children
    /// signed in on devices paired for it (their feed has their chores, points and rewards).
    private func deliver(_ community: CommunityID) async throws {
        let connected = await hub.connectedUsers
        if !connected.isEmpty {
            let members = try await services.members.activeMembersAsOperator(of: community, among: Array(connected))
            if !members.isEmpty { await hub.send(LiveMessage.changes(community), to: Set(members)) }
        }
        let devices = await hub.connectedDevices
        if !devices.isEmpty {
            let paired = try await services.family.devicesAsOperator(pairedFor: community, among: Array(devices))
            if !paired.isEmpty { await hub.send(LiveMessage.changes(community), toDevices: Set(paired)) }
        }
    }

    /// A batch of chat events, as `orbit_chat` told them: a new message wakes push delivery
    /// (`PushSignal`: its pushes go to the phones of who cannot see it live), and every event
    /// goes to the sockets of its conversation's participants. The one place a commit fans out
    /// to both (docs/architecture.md, "Fan-out").
    private func fanOut(_ events: [ChatEvent]) async throws {
        if events.contains(where: { if case .message = $0 { true } else { false } }) { pushSignal.wake() }
        try await deliver(events)
    }

    /// Hands a batch of chat events to the sockets of their conversations' participants.
    private func deliver(_ events: [ChatEvent]) async throws {
        guard !events.isEmpty else { return }
        let connected = await hub.connectedUsers
        guard !connected.isEmpty else { return }
        for (recipients, message) in try await services.chat.liveMessages(for: events, among: Array(connected)) {
            await hub.send(try encode(message), to: recipients)
        }
    }
}
