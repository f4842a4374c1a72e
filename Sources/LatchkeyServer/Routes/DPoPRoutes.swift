import FoundationEssentials
import LatchkeyHTTP
import LatchkeyJSON

/// DPoP (RFC 9449) at the endpoints that issue tokens: the `DPoP` header's proof is accepted for
/// this request (``DPoPService/accept(_:for:context:)``) and its key put in the caller's context,
/// where the sign-in pipeline, refresh and the OAuth token endpoint bind what they issue to it.
///
/// It is the middleware of the sign-in routes' group; `/v1/token` and `/oauth/token`, whose
/// refusals must be `no-store` too, call ``bind(_:_:)`` from inside their handlers.
struct DPoPBinding: RouterMiddleware {
    typealias Context = LatchkeyContext

    let dpop: DPoPService
    /// The issuer: the public URL a proof's `htu` names.
    let accessTokens: AccessTokens

    func handle(
        _ request: HTTPRequest, context: LatchkeyContext, next: (HTTPRequest, LatchkeyContext) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var context = context
        context.caller = try await bind(request, context.caller)
        return try await next(request, context)
    }

    /// The caller with the key of the request's proof, when it has one.
    ///
    /// - Parameter spentByRefresh: The proof's `jti` is left for the refresh to spend in its own
    ///   transaction (`unspentDPoPProof`); only for a request that goes on to
    ///   ``RefreshTokens/refresh(_:client:context:)``.
    /// - Throws: `invalid_dpop_proof` for a proof that does not hold, for more than one `DPoP`
    ///   header, and for none when `dpop.required` is on; `use_dpop_nonce` when nonces are on.
    func bind(_ request: HTTPRequest, _ caller: RequestContext, spentByRefresh: Bool = false) async throws -> RequestContext {
        guard let proof = try Self.proof(request) else {
            guard !dpop.required else { throw AuthError.invalidDPoPProof("this server issues only DPoP-bound tokens; send a DPoP proof") }
            return caller
        }
        var caller = caller
        let target = Self.target(request, issuer: accessTokens.issuer, accessToken: nil)
        if spentByRefresh {
            let checked = try dpop.check(proof, for: target)
            caller.dpopKeyThumbprint = checked.keyThumbprint
            caller.unspentDPoPProof = checked
        } else {
            caller.dpopKeyThumbprint = try await dpop.accept(proof, for: target, context: caller)
        }
        return caller
    }

    /// The request's one `DPoP` header, or `nil` when it has none.
    ///
    /// - Throws: `invalid_dpop_proof` for two or more (RFC 9449 §4.3: exactly one).
    static func proof(_ request: HTTPRequest) throws -> String? {
        let values = request.headers.values("DPoP")
        guard values.count <= 1 else { throw AuthError.invalidDPoPProof("send one DPoP header, not \(values.count)") }
        return values.first
    }

    /// What a proof for this request must name: its method, and its URL at the public name
    /// (the path as it arrived, without the query).
    static func target(_ request: HTTPRequest, issuer: String, accessToken: String?) -> DPoPProof.Target {
        DPoPProof.Target(
            method: request.method.rawValue, url: issuer + (request.encodedPath.map(String.init) ?? request.path), accessToken: accessToken)
    }
}

/// A refusal of a resource request over DPoP (RFC 9449 §7.1): 401, with the `DPoP` scheme in
/// `WWW-Authenticate` and the algorithms a proof may use, and `DPoP-Nonce` when the server asks
/// for one. The body is the refusal's own (`invalid_token`, `invalid_dpop_proof`,
/// `use_dpop_nonce`).
struct DPoPChallenge: HTTPResponseError {
    let refusal: AuthError

    var status: Int { 401 }
    var errorCode: String { refusal.errorCode }
    var errorDescription: String { refusal.errorDescription }

    var extraHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        let algorithms = DPoPProof.algorithmNames.joined(separator: " ")
        headers.set("WWW-Authenticate", #"DPoP error="\#(refusal.errorCode)", algs="\#(algorithms)""#)
        if let nonce = refusal.dpopNonce { headers.set("DPoP-Nonce", nonce) }
        return headers
    }
}

/// A fresh server nonce on every successful answer to a request with a DPoP proof, when
/// `dpop.nonce` is on (RFC 9449 §8.2): a client moves to the new nonce as soon as it is handed
/// out, instead of after the old one has run out and a `use_dpop_nonce` refusal.
///
/// Router-wide, since proofs come to the token endpoints and to every resource; every other
/// request passes untouched, synchronously.
struct DPoPNonceMiddleware: HTTPSynchronousMiddleware {
    let dpop: DPoPService

    func respond(to request: HTTPRequest, next: any HTTPResponder) async throws -> HTTPResponse {
        stamped(try await next.respond(to: request), request)
    }

    func respond(to request: HTTPRequest, next: (HTTPRequest) throws -> HTTPResponse) throws -> HTTPResponse {
        stamped(try next(request), request)
    }

    private func stamped(_ response: HTTPResponse, _ request: HTTPRequest) -> HTTPResponse {
        guard (200..<300).contains(response.status), request.headers["DPoP"] != nil, let nonce = dpop.currentNonce() else { return response }
        var response = response
        response.headers.set("DPoP-Nonce", nonce)
        return response
    }
}
