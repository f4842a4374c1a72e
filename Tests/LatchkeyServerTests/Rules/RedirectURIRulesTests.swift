import Foundation
@testable import LatchkeyServer
import Testing

/// The S20 redirect-URI rules (``RedirectURI``) on the edge cases "Redirect URIs"
/// (OAuthClientTests.swift) leaves out: IPv6 and numeric loopback forms, ports, queries,
/// percent-encoding, private-use schemes, lengths, and matching with a port or a query.
@Suite("Redirect URI rules")
struct RedirectURIRulesTests {
    /// URIs every client may register (`confidentialToo`), or public clients alone.
    static let accepted: [(uri: String, confidentialToo: Bool)] = [
        ("http://127.0.0.1:1/cb", true),
        ("http://127.0.0.1:65535", true),
        ("http://[::1]:65535/cb", true),
        ("http://127.0.0.1?x=1", true),
        ("http://[::1]?x=1", true),
        ("https://127.0.0.1/cb", true),
        ("https://[::1]:8443/cb", true),
        ("https://app.example:443/cb", true),
        ("https://app.example?x", true),
        ("https://app.example/cb?a=1&b=2", true),
        ("https://app.example/cb?next=https://other.example/x", true),
        ("https://app.example/cb?email=ada@other.example", true),
        ("https://app.example/cb?x=%40%2F", true),
        ("https://app.example/caf%C3%A9", true),
        ("https://xn--caf-dma.example/cb", true),
        ("https://app.example/" + String(repeating: "a", count: RedirectURI.maximumLength - 20), true),
        ("com.example.app:/oauth/cb?x=1", false),
        ("com.example.app+dev:/cb", false),
        ("com.example-app.ios:/cb", false),
        ("com.example.app://callback", false),
        ("com.example.app://callback:8080/cb", false),
    ]

    @Test("S20: loopback ports 1 to 65535, queries, percent-encoding outside the host, punycode and 2000 bytes are accepted; private-use schemes for public clients only", arguments: accepted)
    func acceptedS20(_ row: (uri: String, confidentialToo: Bool)) throws {
        try RedirectURI.validate(row.uri, confidential: false)
        if row.confidentialToo {
            try RedirectURI.validate(row.uri, confidential: true)
        } else {
            let error = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(row.uri, confidential: true) }
            #expect(error?.message.contains("public (native) clients") == true, "\(error?.message ?? "")")
        }
    }

    /// URIs no client may register, and a word the refusal must say.
    static let refused: [(uri: String, rule: String)] = [
        // IPv6 and other spellings of the loopback address: only 127.0.0.1 and [::1] as written.
        ("http://[0:0:0:0:0:0:0:1]/cb", "loopback"),
        ("http://[::ffff:127.0.0.1]/cb", "loopback"),
        ("http://[::1/cb", "closing ]"),
        ("http://[::1]x/cb", "unexpected characters after the IPv6 address"),
        ("http://[::1]@evil.example/cb", "userinfo"),
        ("http://127.1/cb", "loopback"),
        ("http://2130706433/cb", "loopback"),
        ("http://0x7f000001/cb", "loopback"),
        ("http://0.0.0.0/cb", "loopback"),
        ("http://127.0.0.10/cb", "loopback"),
        // Ports: decimal 1 to 65535, no leading zero, no sign, one of them.
        ("http://[::1]:0/cb", "port"),
        ("http://[::1]:/cb", "port"),
        ("http://[::1]:65536/cb", "port"),
        ("http://127.0.0.1:08080/cb", "port"),
        ("http://127.0.0.1:+80/cb", "port"),
        ("http://127.0.0.1:8080:9090/cb", "port"),
        ("http://127.0.0.1:99999/cb", "port"),
        ("https://app.example:0/cb", "port"),
        ("https://app.example:443443/cb", "port"),
        // Percent-encoding in the host or port, whatever it decodes to.
        ("https://app%2Eexample/cb", "percent-encoding"),
        ("https://app.example:%34%34%33/cb", "percent-encoding"),
        // localhost with a trailing dot or as a parent domain, in any case.
        ("https://localhost./cb", "localhost"),
        ("https://api.LOCALHOST/cb", "localhost"),
        ("https://app.localhost.:8443/cb", "localhost"),
        // Empty hosts and bare schemes.
        ("https://", "host"),
        ("https://:443/cb", "host"),
        ("https://?x=1", "host"),
        ("http://:8080/cb", "host"),
        ("https:", "more than a scheme"),
        // Characters refused anywhere, query included.
        ("https://app.example/cb\t", "control"),
        ("https://app.example/\u{7F}", "control"),
        ("https://app.example/cb?x=\u{e9}", "non-ASCII"),
        ("https://app.example/cb?x=*", "wildcard"),
        ("https://app.example/cb?x=#", "fragment"),
        // Schemes: lowercase, reverse-DNS with a dot for private use, no other web schemes.
        ("ftp://app.example/cb", "reverse-DNS"),
        ("ws://127.0.0.1/cb", "reverse-DNS"),
        ("urn:ietf:wg:oauth:2.0:oob", "reverse-DNS"),
        ("com-example:/cb", "reverse-DNS"),
        ("com.example.:/cb", "reverse-DNS"),
        ("1com.example:/cb", "scheme"),
        ("com.example_app:/cb", "scheme"),
        ("Com.example.app:/cb", "lowercase"),
        ("Https://app.example/cb", "lowercase"),
        ("com.example.app://user@host/cb", "userinfo"),
        ("com.example.app://%6Cocalhost/cb", "percent-encoding"),
        // One byte over the limit.
        ("https://app.example/" + String(repeating: "a", count: RedirectURI.maximumLength - 19), "longer than 2000 bytes"),
    ]

    @Test("S20: other loopback spellings, bad ports, percent-encoded hosts, localhost in all forms, empty hosts, and over-long URIs are refused, naming the rule", arguments: refused)
    func refusedS20(_ row: (uri: String, rule: String)) {
        for confidential in [false, true] {
            let error = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(row.uri, confidential: confidential) }
            #expect(error?.message.contains(row.rule) == true, "\(row.uri.prefix(60)): \(error?.message.prefix(300) ?? "")")
        }
    }

    /// A private-use scheme with an authority: localhost is refused to public clients, and a
    /// confidential client hears first that the scheme is not for it.
    static let byClientKind: [(uri: String, publicRule: String, confidentialRule: String)] = [
        ("com.example.app://localhost/cb", "localhost", "public (native) clients"),
        ("com.example.app://LOCALHOST:8080/cb", "localhost", "public (native) clients"),
        ("com.example.app://api.localhost/cb", "localhost", "public (native) clients"),
    ]

    @Test("S20: localhost is refused after a private-use scheme too", arguments: byClientKind)
    func privateUseLocalhostS20(_ row: (uri: String, publicRule: String, confidentialRule: String)) {
        let asPublic = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(row.uri, confidential: false) }
        #expect(asPublic?.message.contains(row.publicRule) == true, "\(asPublic?.message ?? "")")
        let asConfidential = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(row.uri, confidential: true) }
        #expect(asConfidential?.message.contains(row.confidentialRule) == true, "\(asConfidential?.message ?? "")")
    }

    @Test("S20: a refusal quotes at most 200 characters of the URI")
    func refusalQuotesAPrefix() {
        let uri = "https://app.example/" + String(repeating: "a", count: 3000)
        let error = #expect(throws: AuthError.invalidRequest("")) { try RedirectURI.validate(uri, confidential: false) }
        let message = error?.message ?? ""
        #expect(message.contains(String(uri.prefix(200)) + "…"))
        #expect(!message.contains(String(uri.prefix(201))))
    }

    /// A registered URI, a presented one, and whether they match.
    static let matching: [(registered: String, presented: String, matches: Bool)] = [
        // Any port keeps the path and the query exactly.
        ("http://127.0.0.1/cb?x=1", "http://127.0.0.1:5000/cb?x=1", true),
        ("http://127.0.0.1/cb?x=1", "http://127.0.0.1:5000/cb?x=2", false),
        ("http://127.0.0.1/cb?x=1", "http://127.0.0.1:5000/cb", false),
        ("http://127.0.0.1?x=1", "http://127.0.0.1:80?x=1", true),
        ("http://127.0.0.1/cb", "http://127.0.0.1:8080/cb?", false),
        ("http://[::1]/cb", "http://[::1]:65535/cb", true),
        ("http://[::1]/cb", "http://[::1]:1/cb", true),
        // Ports are ASCII decimal 1 to 65535, without a leading zero.
        ("http://[::1]/cb", "http://[0:0:0:0:0:0:0:1]:8080/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1:\u{FF18}\u{FF10}/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1:\u{0668}\u{0660}/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1:00080/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1:123456/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1:+80/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.10/cb", false),
        ("http://127.0.0.1/cb", "http://127.0.0.1.evil.example:80/cb", false),
        // A registered port, https, and private-use schemes match exactly only.
        ("http://127.0.0.1:8080/cb", "http://127.0.0.1:8080/cb", true),
        ("http://127.0.0.1:8080/cb", "http://127.0.0.1:8080:9090/cb", false),
        ("https://127.0.0.1/cb", "https://127.0.0.1:8443/cb", false),
        ("https://[::1]/cb", "https://[::1]:8443/cb", false),
        ("com.example.app:/cb", "com.example.app:/cb", true),
        ("com.example.app:/cb", "com.example.app:/cb?x=1", false),
        ("https://app.example/cb?x=1", "https://app.example/cb?x=1", true),
        ("https://app.example/cb?x=1", "https://app.example/cb?x=1&x=1", false),
        ("https://app.example/cb?a=1&b=2", "https://app.example/cb?b=2&a=1", false),
    ]

    @Test("S20: matching keeps the path and query exact, gives any port to unported loopback URIs alone, and takes ASCII decimal ports only", arguments: matching)
    func matchingS20(_ row: (registered: String, presented: String, matches: Bool)) {
        #expect(RedirectURI.matches(registered: row.registered, presented: row.presented) == row.matches)
        let client = OAuthClient(
            id: "cl_x", name: "X", isConfidential: false, isFirstParty: false, redirectURIs: ["https://other.example/cb", row.registered],
            postLogoutRedirectURIs: [row.registered], grantTypes: [.authorizationCode], scopes: ["openid"], idTokenAlgorithm: "RS256",
            createdAt: .init(timeIntervalSince1970: 0))
        #expect(client.acceptsRedirectURI(row.presented) == row.matches, "the client matches against each registered URI")
        #expect(client.acceptsPostLogoutRedirectURI(row.presented) == row.matches, "post-logout URIs follow the same rule")
    }
}
