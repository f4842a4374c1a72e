import Foundation
import LatchkeyJOSE
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import LatchkeyTestSupport
import LatchkeyWire
import Testing

/// A device sign-in end to end: the TV is a plain HTTP client at `/oauth/device_authorization` and
/// `/oauth/token`; the phone is headless Chromium (`Fixtures/browser_device.py`) on the QR code's
/// link, the hosted sign-in with a password and TOTP, and the device consent page. Screenshots land
/// in `.build/test-artifacts/screenshots/device-*.png`.
@Suite("Device authorization grant in headless Chromium", .enabled(if: interopPython != nil, "needs LATCHKEY_PYTHON (make test sets it)"))
struct DeviceGrantBrowserTests {
    @Test("S44 S46 in Chromium: the TV's QR code fills the code in, password and TOTP sign-in, a consent page saying a device is asking, Allow; the TV gets its tokens exactly once")
    func chromiumWalkS44S46() async throws {
        try await TestServer.with { server in
            let start = Date()
            let user = try await BrowserFlowTests.userWithTOTP(server, username: "grace@example.com")
            let tv = try await DeviceGrantTests.registerTV(server)
            let codes = try await DeviceGrantTests.codes(server, tv, scope: "openid profile offline_access")
            let pending = try await DeviceGrantTests.poll(server, codes.deviceCode, as: tv)
            #expect(pending.oauthError == "authorization_pending")

            let seen = try await HeadlessChromium.run(
                "device",
                [
                    "verification_uri_complete": .string(try #require(codes.verificationURIComplete)), "user_code": .string(codes.userCode),
                    "user": ["username": "grace@example.com", "password": .string(BrowserFlowTests.password), "totp_secret": .string(user.secret)],
                ], on: server, script: "browser_device.py")

            // What the person saw, page by page.
            let page = HeadlessChromium.page
            #expect(seen["code_page"] == page("latchkey", "/device", "Sign in a device"))
            #expect(seen["code_filled_in"] == true)
            #expect(seen["sign_in_page"] == page("latchkey", "/oauth/authorize", "Sign in"))
            #expect(seen["sign_in_lead"] == ["to continue to Living Room TV"])
            #expect(seen["second_factor_page"] == page("latchkey", "/oauth/authorize/second-factor", "Enter your code"))
            #expect(seen["consent_page"] == page("latchkey", "/oauth/authorize", "Sign in Living Room TV on your device?"))
            let consentText = seen["consent_text"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(consentText.first?.hasPrefix("A device is asking to sign in to Living Room TV with your account.") == true, "\(consentText)")
            #expect(seen["consent_items"] == .array(["offline_access", "openid", "profile"].map { .string(ConsentPage.describe($0)) }))
            #expect(seen["consent_buttons"] == ["Allow", "Deny"])
            #expect(seen["done_page"] == page("latchkey", "/oauth/authorize/consent", "Your device is signed in"))

            // The TV, polling on time after the phone's answer, gets its tokens once.
            server.clock.advance(by: 5)
            let answer = try await DeviceGrantTests.poll(server, codes.deviceCode, as: tv)
            #expect(answer.status == 200, "\(answer.text)")
            let tokens = try answer.oauthTokens
            #expect(tokens.refreshToken != nil && tokens.scope == "offline_access openid profile")
            let idToken = try Insecure.unverifiedContents(of: try #require(tokens.idToken)).claims
            #expect(idToken["sub"]?.stringValue == user.id && idToken["aud"]?.stringValue == tv.id)
            let amr = Set(idToken["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            #expect(amr.isSuperset(of: ["pwd", "otp", "mfa"]), "\(amr)")
            server.clock.advance(by: 5)
            let again = try await DeviceGrantTests.poll(server, codes.deviceCode, as: tv)
            #expect(again.status == 400 && again.oauthError == "invalid_grant")

            // What it left: the authorization redeemed into one session of the TV's, and the audit trail.
            let row = try #require(try await DeviceGrantTests.row(server, deviceCode: codes.deviceCode))
            #expect(try row.string("status") == "redeemed" && row.optionalString("user_id") == user.id)
            let events = try await BrowserFlowTests.audit(server, user.id)
            for event in ["totp.used", "browser_session.started", "device_grant.approved", "device_grant.redeemed"] {
                #expect(events.filter { $0 == event }.count == 1, "\(event) in \(events)")
            }
            BrowserFlowTests.expectScreenshots(["device-code", "device-sign-in", "device-second-factor", "device-consent", "device-done"], since: start)
        }
    }
}
