public import LatchkeyJSON

/// One consent a user gave a third-party client, as `GET /v1/grants` lists it.
public struct WireGrant: WireCodable, Hashable {
    /// The client's `client_id`.
    public var clientID: String
    /// The client's name, as the consent page showed it.
    public var clientName: String
    /// The scopes the user consented to, sorted.
    public var scopes: [String]
    /// When the user first consented to the client.
    public var grantedAt: WireTimestamp
    /// When the consent last grew by a scope.
    public var updatedAt: WireTimestamp

    public init(clientID: String, clientName: String, scopes: [String], grantedAt: WireTimestamp, updatedAt: WireTimestamp) {
        self.clientID = clientID
        self.clientName = clientName
        self.scopes = scopes
        self.grantedAt = grantedAt
        self.updatedAt = updatedAt
    }

    public var json: JSONValue {
        [
            "client_id": .string(clientID), "client_name": .string(clientName), "scopes": .array(scopes.map(JSONValue.string)),
            "granted_at": .string(grantedAt.rfc3339), "updated_at": .string(updatedAt.rfc3339),
        ]
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            clientID: try object.string("client_id"), clientName: try object.string("client_name"), scopes: try object.strings("scopes"),
            grantedAt: try object.timestamp("granted_at"), updatedAt: try object.timestamp("updated_at"))
    }
}

/// The body of `GET /v1/grants`: the caller's consents to third-party clients, oldest first.
public struct WireGrantList: WireCodable, Hashable {
    public var grants: [WireGrant]

    public init(grants: [WireGrant]) {
        self.grants = grants
    }

    public var json: JSONValue { ["grants": .array(grants.map(\.json))] }

    public init(json: JSONValue) throws(WireDecodingError) {
        self.init(grants: try WireObject(json).models("grants"))
    }
}
