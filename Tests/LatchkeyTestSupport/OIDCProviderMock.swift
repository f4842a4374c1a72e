import Foundation

/// A real OpenID Connect provider no one here wrote: `oidc-provider-mock` (PyPI; authlib's
/// authorization server on Flask, served by uvicorn), run from the test venv (`LATCHKEY_PYTHON`,
/// scripts/requirements-test.txt) through its own command line, `python -m oidc_provider_mock`,
/// on a free port of 127.0.0.1.
///
/// What it does, as its source (0.3.x) shows, and what a test must know:
/// - Its issuer is the `Host` of each request (`http://127.0.0.1:PORT` here, ``issuer``): talk
///   to it only through 127.0.0.1, never `localhost`, or the issuer changes.
/// - Any `client_id` and secret are accepted, by either client_secret_basic or
///   client_secret_post (no registration); discovery lists no auth methods.
/// - Its authorize endpoint is a page: a `GET` shows a form, and a `POST` of the form field
///   `sub` to the same URL (query included) signs that subject in and answers 302 to
///   `redirect_uri?code=…&state=…` (no `iss`); a `POST` of `action=deny` answers with
///   `error=access_denied` and no `state` (a callback must cope with that).
///   ``signIn(authorizeURL:sub:)`` does the first, ``deny(authorizeURL:)`` the second. In
///   Chromium: type into `input[name=sub]` and click the first form's `button[type=submit]`
///   ("Authorize").
/// - A subject's claims are what ``setUser(sub:claims:)`` last stored (`PUT /users/{sub}`);
///   a subject never stored signs in with only `{"email": sub}`. `email` and `email_verified`
///   reach the ID token and userinfo only when the scope has `email`; `name` only with `profile`.
/// - With `requireNonce` (the default here), an authorize request without `nonce` is refused
///   (302 to `redirect_uri` with `error=invalid_request`); a nonce it was given comes back in
///   the ID token.
/// - PKCE is ignored: `code_challenge` is accepted and never checked against `code_verifier`,
///   and discovery lists no `code_challenge_methods_supported`.
/// - ID tokens are RS256, `typ: JWT`, without `kid` in the header; its JWKS has one RSA key,
///   with a `kid` but without `alg`, so a verifier must take RS256 for an RSA key without `alg`
///   (`JWSKeySet(jwks:defaultAlgorithm: .rs256)`). `aud` is an array of the client ID;
///   `at_hash` is present.
///
/// It stops when ``stop()`` is called or the test process ends. A mock that cannot start is an
/// error the test reports; nothing is skipped.
package final class OIDCProviderMock: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let port: Int
    private let service: PythonService

    private init(port: Int, service: PythonService) {
        self.port = port
        self.service = service
    }

    /// `http://127.0.0.1:PORT`: its issuer, and the base of its endpoints.
    package var issuer: String { "http://127.0.0.1:\(port)" }
    package var discoveryURL: String { issuer + "/.well-known/openid-configuration" }
    package var authorizationEndpoint: String { issuer + "/oauth2/authorize" }
    package var tokenEndpoint: String { issuer + "/oauth2/token" }
    package var jwksURI: String { issuer + "/jwks" }
    package var userinfoEndpoint: String { issuer + "/userinfo" }

    /// Starts one and waits until its discovery document answers.
    ///
    /// - Parameters:
    ///   - requireNonce: refuse authorize requests without `nonce` (`--require-nonce`).
    ///   - tokenMaxAge: the lifetime of its access and ID tokens, in seconds (`--token-max-age`).
    package static func start(requireNonce: Bool = true, tokenMaxAge: Int? = nil) async throws -> OIDCProviderMock {
        // The package's own command line, run as `python -m oidc_provider_mock` would run it,
        // beside a thread that ends the process once the test process is gone (it has no such
        // option of its own).
        let wrapper = """
            import os, runpy, sys, threading, time, warnings
            warnings.simplefilter("ignore")
            owner = int(sys.argv[1])
            def watch():
                while True:
                    try:
                        os.kill(owner, 0)
                    except ProcessLookupError:
                        os._exit(0)
                    except PermissionError:
                        pass
                    time.sleep(0.5)
            threading.Thread(target=watch, daemon=True).start()
            sys.argv = ["oidc_provider_mock"] + sys.argv[2:]
            runpy.run_module("oidc_provider_mock", run_name="__main__", alter_sys=True)
            """
        var arguments = ["-c", wrapper, String(ProcessInfo.processInfo.processIdentifier),
                         "--host", "127.0.0.1", "--port", "0", "--require-nonce", requireNonce ? "true" : "false"]
        if let tokenMaxAge { arguments += ["--token-max-age", String(tokenMaxAge)] }
        // uvicorn logs `Uvicorn running on http://127.0.0.1:PORT (Press CTRL+C to quit)`.
        let (service, port) = try await PythonService.start(
            "oidc-provider-mock (scripts/requirements-test.txt)", arguments: arguments,
            environment: ["NO_COLOR": "1", "PYTHONUNBUFFERED": "1"], announcedOnStandardError: true
        ) { line in
            guard let range = line.range(of: "running on http://127.0.0.1:") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        let mock = OIDCProviderMock(port: port, service: service)
        let deadline = Date().addingTimeInterval(30)
        while true {
            if let answer = try? await LoopbackHTTP.get(mock.discoveryURL), answer.status == 200,
               answer.object?["issuer"] as? String == mock.issuer {
                return mock
            }
            guard Date() < deadline, service.process.isRunning else {
                mock.stop()
                throw Failure(description: "oidc-provider-mock's discovery document did not answer: \(service.outputTail)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Stores the claims subject `sub` signs in with (`PUT /users/{sub}`), replacing what it had:
    /// `email`, `email_verified`, `name`, or any other claim (not `sub`). Values are anything
    /// `JSONSerialization` takes (`String`, `Bool`, `Int`, arrays, dictionaries, `NSNull()`).
    package func setUser(sub: String, claims: [String: any Sendable]) async throws {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove("/")
        let path = sub.addingPercentEncoding(withAllowedCharacters: allowed) ?? sub
        let answer = try await LoopbackHTTP.send("PUT", issuer + "/users/" + path, json: claims as [String: Any])
        guard answer.status == 204 else {
            throw Failure(description: "PUT /users/\(sub) answered \(answer.status): \(answer.text.prefix(500))")
        }
    }

    /// Stores the usual claims of a user: an address, whether it is verified, and a name.
    package func setUser(sub: String, email: String, emailVerified: Bool, name: String? = nil) async throws {
        var claims: [String: any Sendable] = ["email": email, "email_verified": emailVerified]
        if let name { claims["name"] = name }
        try await setUser(sub: sub, claims: claims)
    }

    /// What a person at its authorize page does: `authorizeURL` is where the relying party sent
    /// the browser; the form is posted back to it with `sub`. Returns the redirect's `Location`
    /// (the relying party's callback with `code` and `state`, or an error).
    package func signIn(authorizeURL: String, sub: String) async throws -> String {
        try await submit(authorizeURL, ["sub": sub])
    }

    /// Presses "Deny" on the authorize page; returns the redirect's `Location` (`error=access_denied`).
    package func deny(authorizeURL: String) async throws -> String {
        try await submit(authorizeURL, ["action": "deny"])
    }

    private func submit(_ authorizeURL: String, _ form: [String: String]) async throws -> String {
        let answer = try await LoopbackHTTP.post(authorizeURL, form: form)
        guard answer.status == 302, let location = answer.location else {
            throw Failure(description: "the authorize page answered \(answer.status): \(answer.text.prefix(500))")
        }
        return location
    }

    /// What it logged (uvicorn's access log and its warnings), the last 2,000 characters.
    package var log: String { service.outputTail }

    /// Stops it at once (SIGKILL).
    package func stop() {
        service.stop()
    }
}
