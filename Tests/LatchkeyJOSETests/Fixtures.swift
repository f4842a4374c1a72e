import LatchkeyJSON
import LatchkeyTestSupport

/// This target's `Fixtures/` folder.
let fixtures = Fixtures(bundle: .module)

/// Any JSON value read through `Decodable`, for fixture fields whose shape varies.
struct AnyJSON: Decodable {
    var value: JSONValue

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = .null
        } else if let bool = try? container.decode(Bool.self) {
            value = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            value = .number(number)
        } else if let string = try? container.decode(String.self) {
            value = .string(string)
        } else if let array = try? container.decode([AnyJSON].self) {
            value = .array(array.map(\.value))
        } else {
            value = .object(try container.decode([String: AnyJSON].self).mapValues(\.value))
        }
    }
}
