import Foundation

/// The session's protocol decisions as pure functions of the state and the clock: when to
/// refresh, what to do after taking the cross-process lock, and which failures end a session.
/// ``LatchkeyClient`` performs what these decide; tests drive them without I/O.
enum SessionMachine {
    /// What `accessToken(minTTL:)` does next.
    enum TokenStep: Equatable {
        /// The current token lives long enough.
        case use(String)
        /// Refresh the session whose refresh token is `due` (joining a refresh already running).
        case refresh(due: String)
        /// There is no session.
        case notSignedIn
    }

    static func tokenStep(_ stored: StoredSession?, now: Date, minTTL: Duration) -> TokenStep {
        guard let session = stored?.session else { return .notSignedIn }
        return session.isFresh(at: now, minTTL: minTTL) ? .use(session.accessToken) : .refresh(due: session.refreshToken)
    }

    /// What a refresh does once it holds the lock and has re-read the store.
    enum LockedStep: Equatable {
        /// The stored token is still the due one: present it.
        case present(String)
        /// A sibling already rotated it: use what it stored, present nothing.
        case adopt(StoredSession)
        /// A sibling signed out.
        case signedOut
    }

    /// "Refresh only if the stored token is still the one that was due" (docs/ios.md, "One client per process").
    static func lockedStep(due: String, stored: StoredSession?) -> LockedStep {
        guard let stored else { return .signedOut }
        return stored.session.refreshToken == due ? .present(due) : .adopt(stored)
    }

    /// What a failed refresh means for the session.
    enum FailureVerdict: Equatable {
        /// A definite answer: the session is over.
        case signOut(SignOutReason)
        /// `reused`: over, unless the store shows a sibling rotated the token meanwhile.
        case reusedUnlessSiblingRotated
        /// Ambiguous (no answer, 5xx, 429, a locked store, a reason this SDK does not know):
        /// keep the session and report the error.
        case keep
    }

    /// Only the server's definite `invalid_grant` reasons end a session (docs/ios.md, "Calling your API").
    static func verdict(status: Int?, serverCode: String?, reason: String?) -> FailureVerdict {
        guard serverCode == "invalid_grant", let status, (400..<500).contains(status), let reason else { return .keep }
        switch reason {
        case "reused": return .reusedUnlessSiblingRotated
        case "expired": return .signOut(.expired)
        case "revoked", "unknown": return .signOut(.sessionRevoked)
        case "consent_revoked": return .signOut(.consentRevoked)
        case "account_deleted": return .signOut(.accountDeleted)
        case "transferred": return .signOut(.transferred)
        default: return .keep
        }
    }

    /// The reason for a `reused` answer after re-reading the store: `nil` keeps the session.
    static func reusedVerdict(presented: String, stored: StoredSession?) -> SignOutReason? {
        guard let stored, stored.session.refreshToken != presented else { return .tokenReused }
        return nil
    }
}
