import FoundationEssentials
import LatchkeyStore

/// The `password_credentials` table: usernames and Argon2id hashes (S11).
struct PasswordCredentialRepository: Sendable {}
