import Foundation
import LatchkeyHTTP
import LatchkeyJSON
@testable import LatchkeyServer
import Testing

/// S32's timing: a suite of its own so that `make test` runs it in the serial pass, alone on the
/// machine, as S13's is.
@Suite("Email flows: the time of a reset request")
struct EmailTimingTests {
    @Test("S32: a reset for an address with an account and for one without take comparable time, with the same status and body")
    func s32NoEnumerationByTime() async throws {
        try await TestServer.with { server in
            for index in 0..<10 { _ = try await EmailFlowTests.signUp(server, "user\(index)@example.com") }
            var known = [Double]()
            var unknown = [Double]()
            var shapes = Set<[String]>()
            for round in 0..<20 {
                for hasAccount in round % 2 == 0 ? [true, false] : [false, true] {
                    let address = hasAccount ? "user\(round % 10)@example.com" : "nobody\(round)@example.com"
                    let start = ContinuousClock.now
                    let response = try await server.request(.post, "/v1/auth/password/reset", json: ["email": .string(address)])
                    let elapsed = ContinuousClock.now - start
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    if hasAccount { known.append(seconds) } else { unknown.append(seconds) }
                    #expect(response.status == 202, "\(response.text)")
                    shapes.insert((try response.json.objectValue ?? [:]).keys.sorted())
                }
            }
            #expect(shapes == [["expires_in", "flow_id"]])
            let (knownMedian, unknownMedian) = (known.sorted()[10], unknown.sorted()[10])
            // Both are one durable transaction; the message is sealed and queued inside it.
            #expect(abs(knownMedian - unknownMedian) < 0.5 * max(knownMedian, unknownMedian), "median known \(knownMedian) s, unknown \(unknownMedian) s")
        }
    }
}
