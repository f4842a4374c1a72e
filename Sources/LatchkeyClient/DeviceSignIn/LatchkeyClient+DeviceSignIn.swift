import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyWire

extension LatchkeyClient {
    /// The grant type of a device's polls (RFC 8628 §3.4).
    static let deviceCodeGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// Starts a sign-in on a device without a browser (an Apple TV; RFC 8628) for the client in
    /// ``LatchkeyConfiguration/clientID``, registered with `latchkey clients add --grant device_code
    /// --first-party`.
    ///
    /// - Parameter scopes: what to ask for; a first-party client gets a refresh token whatever
    ///   they are.
    /// - Returns: The codes to show; ``DeviceSignIn/wait()`` then waits for the user.
    /// - Throws: ``LatchkeyError/Code/invalidConfiguration`` without a `clientID`;
    ///   ``LatchkeyError/Code/server(code:)`` when the server refuses (`unauthorized_client` for a
    ///   client not registered for the grant, `invalid_scope`); ``LatchkeyError/Code/network``.
    public func beginDeviceSignIn(scopes: [String] = ["openid", "profile", "email"]) async throws -> DeviceSignIn {
        guard let clientID = configuration.clientID, !clientID.isEmpty else {
            throw LatchkeyError(.invalidConfiguration, "a device sign-in needs LatchkeyConfiguration.clientID")
        }
        let issuedAt = configuration.now()
        let answer = try await postForm(
            "/oauth/device_authorization", [("client_id", clientID), ("scope", scopes.joined(separator: " "))],
            as: WireDeviceAuthorizationResponse.self)
        guard let verificationURL = URL(string: answer.verificationURI) else {
            throw LatchkeyError(.invalidResponse, "/oauth/device_authorization answered a verification_uri that is not a URL")
        }
        return DeviceSignIn(
            userCode: answer.userCode, verificationURL: verificationURL,
            qrCodeURL: answer.verificationURIComplete.flatMap(URL.init(string:)) ?? verificationURL,
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(answer.expiresIn)), client: self, clientID: clientID,
            deviceCode: answer.deviceCode, interval: answer.interval)
    }

    /// One poll of the token endpoint with the device code, as a public client.
    func pollDeviceToken(_ deviceCode: String, clientID: String) async throws -> WireOAuthTokenResponse {
        try await postForm(
            "/oauth/token", [("grant_type", Self.deviceCodeGrantType), ("device_code", deviceCode), ("client_id", clientID)],
            as: WireOAuthTokenResponse.self)
    }
}
