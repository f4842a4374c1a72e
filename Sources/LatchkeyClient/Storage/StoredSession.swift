/// What a ``CredentialStore`` keeps: the session, and what the SDK needs beside it after a
/// relaunch.
public struct StoredSession: Sendable, Hashable, Codable {
    /// The tokens and the user.
    public var session: Session
    /// The Apple user id (`sub`) of a Sign in with Apple session, for the launch-time credential
    /// check; `nil` for other sessions.
    public var appleUserID: String?
    /// The server id of each device key the SDK registered, by the key's public key (X9.63,
    /// base64url), so that step-up needs only the key.
    public var deviceKeyIDs: [String: String]

    /// A stored session.
    public init(session: Session, appleUserID: String? = nil, deviceKeyIDs: [String: String] = [:]) {
        self.session = session
        self.appleUserID = appleUserID
        self.deviceKeyIDs = deviceKeyIDs
    }
}
