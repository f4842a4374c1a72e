import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyWire

/// The accounts and passwords domain's values in their wire form, and the reading of their
/// request bodies.

extension WireIdentity {
    init(_ identity: AccountIdentity) {
        self.init(provider: identity.provider, email: identity.email, username: identity.username, createdAt: WireTimestamp(identity.createdAt))
    }
}

extension WireAccount {
    init(_ profile: AccountProfile) {
        self.init(
            user: WireUser(profile.user), username: profile.username, identities: profile.identities.map(WireIdentity.init),
            factors: profile.factors.map(WireFactor.init))
    }
}

extension HTTPRequest {
    /// The JSON body read as `Model`; a body that is not JSON, not an object, or has a member
    /// missing or mistyped is 400 `invalid_request` naming it (`username is required`).
    func wireBody<Model: WireDecodable>(_ type: Model.Type = Model.self) throws -> Model {
        let json = try jsonBody()
        do {
            return try Model(json: json)
        } catch {
            throw HTTPError.invalidRequest(error.description)
        }
    }
}
