import Foundation
import LatchkeyHTTP
import Testing

@Suite("Set-Cookie building and Cookie parsing (RFC 6265)")
struct CookieTests {
    @Test("RFC 6265 §3.1's examples are built attribute for attribute")
    func rfcExamples() throws {
        let session = try SetCookie(name: "SID", value: "31d4d96e407aad42", path: "/", domain: "example.com", secure: false, httpOnly: false, sameSite: nil)
        #expect(session.fieldValue == "SID=31d4d96e407aad42; Path=/; Domain=example.com")
        let secure = try SetCookie(name: "SID", value: "31d4d96e407aad42", path: "/", secure: true, httpOnly: true, sameSite: nil)
        #expect(secure.fieldValue == "SID=31d4d96e407aad42; Path=/; Secure; HttpOnly")
        let expiring = try SetCookie(
            name: "lang", value: "en-US", path: nil, expires: Date(timeIntervalSince1970: 1_623_233_894), secure: false, httpOnly: false,
            sameSite: nil)
        #expect(expiring.fieldValue == "lang=en-US; Expires=Wed, 09 Jun 2021 10:18:14 GMT")
        // RFC 6265 §4.1.1 allows one pair of double quotes around the value.
        #expect(try SetCookie(name: "q", value: #""quoted""#, sameSite: nil).fieldValue.hasPrefix(#"q="quoted"; Path=/"#))
    }

    @Test("S29: the defaults suit a hosted page's session: Path=/, Secure, HttpOnly, SameSite=Lax; Max-Age and SameSite values")
    func defaults() throws {
        #expect(try SetCookie(name: "__Host-session", value: "abc").fieldValue == "__Host-session=abc; Path=/; Secure; HttpOnly; SameSite=Lax")
        #expect(try SetCookie(name: "a", value: "b", maxAge: 600, sameSite: .strict).fieldValue == "a=b; Path=/; Max-Age=600; Secure; HttpOnly; SameSite=Strict")
        #expect(try SetCookie(name: "a", value: "b", sameSite: SetCookie.SameSite.none).fieldValue.hasSuffix("; Secure; HttpOnly; SameSite=None"))
        let expired = try SetCookie.expired(name: "__Host-session")
        #expect(expired.fieldValue == "__Host-session=; Path=/; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Secure; HttpOnly; SameSite=Lax")
        var response = HTTPResponse.empty()
        response.setCookie(try SetCookie(name: "a", value: "1"))
        response.setCookie(try SetCookie(name: "b", value: "2"))
        #expect(response.headers.values("Set-Cookie") == ["a=1; Path=/; Secure; HttpOnly; SameSite=Lax", "b=2; Path=/; Secure; HttpOnly; SameSite=Lax"])
    }

    @Test("S29: the __Host- and __Secure- prefixes are enforced: Secure, Path=/, no Domain", arguments: [
        ("__Host-s", false, "/", nil as String?),
        ("__Host-s", true, "/account", nil),
        ("__Host-s", true, nil, nil),
        ("__Host-s", true, "/", "example.com"),
        ("__host-s", true, "/", "example.com"),
        ("__Secure-s", false, "/", nil),
    ])
    func prefixes(name: String, secure: Bool, path: String?, domain: String?) {
        #expect(throws: CookieError(.prefixViolation, "")) {
            try SetCookie(name: name, value: "v", path: path, domain: domain, secure: secure, sameSite: nil)
        }
    }

    @Test("S24: nothing a caller passes can add an attribute or a second cookie", arguments: [
        ("a", "x; Domain=evil.example", CookieError.Code.invalidValue),
        ("a", "x\r\nSet-Cookie: b=c", .invalidValue),
        ("a", "two words", .invalidValue),
        ("a", "comma,separated", .invalidValue),
        ("a", #"back\slash"#, .invalidValue),
        ("a", "é", .invalidValue),
        ("a=b", "c", .invalidName),
        ("", "c", .invalidName),
        ("na me", "c", .invalidName),
        ("a;", "c", .invalidName),
    ])
    func hostileValues(name: String, value: String, code: CookieError.Code) {
        #expect(throws: CookieError(code, "")) { try SetCookie(name: name, value: value) }
    }

    @Test("S24: Path, Domain and Max-Age are checked; SameSite=None needs Secure")
    func attributes() {
        #expect(throws: CookieError(.invalidAttribute, "")) { try SetCookie(name: "a", value: "b", path: "/x; Secure") }
        #expect(throws: CookieError(.invalidAttribute, "")) { try SetCookie(name: "a", value: "b", path: "relative") }
        #expect(throws: CookieError(.invalidAttribute, "")) { try SetCookie(name: "a", value: "b", domain: "example.com; Path=/") }
        #expect(throws: CookieError(.invalidAttribute, "")) { try SetCookie(name: "a", value: "b", maxAge: -1) }
        #expect(throws: CookieError(.prefixViolation, "")) { try SetCookie(name: "a", value: "b", secure: false, sameSite: SetCookie.SameSite.none) }
    }

    @Test("Cookie fields are parsed as RFC 6265 §5.4 sends them, tolerating spaces, quotes and several fields")
    func parsing() {
        let cookies = Cookies(headers: ["Cookie": "SID=31d4d96e407aad42; lang=en-US"])
        #expect(cookies["SID"] == "31d4d96e407aad42")
        #expect(cookies["lang"] == "en-US")
        #expect(cookies["sid"] == nil)
        #expect(cookies.count == 2)
        let loose = Cookies(headers: HTTPHeaders([("Cookie", " a = 1 ;b=\"two\";;  c=  "), ("Cookie", "d=4=4")]))
        #expect(loose.all == ["a": "1", "b": "two", "c": "", "d": "4=4"])
        let request = HTTPRequest(method: .get, path: "/", headers: ["Cookie": "__Host-session=abc"])
        #expect(request.cookies["__Host-session"] == "abc")
        #expect(HTTPRequest(method: .get, path: "/").cookies.count == 0)
    }

    @Test("S24: a repeated name keeps its first value, the most specific path's (RFC 6265 §5.4 step 2)")
    func firstValueWins() {
        let cookies = Cookies(headers: HTTPHeaders([("Cookie", "session=page; session=injected"), ("Cookie", "session=later")]))
        #expect(cookies["session"] == "page")
    }

    @Test("S24: hostile Cookie fields are skipped pair by pair, never fatal", arguments: [
        "=novalue; a=1",
        "justtext; a=1",
        "bad name=x; a=1",
        "b=\u{01}ctl; a=1",
        "b=del\u{7F}; a=1",
        "\"q\"=x; a=1",
        ";;;; a=1 ;;;;",
        "a=1; (=2; )=3",
    ])
    func hostileParsing(field: String) {
        let cookies = Cookies(headers: ["Cookie": field])
        #expect(cookies.all == ["a": "1"])
    }

    @Test("S24: a huge or empty Cookie field parses without trouble")
    func hugeField() {
        let field = (0..<2000).map { "c\($0)=\($0)" }.joined(separator: "; ")
        let cookies = Cookies(headers: ["Cookie": field])
        #expect(cookies.count == 2000)
        #expect(cookies["c1999"] == "1999")
        #expect(Cookies(headers: ["Cookie": ""]).count == 0)
    }
}
