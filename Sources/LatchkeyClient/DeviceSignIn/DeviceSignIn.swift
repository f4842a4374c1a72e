public import Foundation
import LatchkeyWire

/// A sign-in on a device without a browser or a keyboard to speak of (an Apple TV), under way:
/// the OAuth device authorization grant (RFC 8628).
///
/// Show ``userCode`` and ``verificationURL`` on screen (and ``qrCodeURL`` as a QR code), then call
/// ``wait()``: the user signs in on a phone or a computer and allows the device, and `wait()`
/// returns the session. Make one with ``LatchkeyClient/beginDeviceSignIn(scopes:)``.
public struct DeviceSignIn: Sendable {
    /// What the user types, `XXXX-XXXX`.
    public let userCode: String
    /// Where the user types it: the server's `/device` page.
    public let verificationURL: URL
    /// The same page with the code filled in, for a QR code; the user still confirms there.
    public let qrCodeURL: URL
    /// When the codes stop working; start again after it.
    public let expiresAt: Date

    let client: LatchkeyClient
    let clientID: String
    let deviceCode: String
    /// Seconds between polls, as the server said (RFC 8628 §3.2).
    let interval: Int

    /// Polls the server until the user answers, then stores the session and announces it as
    /// ``AuthEvent/signedIn(_:)``, as every sign-in does.
    ///
    /// The first poll goes at once, then one every `interval` seconds (5); a `slow_down` answer
    /// adds 5 seconds to the interval for every later poll (RFC 8628 §3.5), and a network failure
    /// is tried again after the interval. Cancel the task to stop waiting.
    ///
    /// - Throws: ``LatchkeyError/Code/canceled`` (reason `access_denied`) when the user denied the
    ///   device; ``LatchkeyError/Code/server(code:)`` `expired_token` when the codes expired first,
    ///   or with another code the server refused the poll with; `CancellationError`.
    public func wait() async throws -> Session {
        try await wait(sleep: { seconds in try await Task.sleep(for: .seconds(seconds)) })
    }

    /// ``wait()`` with `sleep` between polls (tests count the seconds instead of spending them).
    func wait(sleep: (Int) async throws -> Void) async throws -> Session {
        var polling = DevicePolling(interval: interval)
        while true {
            let issuedAt = client.configuration.now()
            let response: WireOAuthTokenResponse
            do {
                response = try await client.pollDeviceToken(deviceCode, clientID: clientID)
            } catch let error as LatchkeyError {
                switch polling.next(after: error) {
                case .stop(let final):
                    throw final
                case .pollAgain(let seconds):
                    guard client.configuration.now().addingTimeInterval(TimeInterval(seconds)) < expiresAt else {
                        throw LatchkeyError(.server(code: "expired_token"), "the code expired before the user answered; start again")
                    }
                    try await sleep(seconds)
                    continue
                }
            }
            return try await client.land(response, issuedAt: issuedAt, issuer: client.issuer, clientID: clientID, nonce: nil, linkingTo: nil)
        }
    }
}

/// How a device polls (RFC 8628 §3.5), as a state machine without I/O: after each refusal of the
/// token endpoint, poll again after so many seconds, or stop with an error.
struct DevicePolling: Sendable, Equatable {
    /// Seconds between polls; `slow_down` adds 5 for good.
    private(set) var interval: Int

    enum Step: Sendable, Equatable {
        case pollAgain(after: Int)
        case stop(LatchkeyError)
    }

    init(interval: Int) { self.interval = max(1, interval) }

    mutating func next(after error: LatchkeyError) -> Step {
        switch (error.code, error.code.serverCode) {
        case (.network, _), (_, "authorization_pending"):
            return .pollAgain(after: interval)
        case (_, "slow_down"):
            interval += 5
            return .pollAgain(after: interval)
        case (_, "access_denied"):
            return .stop(LatchkeyError(.canceled, "the user denied the device's sign-in", status: error.status, reason: "access_denied"))
        default:
            return .stop(error)
        }
    }
}
