import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyClient
import LatchkeyJSON

/// The device and Apple, played by the development server's sandbox Apple: what an iPhone would
/// get from `ASAuthorizationController`, and Apple's server-to-server side.
struct SandboxApple {
    let base: URL

    /// A credential as Sign in with Apple hands it to the app, for the nonce's hash.
    func authorize(subject: String?, email: String, nonce: (raw: String, sha256: String), name: PersonName?) async throws -> AppleCredential {
        var body: [String: JSONValue] = ["nonce": .string(nonce.sha256), "email": .string(email), "is_private_email": true]
        if let subject { body["sub"] = .string(subject) }
        let answer = try await call("POST", "/sandbox/apple/authorize", body: .object(body))
        if answer.status == 404 { throw DemoFailure("no sandbox at \(base.absoluteString): is the server in development mode (make run)?") }
        guard answer.status == 200, let token = answer.body["identity_token"]?.stringValue, let sub = answer.body["sub"]?.stringValue else {
            throw DemoFailure("the sandbox answered \(answer.status)")
        }
        return AppleCredential(
            user: sub, identityToken: token, authorizationCode: answer.body["authorization_code"]?.stringValue, rawNonce: nonce.raw,
            name: name, email: email)
    }

    /// Has Apple send the server a signed notification; returns the sandbox's answer and the
    /// status the server gave Apple.
    func notify(subject: String, type: String) async throws -> (status: Int, serverStatus: Int?) {
        let answer = try await call("POST", "/sandbox/apple/notify", body: ["sub": .string(subject), "type": .string(type)])
        return (answer.status, answer.body["status"]?.numberValue.map { Int($0) })
    }

    /// The Apple users whose refresh tokens Apple was asked to revoke.
    func revokedSubjects() async throws -> [String] {
        try await call("GET", "/sandbox/apple/revocations").body["revocations"]?.arrayValue?.compactMap { $0["sub"]?.stringValue } ?? []
    }

    private func call(_ method: String, _ path: String, body: JSONValue? = nil) async throws -> (status: Int, body: JSONValue) {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.serialized)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw DemoFailure("\(method) \(path) got no answer from \(base.absoluteString); is the server running (make run)?")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, data.isEmpty ? .object([:]) : (try? JSONValue(parsing: Array(data))) ?? .object([:]))
    }
}

/// A step that did not answer as it should.
struct DemoFailure: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
