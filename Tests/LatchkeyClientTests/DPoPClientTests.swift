import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import LatchkeyClient
import LatchkeyClientDoubles
import LatchkeyJSON
import Testing

/// The SDK with a DPoP key (RFC 9449) against the real `latchkey serve --dev`: a software P-256
/// key behind the protocol a Secure Enclave key fills on a device.
@Suite("SDK against the server: DPoP")
struct DPoPClientTests {
    static let password = "correct horse battery staple 7"

    /// The claims of a JWT, unverified.
    static func claims(_ token: String) throws -> JSONValue {
        let part = String(token.split(separator: ".")[1])
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return try JSONValue(parsing: Array(try #require(Data(base64Encoded: base64))))
    }

    @Test("S41, S42: with a DPoP key every request carries a proof: sign-up, me(), refresh() and authorize(_:) work with bound tokens, which are refused as Bearer")
    func boundSession() async throws {
        try await DevServer.with { server in
            let client = server.client { $0.dpop = .key(SoftwareDeviceKey()) }
            let session = try #require(try await client.signUp(username: "ada", password: Self.password).session)
            #expect(try Self.claims(session.accessToken)["cnf"]?["jkt"]?.stringValue != nil, "the access token is bound")
            #expect(try await client.me().username == "ada")
            let refreshed = try await client.refresh()
            #expect(refreshed.refreshToken != session.refreshToken)
            #expect(try Self.claims(refreshed.accessToken)["cnf"] == Self.claims(session.accessToken)["cnf"])

            var request = URLRequest(url: server.baseURL.appendingPathComponent("v1/me"))
            try await client.authorize(&request)
            #expect(request.value(forHTTPHeaderField: "Authorization")?.hasPrefix("DPoP ") == true)
            let (_, answer) = try await URLSession.shared.data(for: request)
            #expect((answer as? HTTPURLResponse)?.statusCode == 200)

            request.setValue("Bearer " + refreshed.accessToken, forHTTPHeaderField: "Authorization")
            request.setValue(nil, forHTTPHeaderField: "DPoP")
            let (_, refused) = try await URLSession.shared.data(for: request)
            let http = try #require(refused as? HTTPURLResponse)
            #expect(http.statusCode == 401)
            #expect(http.value(forHTTPHeaderField: "WWW-Authenticate")?.hasPrefix(#"DPoP error="invalid_token""#) == true)

            // Another device with a copy of the refresh token but not the key gets nothing.
            let thief = server.client { $0.dpop = .key(SoftwareDeviceKey()) }
            var copied = URLRequest(url: server.baseURL.appendingPathComponent("v1/token"))
            copied.httpMethod = "POST"
            copied.setValue("application/json", forHTTPHeaderField: "Content-Type")
            copied.httpBody = Data(#"{"grant_type":"refresh_token","refresh_token":"\#(refreshed.refreshToken)"}"#.utf8)
            try await thief.authorizeless(&copied)
            let (body, stolen) = try await URLSession.shared.data(for: copied)
            #expect((stolen as? HTTPURLResponse)?.statusCode == 400)
            #expect(try JSONValue(parsing: Array(body))["error"] == "invalid_dpop_proof")
        }
    }

    @Test("S43: with server nonces on, the SDK retries a use_dpop_nonce answer once with the nonce and goes on using it")
    func nonceRetry() async throws {
        try await DevServer.with(environment: ["LATCHKEY_DPOP_NONCE": "on"]) { server in
            let client = server.client { $0.dpop = .key(SoftwareDeviceKey()) }
            let session = try #require(try await client.signUp(username: "ada", password: Self.password).session)
            #expect(try Self.claims(session.accessToken)["cnf"] != nil)
            #expect(try await client.me().username == "ada")
        }
    }
}

extension LatchkeyClient {
    /// A DPoP proof for `request` by this client's key, with no access token: what a token
    /// request carries.
    func authorizeless(_ request: inout URLRequest) async throws {
        guard let dpop = api.dpop, let url = request.url else { return }
        request.setValue(try await dpop.proof(method: request.httpMethod ?? "GET", url: url, accessToken: nil), forHTTPHeaderField: "DPoP")
    }
}
