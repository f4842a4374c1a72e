import Foundation
import LatchkeyCrypto
import LatchkeyJSON
@testable import LatchkeyServer
import LatchkeyStore
import Testing

/// S13's timing: a suite of its own so that `make test` runs it in the serial pass, alone on the
/// machine (in the parallel pass, load stretched one side's median past the bound).
@Suite("Password accounts: the time of a refused login")
struct PasswordTimingTests {
    @Test("S13: an unknown user and a wrong password get the same body and comparable time")
    func s13NoEnumeration() async throws {
        try await TestServer.with({ $0.password.argon2 = .owaspMinimum }) { (server: TestServer) async throws in
            #expect(try await PasswordAccountTests.signUp(server, "ada", "correct horse battery").status == 201)
            var unknownTimes = [Double]()
            var wrongTimes = [Double]()
            // Raw JSON on purpose: the two bodies must match member for member, with no extra member.
            var bodies = Set<JSONValue>()
            for round in 0..<7 {
                for unknown in round % 2 == 0 ? [true, false] : [false, true] {
                    let start = ContinuousClock.now
                    let response = try await PasswordAccountTests.logIn(server, unknown ? "nobody" : "ada", "wrong password \(round)")
                    let elapsed = ContinuousClock.now - start
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    if unknown { unknownTimes.append(seconds) } else { wrongTimes.append(seconds) }
                    #expect(response.status == 401)
                    bodies.insert(try response.json)
                }
            }
            #expect(bodies == [["error": "invalid_credentials", "error_description": "the username or password is wrong"]])
            let unknown = unknownTimes.sorted()[3]
            let wrong = wrongTimes.sorted()[3]
            // Without the dummy hash an unknown user would answer in a fraction of the time.
            #expect(abs(unknown - wrong) < 0.5 * max(unknown, wrong), "median unknown \(unknown) s, wrong \(wrong) s")
            let failures = try await PasswordAccountTests.audit(server, event: "password.login")
            #expect(failures.filter { $0.details["reason"] == "unknown_user" && $0.userID == nil }.count == 7)
            #expect(failures.filter { $0.details["reason"] == "wrong_password" && $0.userID != nil }.count == 7)
            #expect(!failures.contains { $0.details.values.contains { $0.contains("wrong password") || $0.contains("nobody") } }, "S26")
        }
    }
}
