import LatchkeyJSON
import LatchkeyStore

extension SecondFactors {
    /// The user's second factors as domain values, for the account profile.
    ///
    /// A bridge over ``SecondFactors/list(userID:dialect:on:)``, which still answers their JSON
    /// form: once Factors' list returns `[SecondFactorOption]` itself, ``AccountService`` calls
    /// it directly and this file goes.
    static func options(userID: String, database: any SQLDatabase, on connection: any SQLConnection) throws -> [SecondFactorOption] {
        try list(userID: userID, dialect: database.dialect, on: connection).map { factor in
            switch factor["type"]?.stringValue {
            case "device_key"?:
                guard let id = factor["id"]?.stringValue, let label = factor["label"]?.stringValue else {
                    throw StoreError.typeMismatch("a listed device key has no id or label")
                }
                return .deviceKey(id: id, label: label)
            case "totp"?: return .totp
            case "recovery_code"?: return .recoveryCode
            default: throw StoreError.typeMismatch("a listed second factor has an unknown type")
            }
        }
    }
}
