import FoundationEssentials
import LatchkeyStore

/// The `device_keys` table: P-256 public keys of a user's devices (Secure Enclave, persisted rights).
struct DeviceKeyRepository: Sendable {}
