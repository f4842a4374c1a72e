import FoundationEssentials
import LatchkeyStore

/// The `device_keys` table: P-256 public keys of a user's devices (Secure Enclave, persisted rights).
struct DeviceKeyRepository: Sendable {
    /// Stores a new key inside the caller's transaction.
    ///
    /// - Throws: `StoreError` with code `constraint` when the user already has this public key.
    func insert(_ device: DeviceKey, publicKey: [UInt8], on connection: any SQLConnection) throws {
        try connection.execute(
            "INSERT INTO device_keys (id, user_id, public_key, label, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(device.id), .text(device.userID), .blob(publicKey), .text(device.label), .time(device.createdAt), SQLValue(device.lastUsedAt)])
    }

    /// The user's key with this id; nil when the user has no such key.
    func find(id: String, userID: String, on connection: any SQLConnection) throws -> DeviceKey? {
        try connection.queryOne("SELECT * FROM device_keys WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]).map(Self.deviceKey)
    }

    /// The 65-byte X9.63 public key of the key with this id; nil when it is gone.
    func publicKey(id: String, on connection: any SQLConnection) throws -> [UInt8]? {
        try connection.queryOne("SELECT public_key FROM device_keys WHERE id = ?", [.text(id)]).map { try $0.blob("public_key") }
    }

    /// The user's keys, oldest first.
    func list(userID: String, on connection: any SQLConnection) throws -> [DeviceKey] {
        try connection.query("SELECT * FROM device_keys WHERE user_id = ? ORDER BY created_at, id", [.text(userID)]).map(Self.deviceKey)
    }

    /// Whether the user has any key.
    func exists(userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne("SELECT 1 AS one FROM device_keys WHERE user_id = ?", [.text(userID)]) != nil
    }

    /// Sets `last_used_at`.
    ///
    /// - Returns: false when the key is gone (removed since its challenge was read).
    func touch(id: String, at now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("UPDATE device_keys SET last_used_at = ? WHERE id = ?", [.time(now), .text(id)]) == 1
    }

    /// Deletes the user's key with this id.
    ///
    /// - Returns: Whether this call deleted it (false: the user has no such key, or another
    ///   request deleted it first).
    func delete(id: String, userID: String, on connection: any SQLConnection) throws -> Bool {
        try connection.execute("DELETE FROM device_keys WHERE id = ? AND user_id = ?", [.text(id), .text(userID)]) == 1
    }

    static func deviceKey(_ row: SQLRow) throws -> DeviceKey {
        DeviceKey(
            id: try row.string("id"), userID: try row.string("user_id"), label: try row.string("label"),
            createdAt: try row.date("created_at"), lastUsedAt: row.optionalDate("last_used_at"))
    }
}
