package import FoundationEssentials

/// A user signed in to the hosted pages in one browser: what the session cookie stands for
/// (S29), and what gives single sign-on across clients.
package struct BrowserSession: Sendable, Hashable {
    /// The row's id (`bs_…`): the binding of its forms' CSRF tokens and an ID token's `sid`.
    package var id: String
    /// Who is signed in.
    package var userID: String
    /// How the user signed in (RFC 8176), as ID tokens issued under it report.
    package var amr: [String]
    /// When the user last proved who they are (the ID token's `auth_time`).
    package var authTime: Date
    /// When it started.
    package var createdAt: Date
    /// When it ends however much it is used.
    package var expiresAt: Date

    /// Creates a value; sessions themselves are made by ``BrowserSessionService/start(userID:amr:ip:userAgent:)``.
    package init(id: String, userID: String, amr: [String], authTime: Date, createdAt: Date, expiresAt: Date) {
        self.id = id
        self.userID = userID
        self.amr = amr
        self.authTime = authTime
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}
