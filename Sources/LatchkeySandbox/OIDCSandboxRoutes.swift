import FoundationEssentials
package import LatchkeyHTTP
import LatchkeyJSON

extension OIDCSandbox {
    /// Mounts the sandbox under `prefix`, which must be the path of the issuer given to
    /// ``setIssuer(_:)`` (`{public_url}/sandbox/oidc` with the default prefix):
    ///
    /// - `GET .well-known/openid-configuration`: the discovery document (``discovery()``).
    /// - `GET jwks`: the JWK Set (``jwks``).
    /// - `GET authorize`, `POST authorize`: the sign-in page and its answer, a 303 to
    ///   `redirect_uri` (OIDCSandboxAuthorizePage.swift).
    /// - `POST token`: the code exchange (``token(_:authorization:)``), answered `no-store`.
    /// - `GET userinfo`, `POST userinfo`: the user's claims for `Authorization: Bearer`
    ///   (``userinfo(authorization:)``).
    ///
    /// Every endpoint answers 503 `temporarily_unavailable` until the issuer is set.
    package func register(on router: Router, prefix: String = "/sandbox/oidc") {
        router.get("\(prefix)/.well-known/openid-configuration", synchronous: { _ in
            do throws(EndpointError) {
                return .json(try self.discovery())
            } catch {
                return error.response
            }
        })

        router.get("\(prefix)/jwks", synchronous: { _ in .json(self.jwks) })

        registerAuthorizePage(on: router, prefix: prefix)

        router.post("\(prefix)/token", synchronous: { request in
            do {
                var response = HTTPResponse.json(try self.token(try request.formBody(), authorization: request.headers["Authorization"]))
                response.headers.add("Cache-Control", "no-store")
                response.headers.add("Pragma", "no-cache")
                return response
            } catch let error as EndpointError {
                return error.response
            }
        })

        let userinfo: @Sendable (HTTPRequest) throws -> HTTPResponse = { request in
            do throws(EndpointError) {
                var response = HTTPResponse.json(try self.userinfo(authorization: request.headers["Authorization"]))
                response.headers.add("Cache-Control", "no-store")
                return response
            } catch {
                return error.response
            }
        }
        router.get("\(prefix)/userinfo", synchronous: userinfo)
        router.post("\(prefix)/userinfo", synchronous: userinfo)
    }
}
