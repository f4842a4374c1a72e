import Synchronization

/// Registered clients as the OAuth endpoints read them, kept in memory: every authorization and
/// token request names its client, and reading its row each time was the largest part of the
/// sign-in page's cost.
///
/// Every change to a client (registration, removal, a new secret) is announced on
/// ``ClientRepository/changeChannel`` in its transaction, whichever process makes it (a server,
/// or `latchkey clients` beside it), and each announcement empties the cache
/// (``ClientService/followChanges()``): a removed client or a replaced secret stops working
/// within about a second on every instance, at once in the process that made the change. An
/// entry also ages out after ``maximumAge``, the safety net under a missed announcement.
///
/// Only clients that exist are kept, so the cache grows with registrations, not with the
/// client ids that requests make up; ``maximumCount`` bounds it anyway.
final class ClientCache: Sendable {
    static let maximumAge: Duration = .seconds(60)
    static let maximumCount = 10_000

    private struct Entry {
        var stored: ClientRepository.StoredClient
        var loadedAt: ContinuousClock.Instant
    }

    private struct State {
        /// Moves on with every invalidation, so a read that started before one is not kept.
        var generation = 0
        var entries: [String: Entry] = [:]
    }

    private let state = Mutex(State())

    /// The client with this id: from memory, or from `load`, kept unless the cache was emptied
    /// while `load` ran (it may have read the row as it was before the change).
    func stored(
        id: String, load: () async throws -> ClientRepository.StoredClient?
    ) async throws -> ClientRepository.StoredClient? {
        let now = ContinuousClock.now
        let (hit, generation) = state.withLock { state in
            (state.entries[id].flatMap { now - $0.loadedAt < Self.maximumAge ? $0.stored : nil }, state.generation)
        }
        if let hit { return hit }
        guard let loaded = try await load() else { return nil }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= Self.maximumCount { state.entries.removeAll() }
            state.entries[id] = Entry(stored: loaded, loadedAt: now)
        }
        return loaded
    }

    /// Forgets every client: something about one of them changed.
    func invalidate() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll()
        }
    }
}
