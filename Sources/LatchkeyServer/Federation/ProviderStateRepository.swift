import FoundationEssentials
import LatchkeyStore

/// The `provider_states` table: one row per upstream sign-in state that came back, kept until
/// the state would have expired (then the housekeeping removes it, ``RetentionRepository``).
struct ProviderStateRepository: Sendable {
    /// Compare-and-set: spends a state.
    ///
    /// - Returns: false when it was spent already (by this instance or another).
    func spend(id: String, provider: String, expiresAt: Date, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            "INSERT INTO provider_states (id, provider, used_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
            [.text(id), .text(provider), .time(now), .time(expiresAt)]) == 1
    }
}
