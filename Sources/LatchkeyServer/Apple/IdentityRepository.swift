import FoundationEssentials
import LatchkeyStore

/// The `identities` table: a user's sign-in identities at providers (Apple), with the sealed
/// Apple refresh token kept for revocation and validation.
struct IdentityRepository: Sendable {}
