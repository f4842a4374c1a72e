public import LatchkeyJSON

/// The body that starts an email flow: `{email}`, and for a sign-in `{email, create?}`
/// (`POST /v1/auth/password/reset`, `/v1/auth/email/start`, `/v1/me/email`).
public struct WireEmailRequest: WireCodable, Hashable {
    public var email: String
    /// For a sign-in: whether confirming may create the account.
    public var create: Bool?

    public init(email: String, create: Bool? = nil) {
        self.email = email
        self.create = create
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["email": .string(email)]
        if let create { members["create"] = .bool(create) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(email: try object.string("email"), create: try object.optionalBool("create"))
    }
}

/// The 202 answer of every request that mails a link and a code: `{flow_id, expires_in}`, the
/// same whether or not the address has an account.
public struct WireEmailFlowStarted: WireCodable, Hashable {
    /// Names the flow when confirming with the code.
    public var flowID: String
    /// Seconds the link and code stay good.
    public var expiresIn: Int

    public init(flowID: String, expiresIn: Int) {
        self.flowID = flowID
        self.expiresIn = expiresIn
    }

    public var json: JSONValue { ["flow_id": .string(flowID), "expires_in": .integer(expiresIn)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(flowID: try object.string("flow_id"), expiresIn: try object.int("expires_in"))
    }
}

/// The body that confirms an email flow: the link's `{token}`, or `{flow_id, code}`; a reset
/// adds `{password}`.
public struct WireEmailConfirmation: WireCodable, Hashable {
    /// How the flow is proved.
    public enum Proof: Hashable, Sendable {
        case token(String)
        case code(flowID: String, code: String)
    }

    public var proof: Proof
    /// For a reset: the new password.
    public var password: String?

    public init(proof: Proof, password: String? = nil) {
        self.proof = proof
        self.password = password
    }

    public var json: JSONValue {
        var members: [String: JSONValue]
        switch proof {
        case .token(let token): members = ["token": .string(token)]
        case .code(let flowID, let code): members = ["flow_id": .string(flowID), "code": .string(code)]
        }
        if let password { members["password"] = .string(password) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        let token = try object.optionalString("token")
        let flowID = try object.optionalString("flow_id")
        let code = try object.optionalString("code")
        let proof: Proof
        switch (token, flowID, code) {
        case (let token?, nil, nil): proof = .token(token)
        case (nil, let flowID?, let code?): proof = .code(flowID: flowID, code: code)
        default: throw WireDecodingError(code: .invalid, path: "", expectation: "must hold either token, or flow_id and code")
        }
        self.init(proof: proof, password: try object.optionalString("password"))
    }
}
