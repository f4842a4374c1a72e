import FoundationEssentials
import LatchkeyStore

/// The `signing_keys` table: the server's ES256 keys, sealed under the master key.
struct SigningKeyRepository: Sendable {}
