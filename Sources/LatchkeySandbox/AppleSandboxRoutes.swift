import FoundationEssentials
package import LatchkeyHTTP
import LatchkeyHTTPClient
import LatchkeyJSON

extension AppleSandbox {
    /// The longest `sub` `POST notify` takes, in UTF-8 bytes; Apple's are 44 characters.
    static let maxSubjectBytes = 255
    /// The longest notification `type`; Apple's are at most 15 characters.
    static let maxTypeBytes = 64
    /// The longest `email` (RFC 5321's limit on a path).
    static let maxEmailBytes = 320

    /// Mounts the sandbox under `prefix` (docs/reference.md "Sandbox"):
    ///
    /// - `GET auth/keys`, `POST auth/token`, `POST auth/revoke`: Apple's endpoints, same shapes.
    /// - `GET auth/authorize`, `POST auth/authorize`: Apple's web sign-in page and its answer, a
    ///   form posted to `redirect_uri` (AppleSandboxAuthorizePage.swift).
    /// - `POST authorize` `{sub?, email?, is_private_email?, real_user_status?, aud?, nonce?,
    ///   transfer_sub?}` → `{identity_token, authorization_code, sub}`.
    /// - `POST notify` `{sub, type, email?}` → `{status}`: the status our endpoint answered; 400
    ///   for a missing, empty, oversized or non-string field or when no notification URL is set,
    ///   503 `unavailable` when the endpoint cannot be reached.
    /// - `GET revocations` → `{revocations: [{client_id, sub, token_type_hint, time}]}`: what
    ///   `auth/revoke` accepted, so a demo or a test can see that a deletion reached "Apple".
    package func register(on router: Router, prefix: String = "/sandbox/apple") {
        router.get("\(prefix)/auth/keys", synchronous: { _ in .json(self.jwks) })
        registerAuthorizePage(on: router, prefix: prefix)

        router.post("\(prefix)/auth/token", synchronous: { request in
            do {
                return .json(try self.token(try request.formBody()))
            } catch let error as EndpointError {
                return error.response
            }
        })

        router.post("\(prefix)/auth/revoke", synchronous: { request in
            do {
                try self.revoke(try request.formBody())
                return .empty(status: 200)
            } catch let error as EndpointError {
                return error.response
            }
        })

        router.post("\(prefix)/authorize") { request in
            let body = try request.jsonBody()
            func string(_ name: String) throws -> String? {
                switch body[name] {
                case nil, .null?: return nil
                case .string(let value)?: return value
                default: throw HTTPError.invalidRequest("\(name) must be a string")
                }
            }
            var authorization = Authorization(
                subject: try string("sub"), email: try string("email"), audience: try string("aud"), nonce: try string("nonce"),
                transferSubject: try string("transfer_sub"))
            if let value = body["is_private_email"] {
                guard let flag = value.boolValue else { throw HTTPError.invalidRequest("is_private_email must be true or false") }
                authorization.isPrivateEmail = flag
            }
            if let value = body["real_user_status"] {
                guard let status = value.numberValue, [0, 1, 2].contains(status) else {
                    throw HTTPError.invalidRequest("real_user_status must be 0, 1 or 2")
                }
                authorization.realUserStatus = Int(status)
            }
            let credential = try self.authorize(authorization)
            return .json([
                "identity_token": .string(credential.identityToken), "authorization_code": .string(credential.authorizationCode),
                "sub": .string(credential.subject),
            ])
        }

        router.post("\(prefix)/notify") { request in
            let body = try request.jsonBody()
            // Bounded so the signed notification fits the server's body limit: a longer one was
            // cut off there with 413, the connection closed under the sandbox's send, and the
            // sandbox answered 500 for what was the caller's bad input.
            func optionalString(_ name: String, maxLength: Int) throws -> String? {
                switch body[name] {
                case nil, .null?: return nil
                case .string(let value)? where !value.isEmpty && value.utf8.count <= maxLength: return value
                default: throw HTTPError.invalidRequest("\(name) must be a non-empty string of at most \(maxLength) bytes")
                }
            }
            func string(_ name: String, maxLength: Int) throws -> String {
                guard let value = try optionalString(name, maxLength: maxLength) else { throw HTTPError.invalidRequest("\(name) is required") }
                return value
            }
            let subject = try string("sub", maxLength: Self.maxSubjectBytes)
            let type = try string("type", maxLength: Self.maxTypeBytes)
            let email = try optionalString("email", maxLength: Self.maxEmailBytes)
            let status: Int
            do {
                status = try await self.notify(subject: subject, type: type, email: email)
            } catch let error as EndpointError {
                return error.response
            } catch let error as HTTPClientError {
                throw HTTPError(
                    status: 503, code: "unavailable", description: "the notification endpoint did not answer (\(error.message))",
                    headers: ["Retry-After": "1"])
            }
            return .json(["status": .number(Double(status))])
        }

        router.get("\(prefix)/revocations", synchronous: { _ in
            .json([
                "revocations": .array(self.revocations.map { revocation in
                    [
                        "client_id": .string(revocation.clientID), "sub": revocation.subject.map(JSONValue.string) ?? .null,
                        "token_type_hint": revocation.tokenTypeHint.map(JSONValue.string) ?? .null,
                        "time": .string(revocation.time.ISO8601Format()),
                    ]
                })
            ])
        })
    }
}
