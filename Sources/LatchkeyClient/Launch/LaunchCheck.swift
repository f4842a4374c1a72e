/// The launch-time check as a pure decision: Apple's credential state first, then the server.
enum LaunchCheck {
    /// What Apple's answer means.
    enum AppleStep: Equatable {
        /// Ask the server (the Apple credential is good, or there is none to check).
        case checkServer
        /// End the session locally and at the server.
        case signOut(SignOutReason)
        /// Apple could not be asked: keep the session.
        case offline
    }

    /// `nil` `state` means there is no Apple user id to ask about (a password session).
    static func appleStep(_ state: Result<AppleCredentialState, any Error>?) -> AppleStep {
        switch state {
        case nil, .success(.authorized)?: .checkServer
        case .success(.revoked)?: .signOut(.credentialRevoked)
        case .success(.notFound)?: .signOut(.credentialNotFound)
        case .success(.transferred)?: .signOut(.transferred)
        case .failure?: .offline
        }
    }

    /// What the server's answer means, given the session that was stored.
    static func outcome(server: Result<Session, LatchkeyError>, stored: Session) -> LaunchOutcome {
        switch server {
        case .success(let session): return .signedIn(session)
        case .failure(let error):
            if let reason = error.signOutReason { return .signedOut(reason) }
            if error.code == .notSignedIn { return .signedOut(nil) }
            return .offline(stored)
        }
    }
}
