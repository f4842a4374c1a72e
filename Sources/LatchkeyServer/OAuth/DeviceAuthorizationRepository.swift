import FoundationEssentials
import LatchkeyJSON
import LatchkeyStore

/// The `device_authorizations` table (RFC 8628). Every change of status is one conditional
/// `UPDATE` whose row count the caller acts on, so two instances deciding or redeeming the same
/// authorization at once cannot both succeed.
struct DeviceAuthorizationRepository: Sendable {
    /// Where an answer (``decide(id:approve:userID:browserSessionID:authTime:amr:now:on:)``)
    /// announces itself, so every instance's ``DevicePollGate`` stops taking codes as pending.
    static let changeChannel = "latchkey_device_authorizations"

    /// Stores a new, pending authorization inside the caller's transaction.
    func insert(
        _ authorization: DeviceAuthorization, deviceCodeHash: [UInt8], userCodeHash: [UInt8], on connection: any SQLConnection
    ) throws {
        try connection.execute(
            """
            INSERT INTO device_authorizations (id, device_code_hash, user_code_hash, client_id, scope, status, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)
            """,
            [
                .text(authorization.id), .blob(deviceCodeHash), .blob(userCodeHash), .text(authorization.clientID), .text(authorization.scope),
                .time(authorization.createdAt), .time(authorization.expiresAt),
            ])
    }

    /// Whether some row, live or not yet purged, has this user code.
    func userCodeExists(hash: [UInt8], on connection: any SQLConnection) throws -> Bool {
        try connection.queryOne("SELECT id FROM device_authorizations WHERE user_code_hash = ?", [.blob(hash)]) != nil
    }

    /// The authorization with this device code, whatever its status.
    func find(deviceCodeHash hash: [UInt8], on connection: any SQLConnection) throws -> DeviceAuthorization? {
        try connection.queryOne("SELECT * FROM device_authorizations WHERE device_code_hash = ?", [.blob(hash)]).map(Self.authorization)
    }

    /// The authorization with this user code, whatever its status.
    func find(userCodeHash hash: [UInt8], on connection: any SQLConnection) throws -> DeviceAuthorization? {
        try connection.queryOne("SELECT * FROM device_authorizations WHERE user_code_hash = ?", [.blob(hash)]).map(Self.authorization)
    }

    /// The authorization with this reference, whatever its status.
    func find(id: String, on connection: any SQLConnection) throws -> DeviceAuthorization? {
        try connection.queryOne("SELECT * FROM device_authorizations WHERE id = ?", [.text(id)]).map(Self.authorization)
    }

    /// Compare-and-set: `pending` → `approved` (with who, in which browser session, signed in
    /// when and how) or `denied`, unless it has expired at `now`.
    ///
    /// Announces the change on ``changeChannel`` in the same transaction.
    ///
    /// - Returns: Whether this call decided it; `false` when it was decided already or expired.
    func decide(
        id: String, approve: Bool, userID: String, browserSessionID: String, authTime: Date, amr: [String], now: Date,
        on connection: any SQLConnection
    ) throws -> Bool {
        try connection.announceChange(on: Self.changeChannel)
        return try connection.execute(
            """
            UPDATE device_authorizations SET status = ?, user_id = ?, browser_session_id = ?, auth_time = ?, amr = ?, decided_at = ?
            WHERE id = ? AND status = 'pending' AND expires_at > ?
            """,
            [
                .text(approve ? DeviceAuthorization.Status.approved.rawValue : DeviceAuthorization.Status.denied.rawValue), .text(userID),
                .text(browserSessionID), .time(authTime), .text(SessionRepository.amrText(amr)), .time(now), .text(id), .time(now),
            ]) == 1
    }

    /// Compare-and-set: `approved` → `redeemed`, unless it has expired at `now`.
    ///
    /// - Returns: Whether this call redeemed it; `false` means another poll did, or it expired.
    func redeem(deviceCodeHash hash: [UInt8], now: Date, on connection: any SQLConnection) throws -> Bool {
        try connection.execute(
            """
            UPDATE device_authorizations SET status = 'redeemed', redeemed_at = ?
            WHERE device_code_hash = ? AND status = 'approved' AND expires_at > ?
            """,
            [.time(now), .blob(hash), .time(now)]) == 1
    }

    /// Records the session the redemption created.
    func attach(sessionID: String, toDeviceCode hash: [UInt8], on connection: any SQLConnection) throws {
        try connection.execute("UPDATE device_authorizations SET session_id = ? WHERE device_code_hash = ?", [.text(sessionID), .blob(hash)])
    }

    private static func authorization(_ row: SQLRow) throws -> DeviceAuthorization {
        let amr = (try? JSONValue(parsing: Array(try row.string("amr").utf8)))?.arrayValue?.compactMap(\.stringValue) ?? []
        guard let status = DeviceAuthorization.Status(rawValue: try row.string("status")) else {
            throw StoreError.typeMismatch("device_authorizations.status holds an unknown value")
        }
        return DeviceAuthorization(
            id: try row.string("id"), clientID: try row.string("client_id"), scope: try row.string("scope"), status: status,
            userID: row.optionalString("user_id"), browserSessionID: row.optionalString("browser_session_id"),
            authTime: row.optionalDate("auth_time"), amr: amr, createdAt: try row.date("created_at"), expiresAt: try row.date("expires_at"))
    }
}
