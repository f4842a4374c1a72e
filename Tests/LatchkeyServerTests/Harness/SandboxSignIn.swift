import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
import LatchkeyWire

/// Sign in with Apple against a running `latchkey serve --dev` process, over real HTTP, as the
/// demo and a device on the network do: the server's own sandbox Apple authorizes, and the
/// credential goes to `/v1/auth/apple`.
enum SandboxSignIn {
    /// The sandbox's credential and the server's answer to it.
    struct Result {
        /// What `/sandbox/apple/authorize` returned: `sub`, `identity_token`, `authorization_code`;
        /// raw JSON, as it is the sandbox's stand-in for Apple's answer, not a /v1 body.
        var credential: JSONValue
        /// What `/v1/auth/apple` returned, whatever its status; read it as ``tokens``.
        var response: JSONValue

        /// The answer read as the token response it should be.
        var tokens: WireTokenResponse {
            get throws { try WireTokenResponse(json: response) }
        }
    }

    /// Signs in as `email` through the server at `baseURL` with a fresh nonce.
    static func signIn(at baseURL: String, email: String = "ada@example.com") async throws -> Result {
        let nonce = AppleFlow.nonce()
        let credential = try await post(baseURL + "/sandbox/apple/authorize", ["nonce": .string(nonce.hashed), "email": .string(email)])
        let response = try await post(baseURL + "/v1/auth/apple", [
            "identity_token": credential["identity_token"] ?? .null, "authorization_code": credential["authorization_code"] ?? .null,
            "nonce": .string(nonce.raw),
        ])
        return Result(credential: credential, response: response)
    }

    /// Posts `body` as JSON to `url` and parses the answer, whatever its status.
    static func post(_ url: String, _ body: JSONValue) async throws -> JSONValue {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.serialized)
        return try JSONValue(parsing: Array(try await URLSession.shared.data(for: request).0))
    }
}
