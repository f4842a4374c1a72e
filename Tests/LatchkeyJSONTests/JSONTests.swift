import LatchkeyJSON
import LatchkeyTestSupport
import Testing

@Suite("Strict JSON")
struct JSONTests {
    @Test("parses every JSON type")
    func parsesTypes() throws {
        let value = try JSONValue(parsing: #" {"a": [1, -2.5e3, true, false, null], "b": {"c": "d\u00e9\n\ud83d\ude00"}} "#)
        #expect(value["a"] == [1, -2500, true, false, nil])
        #expect(value["b"]?["c"]?.stringValue == "dé\n😀")
    }

    @Test("S2: a duplicate member name is refused")
    func s2DuplicateNames() {
        #expect(throws: JSONError(code: .duplicateName, offset: 0)) { try JSONValue(parsing: #"{"alg":"ES256","alg":"none"}"#) }
        #expect(throws: JSONError(code: .duplicateName, offset: 0)) { try JSONValue(parsing: #"{"a":{"x":1,"x":1}}"#) }
    }

    @Test("S2: invalid UTF-8 and lone surrogates are refused")
    func s2InvalidUnicode() {
        let invalid: [[UInt8]] = [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
        ]
        for bytes in invalid {
            #expect(throws: JSONError(code: .invalidUnicode, offset: 0)) { try JSONValue(parsing: bytes) }
        }
        #expect(throws: JSONError(code: .invalidUnicode, offset: 0)) { try JSONValue(parsing: #""\ud800""#) }
        #expect(throws: JSONError(code: .invalidUnicode, offset: 0)) { try JSONValue(parsing: #""\ud800\u0041""#) }
    }

    @Test("malformed JSON is refused", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity", "tru", "nulls",
        "{\"a\" 1}", "{a:1}", "'x'", "\"\\x\"", "\"\\u12\"", "\"tab\there\"", "1 2", "[1 2]", "\u{FEFF}{}",
    ])
    func malformed(text: String) {
        #expect(throws: JSONError.self) { try JSONValue(parsing: text) }
    }

    @Test("numbers beyond a Double are refused")
    func numberRange() {
        #expect(throws: JSONError(code: .numberOutOfRange, offset: 0)) { try JSONValue(parsing: "1e400") }
    }

    @Test("nesting beyond the limit is refused without exhausting the stack")
    func depthLimit() throws {
        _ = try JSONValue(parsing: String(repeating: "[", count: 32) + String(repeating: "]", count: 32))
        #expect(throws: JSONError(code: .tooDeep, offset: 0)) {
            try JSONValue(parsing: String(repeating: "[", count: 33) + String(repeating: "]", count: 33))
        }
        #expect(throws: JSONError(code: .tooDeep, offset: 0)) {
            try JSONValue(parsing: String(repeating: "{\"a\":", count: 100_000))
        }
    }

    @Test("serialization is compact with sorted names and round-trips")
    func serialization() throws {
        let value: JSONValue = ["z": 1, "a": ["x\"\\\n\u{1}", 1.5, -3, true, nil], "m": ["k": 1_700_000_000]]
        #expect(value.serializedString == #"{"a":["x\"\\\n\u0001",1.5,-3,true,null],"m":{"k":1700000000},"z":1}"#)
        #expect(try JSONValue(parsing: value.serialized) == value)
    }

    @Test("hostile input: 100,000 mutations of a JOSE header never crash or hang")
    func mutations() {
        let seed = Array(#"{"alg":"ES256","kid":"k1","typ":"at+jwt","n":[1,2.5e-3,{"x":null}],"s":"\u00e9\ud83d\ude00"}"#.utf8)
        var mutator = Mutator(seed: 2)
        var parsed = 0
        for _ in 0..<100_000 {
            let input = mutator.mutate(seed)
            if (try? JSONValue(parsing: input)) != nil { parsed += 1 }
        }
        #expect(parsed > 0 && parsed < 100_000, "mutations both kept and broke validity (\(parsed) parsed)")
    }
}
