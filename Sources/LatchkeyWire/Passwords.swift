public import LatchkeyJSON

/// The body of `POST /v1/auth/password/signup`: `{username, password, given_name?, family_name?}`.
///
/// The password travels as typed; the server normalises it and judges its length.
public struct WirePasswordSignUpRequest: WireCodable, Hashable {
    public var username: String
    public var password: String
    public var givenName: String?
    public var familyName: String?

    public init(username: String, password: String, givenName: String? = nil, familyName: String? = nil) {
        self.username = username
        self.password = password
        self.givenName = givenName
        self.familyName = familyName
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["username": .string(username), "password": .string(password)]
        if let givenName { members["given_name"] = .string(givenName) }
        if let familyName { members["family_name"] = .string(familyName) }
        return .object(members)
    }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(
            username: try object.string("username"), password: try object.string("password"),
            givenName: try object.optionalString("given_name"), familyName: try object.optionalString("family_name"))
    }
}

/// The body of `POST /v1/auth/password/login`: `{username, password}`.
public struct WirePasswordLoginRequest: WireCodable, Hashable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    public var json: JSONValue { ["username": .string(username), "password": .string(password)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(username: try object.string("username"), password: try object.string("password"))
    }
}

/// The body of `POST /v1/auth/password/change`: `{current_password, new_password}`.
public struct WirePasswordChangeRequest: WireCodable, Hashable {
    public var currentPassword: String
    public var newPassword: String

    public init(currentPassword: String, newPassword: String) {
        self.currentPassword = currentPassword
        self.newPassword = newPassword
    }

    public var json: JSONValue { ["current_password": .string(currentPassword), "new_password": .string(newPassword)] }

    public init(json: JSONValue) throws(WireDecodingError) {
        let object = try WireObject(json)
        self.init(currentPassword: try object.string("current_password"), newPassword: try object.string("new_password"))
    }
}
