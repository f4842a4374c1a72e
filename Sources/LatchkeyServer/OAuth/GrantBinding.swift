import LatchkeyStore

extension OAuthGrant {
    /// Whether a refresh token of `grant` (`nil`: a `/v1` sign-in's) may be presented by
    /// `client` (`nil`: at `/v1/token`), inside the refresh transaction.
    ///
    /// A grant's token refreshes at its own client's token endpoint, and at `/v1/token` only
    /// when that client is first-party and public (the SDK's web sign-in refreshes there like
    /// any other session); a `/v1` session's token never refreshes at `/oauth/token`.
    static func mayRefresh(_ grant: OAuthGrant?, presentedBy client: OAuthClient?, on connection: any SQLConnection) throws -> Bool {
        switch (grant, client) {
        case (nil, nil): return true
        case (nil, _?): return false
        case (let grant?, let client?): return grant.clientID == client.id
        case (let grant?, nil):
            guard let owner = try ClientRepository().find(id: grant.clientID, on: connection) else { return false }
            return owner.isFirstParty && !owner.isConfidential
        }
    }
}
