import FoundationEssentials
import LatchkeyHTTP
import LatchkeyWire

/// The domain's values in their wire form: the route layer's half of every response.

extension WireTimestamp {
    init(_ date: Date) {
        self.init(secondsSince1970: Int64(date.timeIntervalSince1970.rounded(.down)))
    }
}

extension WireUser {
    init(_ user: User) {
        self.init(
            id: user.id, email: user.email, emailVerified: user.emailVerified, isPrivateEmail: user.isPrivateEmail,
            givenName: user.givenName, familyName: user.familyName, createdAt: WireTimestamp(user.createdAt))
    }
}

extension WireTokenResponse {
    init(_ tokens: TokenResponse) {
        self.init(
            accessToken: tokens.accessToken, tokenType: tokens.session.dpopKeyThumbprint == nil ? "Bearer" : "DPoP",
            expiresIn: tokens.expiresIn, refreshToken: tokens.refreshToken,
            sessionID: tokens.session.id, created: tokens.created, user: WireUser(tokens.user))
    }
}

extension TokenResponse {
    /// The HTTP response: tokens are never cached (RFC 6749 §5.1).
    func response(status: Int = 200) -> HTTPResponse {
        var response = HTTPResponse.json(WireTokenResponse(self).json, status: status)
        response.headers.set("Cache-Control", "no-store")
        return response
    }
}
