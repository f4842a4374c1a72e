import Foundation
import LatchkeyCrypto
import LatchkeyHTTP
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// The device authorization grant (RFC 8628) over HTTP: the TV's side with a plain HTTP client
/// at `/oauth/device_authorization` and `/oauth/token`, the phone's side through `/device`, the
/// hosted sign-in and the device consent page, and what each step leaves in the database and the
/// audit log. Time moves on the test clock, never by sleeping. The walk in headless Chromium, with
/// a second factor, is ``chromiumWalkS44S46()``.
@Suite("Device authorization grant (RFC 8628)")
struct DeviceGrantTests {
    static let grantType = OAuthClient.GrantType.deviceCode.rawValue
    static let userCodeLetters = Set("BCDFGHJKLMNPQRSTVWXZ")

    /// A server with a password user and a public TV client registered for the device grant.
    static func with<T>(
        _ configure: (inout Configuration) -> Void = { _ in },
        _ body: (TestServer, TestOAuthClient, String) async throws -> T
    ) async throws -> T {
        try await TestServer.with(configure) { server in
            let client = try await registerTV(server)
            let (userID, _) = try await server.passwordUser()
            return try await body(server, client, userID)
        }
    }

    /// A public client of the device grant (no redirect URI), as `clients add --grant device_code` makes it.
    static func registerTV(_ server: TestServer, name: String = "Living Room TV", firstParty: Bool = false) async throws -> TestOAuthClient {
        let clients = ClientService(database: server.database, clock: { server.clock.now })
        let (client, _) = try await clients.register(
            ClientRegistration(name: name, redirectURIs: [], firstParty: firstParty, grantTypes: [.deviceCode, .refreshToken]))
        return TestOAuthClient(id: client.id, secret: nil, redirectURI: "")
    }

    /// `POST /oauth/device_authorization` as `client`.
    static func begin(_ server: TestServer, _ client: TestOAuthClient, scope: String? = "openid profile offline_access") async throws -> TestResponse {
        var fields: [String: String] = [:]
        if let scope { fields["scope"] = scope }
        return try await server.tokenRequest(fields, as: client, at: "/oauth/device_authorization")
    }

    /// A device authorization that must succeed.
    static func codes(_ server: TestServer, _ client: TestOAuthClient, scope: String = "openid profile offline_access") async throws
        -> WireDeviceAuthorizationResponse
    {
        let response = try await begin(server, client, scope: scope)
        #expect(response.status == 200, "\(response.text)")
        return try WireDeviceAuthorizationResponse(parsing: response.body)
    }

    /// One poll of the token endpoint as `client`.
    static func poll(_ server: TestServer, _ deviceCode: String, as client: TestOAuthClient) async throws -> TestResponse {
        try await server.tokenRequest(["grant_type": grantType, "device_code": deviceCode], as: client)
    }

    /// The device authorization row of a device code, by its hash.
    static func row(_ server: TestServer, deviceCode: String) async throws -> SQLRow? {
        try await server.database.read {
            try $0.queryOne("SELECT * FROM device_authorizations WHERE device_code_hash = ?", [.blob(HashFunction.sha256.hash(Array(deviceCode.utf8)))])
        }
    }

    static func audit(_ server: TestServer, event: String) async throws -> [AuditLog.Entry] {
        try await AuditLog(database: server.database).entries(event: event, limit: 1000)
    }

    /// The phone in a plain HTTP client that keeps cookies: `/device` with `typed`, the password
    /// sign-in, and the device consent page answered with `decision`; returns the last page.
    static func answer(
        _ server: TestServer, typed: String, decision: String, browser: OAuthBrowser? = nil
    ) async throws -> (page: TestResponse, consent: TestResponse) {
        let browser = browser ?? OAuthBrowser(server)
        let codePage = try await browser.send("/device")
        #expect(codePage.status == 200 && codePage.text.contains("Sign in a device"))
        var page = try await browser.submit(codePage, ["user_code": typed])
        if page.text.contains(#"name="password""#) {
            #expect(page.text.contains("Living Room TV"), "the sign-in page names the client")
            page = try await browser.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
        }
        let consent = page
        #expect(consent.text.contains("A device is asking to sign in to Living Room TV"), "\(consent.text.prefix(600))")
        return (try await browser.submit(consent, ["decision": decision]), consent)
    }

    // MARK: Issue

    @Test("S44: the device authorization answers RFC 8628 §3.2's members; the device code (256 bits) and user code are stored only as hashes; audited")
    func issueS44() async throws {
        try await Self.with { server, client, _ in
            let response = try await Self.begin(server, client)
            #expect(response.status == 200)
            #expect(response.headers["Cache-Control"] == "no-store")
            let json = try response.json
            #expect(Set(json.objectValue?.keys.map { $0 } ?? []) == [
                "device_code", "user_code", "verification_uri", "verification_uri_complete", "expires_in", "interval",
            ])
            let codes = try WireDeviceAuthorizationResponse(parsing: response.body)
            #expect(Base64URL.decode(codes.deviceCode)?.count == 32)
            let letters = codes.userCode.replacingOccurrences(of: "-", with: "")
            #expect(codes.userCode.count == 9 && Array(codes.userCode)[4] == "-")
            #expect(letters.count == 8 && letters.allSatisfy(Self.userCodeLetters.contains), "\(codes.userCode)")
            #expect(codes.verificationURI == server.baseURL + "/device")
            #expect(codes.verificationURIComplete == server.baseURL + "/device?user_code=" + codes.userCode)
            #expect(codes.expiresIn == 600 && codes.interval == 5)

            let row = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            #expect(try row.string("status") == "pending" && row.string("client_id") == client.id)
            #expect(try row.string("scope") == "offline_access openid profile")
            #expect(try row.blob("user_code_hash") == HashFunction.sha256.hash(Array(letters.utf8)))
            #expect(try row.date("expires_at") == Date(timeIntervalSince1970: (server.clock.now.timeIntervalSince1970 + 600).rounded(.down)))
            let everything = try await server.database.read { try $0.query("SELECT * FROM device_authorizations", []) }
            #expect(!"\(everything)".contains(codes.deviceCode) && !"\(everything)".contains(letters))
            let issued = try await Self.audit(server, event: "device_grant.issued")
            #expect(issued.count == 1 && issued.first?.details == ["client_id": client.id, "scope": "offline_access openid profile"])

            // Each authorization has codes of its own.
            let second = try await Self.codes(server, client)
            #expect(second.deviceCode != codes.deviceCode && second.userCode != codes.userCode)
        }
    }

    @Test("S44: refused device authorizations: a client not registered for the grant, an unknown client, no scope, a scope the client may not have, a secret from a public client")
    func issueRefusalsS44() async throws {
        try await Self.with { server, tv, _ in
            let web = try await server.registerClient()
            let notForDevices = try await Self.begin(server, web)
            #expect(notForDevices.status == 400 && notForDevices.oauthError == "unauthorized_client")
            let unknown = try await Self.begin(server, TestOAuthClient(id: "cl_unknownunknownunknown", secret: nil, redirectURI: ""))
            #expect(unknown.status == 401 && unknown.oauthError == "invalid_client")
            let noScope = try await Self.begin(server, tv, scope: nil)
            #expect(noScope.status == 400 && noScope.oauthError == "invalid_scope")
            let notAllowed = try await Self.begin(server, tv, scope: "openid admin")
            #expect(notAllowed.status == 400 && notAllowed.oauthError == "invalid_scope")
            let withSecret = try await server.tokenRequest(
                ["client_id": tv.id, "client_secret": "guess", "scope": "openid"], as: TestOAuthClient(id: tv.id, secret: nil, redirectURI: ""),
                at: "/oauth/device_authorization")
            #expect(withSecret.status == 401 && withSecret.oauthError == "invalid_client")
            let long = try await Self.begin(server, tv, scope: "openid " + String(repeating: "a", count: 30_000))
            #expect(long.status == 400 && long.oauthError == "invalid_scope")
            let rows = try await server.database.read { try $0.queryOne("SELECT count(*) AS n FROM device_authorizations", [])?.int("n") }
            #expect(rows == 0)
        }
    }

    // MARK: Approve, deny, expire

    @Test("S44 S46: pending until the user approves on /device (code typed in lower case without the dash); then the tokens, with an ID token and a refresh token, exactly once; audited")
    func approveRedeemsOnceS44S46() async throws {
        try await Self.with { server, client, userID in
            let codes = try await Self.codes(server, client)
            let pending = try await Self.poll(server, codes.deviceCode, as: client)
            #expect(pending.status == 400 && pending.oauthError == "authorization_pending")
            #expect(pending.headers["Cache-Control"] == "no-store")

            let typed = codes.userCode.replacingOccurrences(of: "-", with: "").lowercased()
            let (done, _) = try await Self.answer(server, typed: typed, decision: "allow")
            #expect(done.status == 200 && done.text.contains("Your device is signed in"))
            let approved = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            #expect(try approved.string("status") == "approved" && approved.optionalString("user_id") == userID)

            server.clock.advance(by: 5)
            let tokens = try await Self.poll(server, codes.deviceCode, as: client)
            #expect(tokens.status == 200, "\(tokens.text)")
            let issued = try tokens.oauthTokens
            #expect(issued.scope == "offline_access openid profile" && issued.refreshToken != nil)
            let idToken = try Insecure.unverifiedContents(of: try #require(issued.idToken)).claims
            #expect(idToken["sub"]?.stringValue == userID && idToken["aud"]?.stringValue == client.id)
            #expect(idToken["amr"] == ["pwd"])
            let userinfo = try await server.request(.get, "/oauth/userinfo", headers: ["Authorization": "Bearer \(issued.accessToken)"])
            #expect(try userinfo.status == 200 && userinfo.json["sub"]?.stringValue == userID)
            // The refresh token works as any grant's does.
            let refreshed = try await server.refresh(try #require(issued.refreshToken), as: client)
            #expect(refreshed.status == 200, "\(refreshed.text)")

            // Exactly once: the next poll, on time, is refused and changes nothing.
            server.clock.advance(by: 5)
            let again = try await Self.poll(server, codes.deviceCode, as: client)
            #expect(again.status == 400 && again.oauthError == "invalid_grant")
            let redeemed = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            #expect(try redeemed.string("status") == "redeemed" && redeemed.optionalString("session_id") != nil)
            let sessions = try await server.database.read {
                try $0.queryOne("SELECT count(*) AS n FROM sessions WHERE user_id = ? AND client_id = ?", [.text(userID), .text(client.id)])?.int("n")
            }
            #expect(sessions == 1)
            let events = try await AuditLog(database: server.database).entries(userID: userID, limit: 100).map(\.event.rawValue)
            #expect(events.filter { $0 == "device_grant.approved" }.count == 1)
            #expect(events.filter { $0 == "device_grant.redeemed" }.count == 1)
            let redeemedEntry = try #require(try await Self.audit(server, event: "device_grant.redeemed").first)
            #expect(redeemedEntry.details["client_id"] == client.id && redeemedEntry.details["session_id"] == redeemed.optionalString("session_id"))
        }
    }

    @Test("S46: deny on the consent page gives access_denied to the device, every time; audited; no session")
    func denyS46() async throws {
        try await Self.with { server, client, userID in
            let codes = try await Self.codes(server, client)
            let (done, consent) = try await Self.answer(server, typed: codes.userCode, decision: "deny")
            #expect(consent.text.contains("Allow") && consent.text.contains("Deny"))
            #expect(done.status == 200 && done.text.contains("Request denied"))
            for _ in 0..<2 {
                server.clock.advance(by: 5)
                let denied = try await Self.poll(server, codes.deviceCode, as: client)
                #expect(denied.status == 400 && denied.oauthError == "access_denied")
            }
            let row = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            #expect(try row.string("status") == "denied" && row.optionalString("user_id") == userID)
            let entry = try #require(try await Self.audit(server, event: "device_grant.denied").first)
            #expect(entry.userID == userID && entry.details["client_id"] == client.id)
            let sessions = try await server.database.read {
                try $0.queryOne("SELECT count(*) AS n FROM sessions WHERE client_id = ?", [.text(client.id)])?.int("n")
            }
            #expect(sessions == 0)
        }
    }

    @Test("S44: past device.code_ttl the device hears expired_token, /device refuses the code, an approval no longer counts, and housekeeping deletes the row")
    func expiryS44() async throws {
        try await Self.with({ $0.device.codeTTL = 30 }) { server, client, _ in
            let codes = try await Self.codes(server, client)
            #expect(codes.expiresIn == 30)
            // The user gets as far as the consent page before the code expires.
            let browser = OAuthBrowser(server)
            let codePage = try await browser.send("/device")
            var page = try await browser.submit(codePage, ["user_code": codes.userCode])
            page = try await browser.submit(page, ["username": OAuthBrowser.username, "password": OAuthBrowser.password])
            #expect(page.text.contains("A device is asking"))
            server.clock.advance(by: 31)
            let expired = try await Self.poll(server, codes.deviceCode, as: client)
            #expect(expired.status == 400 && expired.oauthError == "expired_token")
            let late = try await browser.submit(page, ["decision": "allow"])
            #expect(late.status == 400 && late.text.contains("expired or has already been answered"), "\(late.text.prefix(400))")
            #expect(try await Self.row(server, deviceCode: codes.deviceCode)?.string("status") == "pending")
            let refused = try await browser.submit(try await browser.send("/device"), ["user_code": codes.userCode])
            #expect(refused.text.contains("That code is not right, or it has expired"))
            #expect(try await Self.poll(server, codes.deviceCode, as: client).oauthError == "expired_token")

            try await server.application.runBackgroundJobs()
            #expect(try await Self.row(server, deviceCode: codes.deviceCode) == nil)
            #expect(try await Self.poll(server, codes.deviceCode, as: client).oauthError == "invalid_grant")
        }
    }

    // MARK: Polling

    @Test("S44: slow_down as RFC 8628 §3.5 says: an early poll adds 5 s to the interval without moving the clock on; a client that waits the interval is never stuck; polls write nothing")
    func slowDownS44() async throws {
        try await Self.with { server, client, _ in
            let codes = try await Self.codes(server, client)
            let before = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            let auditBefore = try await AuditLog(database: server.database).entries(limit: 1000).count
            func expect(_ error: String, after seconds: TimeInterval, _ comment: Comment) async throws {
                server.clock.advance(by: seconds)
                let answer = try await Self.poll(server, codes.deviceCode, as: client)
                #expect(answer.status == 400 && answer.oauthError == error, comment)
            }
            try await expect("authorization_pending", after: 0, "the first poll")
            try await expect("slow_down", after: 1, "1 s after: early; the interval is now 10 s")
            try await expect("authorization_pending", after: 10, "10 s after the early poll (11 s after the last on time)")
            try await expect("slow_down", after: 9.5, "9.5 s later: early for 10 s; now 15 s")
            try await expect("slow_down", after: 5, "14.5 s after the last poll on time: early; now 20 s")
            try await expect("authorization_pending", after: 20, "a client that waits the interval it was told is answered")
            try await expect("authorization_pending", after: 20, "and again")
            try await expect("slow_down", after: 19, "19 s is early for 20 s")
            // A client that ignores slow_down and keeps polling every 5 s is slowed down each time.
            try await expect("slow_down", after: 5, "ignoring slow_down")

            // Polling wrote nothing: the row and the audit log are as they were.
            let after = try #require(try await Self.row(server, deviceCode: codes.deviceCode))
            for column in ["status", "scope", "amr"] { #expect(try after.string(column) == before.string(column)) }
            for column in ["user_id", "session_id"] { #expect(after.optionalString(column) == nil, "\(column)") }
            for column in ["decided_at", "redeemed_at"] { #expect(after.optionalDate(column) == nil, "\(column)") }
            #expect(try await AuditLog(database: server.database).entries(limit: 1000).count == auditBefore)
        }
    }

    @Test("S44: a code read pending is answered from memory until an answer: one taken on another instance reaches this one's polls through the change feed, one taken here at once")
    func answerSeenAcrossInstancesS44() async throws {
        try await Self.with { server, client, _ in
            try await DPoPTests.withSecondInstance(of: server) { other in
                let approved = try await Self.codes(server, client)
                let denied = try await Self.codes(server, client)
                for codes in [approved, denied] {
                    let pending = try await Self.poll(other, codes.deviceCode, as: client)
                    #expect(pending.status == 400 && pending.oauthError == "authorization_pending")
                }
                server.clock.advance(by: 5)
                #expect(try await Self.poll(other, approved.deviceCode, as: client).oauthError == "authorization_pending", "known pending")

                // Approved on the first instance: the second hears of it from the database's change
                // feed (a notification on PostgreSQL, within a second on SQLite), then reads and redeems.
                let (done, _) = try await Self.answer(server, typed: approved.userCode, decision: "allow")
                #expect(done.text.contains("Your device is signed in"))
                let started = ContinuousClock.now
                var answer: TestResponse
                repeat {
                    server.clock.advance(by: 5)
                    answer = try await Self.poll(other, approved.deviceCode, as: client)
                    if answer.status == 200 { break }
                    #expect(answer.oauthError == "authorization_pending", "\(answer.text)")
                    try await Task.sleep(for: .milliseconds(50))
                } while ContinuousClock.now - started < .seconds(5)
                #expect(answer.status == 200, "the approval reached the other instance: \(answer.text)")
                #expect(ContinuousClock.now - started < .seconds(3))

                // Denied on the second instance itself: its very next poll there knows.
                _ = try await Self.answer(other, typed: denied.userCode, decision: "deny")
                server.clock.advance(by: 5)
                let refused = try await Self.poll(other, denied.deviceCode, as: client)
                #expect(refused.status == 400 && refused.oauthError == "access_denied", "\(refused.text)")
            }
        }
    }

    @Test("S44: only the client the code was issued to may poll: another device client, one not registered for the grant, and an unknown code are refused; the right client still polls")
    func otherClientRefusedS44() async throws {
        try await Self.with { server, client, _ in
            let other = try await Self.registerTV(server, name: "Bedroom TV")
            let web = try await server.registerClient()
            let codes = try await Self.codes(server, client)
            let stolenFirst = try await Self.poll(server, codes.deviceCode, as: other)
            #expect(stolenFirst.status == 400 && stolenFirst.oauthError == "invalid_grant")
            #expect(try await Self.poll(server, codes.deviceCode, as: client).oauthError == "authorization_pending")
            // Known to this instance's polling memory now: still refused, not slowed down.
            let stolen = try await Self.poll(server, codes.deviceCode, as: other)
            #expect(stolen.status == 400 && stolen.oauthError == "invalid_grant")
            let notRegistered = try await Self.poll(server, codes.deviceCode, as: web)
            #expect(notRegistered.status == 400 && notRegistered.oauthError == "unauthorized_client")
            #expect(try await Self.poll(server, "not-a-device-code", as: client).oauthError == "invalid_grant")
            #expect(try await Self.poll(server, String(repeating: "x", count: 600), as: client).oauthError == "invalid_grant")
            let missing = try await server.tokenRequest(["grant_type": Self.grantType], as: client)
            #expect(missing.status == 400 && missing.oauthError == "invalid_request")
            server.clock.advance(by: 5)
            #expect(try await Self.poll(server, codes.deviceCode, as: client).oauthError == "authorization_pending")
        }
    }

    // MARK: The code page

    /// `/device` through the router as a browser at `peer`: the page's CSRF cookie and token.
    static func codeForm(_ server: TestServer, from peer: String) async throws -> (cookie: String, token: String) {
        let page = try await server.request(.get, "/device", from: peer)
        let setCookie = try #require(page.headers.values("Set-Cookie").first { $0.hasPrefix("__Host-latchkey_csrf=") })
        let cookie = String(setCookie.prefix { $0 != ";" })
        let token = try #require(OAuthBrowser.form(in: page.text).fields["csrf_token"])
        return (cookie, token)
    }

    /// Posts `typed` on `/device` from `peer`; returns where it went and the page it led to.
    static func type(_ typed: String, _ server: TestServer, from peer: String, form: (cookie: String, token: String)) async throws -> (
        location: String?, page: String
    ) {
        let body = PercentEncoding.encodeForm(["csrf_token": form.token, "user_code": typed])
        let answer = try await server.request(
            .post, "/device", body: Array(body.utf8),
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Cookie": form.cookie], from: peer)
        #expect(answer.status == 303)
        let location = answer.headers["Location"]
        guard location == "/device" else { return (location, "") }
        let flash = try #require(answer.headers.values("Set-Cookie").first { $0.hasPrefix("__Host-latchkey_flash=") })
        let page = try await server.request(
            .get, "/device", headers: ["Cookie": form.cookie + "; " + String(flash.prefix { $0 != ";" })], from: peer)
        return (location, page.text)
    }

    @Test("S45: 20 wrong codes from one address in 15 minutes, then even the right code is refused with the reason in words, audited; another address is not; the window passes")
    func wrongCodesRateLimitedS45() async throws {
        try await Self.with { server, client, _ in
            let codes = try await Self.codes(server, client)
            let attacker = "203.0.113.7"
            let form = try await Self.codeForm(server, from: attacker)
            for attempt in 1...20 {
                let (location, page) = try await Self.type("BCDF-GHJ\(attempt % 2 == 0 ? "K" : "L")", server, from: attacker, form: form)
                #expect(location == "/device" && page.contains("That code is not right"), "attempt \(attempt)")
            }
            let (location, page) = try await Self.type(codes.userCode, server, from: attacker, form: form)
            #expect(location == "/device")
            #expect(page.contains("Too many wrong codes were typed from your network. Please wait 15 minutes"), "\(page)")
            let failures = try await Self.audit(server, event: "device_grant.code_failed")
            #expect(failures.filter { $0.outcome.rawValue == "failure" && $0.ip == attacker }.count == 20)
            #expect(failures.filter { $0.outcome.rawValue == "rate_limited" && $0.ip == attacker }.count == 1)
            #expect(failures.contains { $0.details["failures"] == "20" })

            // Another address types the right code and goes on to sign in.
            let neighbour = "198.51.100.9"
            let (elsewhere, _) = try await Self.type(codes.userCode, server, from: neighbour, form: try await Self.codeForm(server, from: neighbour))
            #expect(elsewhere?.hasPrefix("/oauth/authorize?") == true && elsewhere?.contains("device_authorization=dva_") == true)
            #expect(elsewhere?.contains(codes.userCode) == false, "the code itself does not travel on")

            // Once the 15 minutes are over, the address may try again.
            server.clock.advance(by: 15 * 60 + 1)
            let fresh = try await Self.codes(server, client)
            let (after, _) = try await Self.type(fresh.userCode, server, from: attacker, form: form)
            #expect(after?.hasPrefix("/oauth/authorize?") == true)
        }
    }

    @Test("S46: verification_uri_complete fills the code in and never approves by itself; a code page post without its CSRF token is refused")
    func completeURIOnlyFillsInS46() async throws {
        try await Self.with { server, client, _ in
            let codes = try await Self.codes(server, client)
            let path = String(try #require(codes.verificationURIComplete).dropFirst(server.baseURL.count))
            let browser = OAuthBrowser(server)
            let page = try await browser.send(path)
            #expect(page.status == 200 && page.text.contains(#"value="\#(codes.userCode)""#))
            #expect(page.headers["Content-Security-Policy"]?.contains("frame-ancestors 'none'") == true)
            #expect(try await Self.row(server, deviceCode: codes.deviceCode)?.string("status") == "pending")
            #expect(try await Self.poll(server, codes.deviceCode, as: client).oauthError == "authorization_pending")

            // Hostile input on the page: markup is escaped, never a 500.
            let hostile = try await browser.send("/device?user_code=%3Cscript%3Ex")
            #expect(hostile.status == 200 && !hostile.text.contains("<script>x"))

            // Without the page's CSRF token: back to the form, nothing looked up.
            let forged = try await server.request(
                .post, "/device", body: Array("user_code=\(codes.userCode)".utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
            #expect(forged.status == 303 && forged.headers["Location"] == "/device")
            #expect(try await Self.audit(server, event: "device_grant.code_failed").isEmpty)

            // A made-up reference in the authorization request is an error page, not a sign-in.
            let madeUp = try await browser.send("/oauth/authorize?client_id=\(client.id)&device_authorization=dva_madeup")
            #expect(madeUp.status == 400 && madeUp.text.contains("expired or has already been answered"))
            // A device's sign-in has no redirect URI: a refusal meant for a client (here: the
            // provider of a "Continue with" link that the server does not have) is an error page
            // in words, never a redirect.
            let id = try #require(try await Self.row(server, deviceCode: codes.deviceCode)?.string("id"))
            let unknown = try await browser.send("/oauth/authorize?client_id=\(client.id)&device_authorization=\(id)&provider=nope")
            #expect(unknown.status == 400 && unknown.headers["Location"] == nil)
            #expect(unknown.text.contains("This sign-in cannot go on") && unknown.text.contains("names no provider"))
        }
    }

    @Test("S46: a first-party device client still gets the device consent page; an answered consent page cannot be answered again")
    func firstPartyStillAsksS46() async throws {
        try await TestServer.with { server in
            let client = try await Self.registerTV(server, name: "Living Room TV", firstParty: true)
            _ = try await server.passwordUser()
            let codes = try await Self.codes(server, client)
            let browser = OAuthBrowser(server)
            let (done, consent) = try await Self.answer(server, typed: codes.userCode, decision: "allow", browser: browser)
            #expect(done.text.contains("Your device is signed in"))
            let replay = try await browser.submit(consent, ["decision": "deny"])
            #expect(replay.status == 400 && replay.text.contains("already been answered"))
            #expect(try await Self.row(server, deviceCode: codes.deviceCode)?.string("status") == "approved")
        }
    }

    // MARK: Discovery and the CLI

    @Test("Discovery advertises the device authorization endpoint and the device code grant")
    func discovery() async throws {
        try await TestServer.with { server in
            let document = try await server.request(.get, "/.well-known/openid-configuration").json
            #expect(document["device_authorization_endpoint"]?.stringValue == server.baseURL + "/oauth/device_authorization")
            #expect(document["grant_types_supported"]?.arrayValue?.contains(.string(Self.grantType)) == true)
        }
    }

    @Test("latchkey clients add --grant device_code registers a client with no redirect URI, which may also refresh; an unknown grant is refused")
    func cliGrantDeviceCode() async throws {
        let deployment = try ClientCommandTests.deployment()
        defer { deployment.remove() }
        let tv = try ClientCommandTests.json(deployment, ["clients", "add", "--name", "Living Room TV", "--grant", "device_code", "--json"])
        let id = try #require(tv["client_id"]?.stringValue)
        let shown = try ClientCommandTests.json(deployment, ["clients", "show", id, "--json"])
        #expect(shown["grant_types"] == .array(["refresh_token", .string(Self.grantType)]))
        #expect(shown["redirect_uris"] == [])
        let unknown = try deployment.latchkey(["clients", "add", "--name", "X", "--grant", "password"])
        #expect(unknown.status == 1 && unknown.error.contains("--grant must be"))
        let noRedirect = try deployment.latchkey(["clients", "add", "--name", "Web"])
        #expect(noRedirect.status == 1 && noRedirect.error.contains("redirect URI"))
    }
}
