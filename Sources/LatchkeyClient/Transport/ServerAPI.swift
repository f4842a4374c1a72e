import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
import LatchkeyWire

/// The `/v1` endpoints over a transport: builds each request from its `LatchkeyWire` model and
/// reads the answer into one, turning error bodies into ``LatchkeyError``.
struct ServerAPI: Sendable {
    let baseURL: URL
    let transport: any HTTPTransport
    /// Signs a DPoP proof for every request, when the configuration names a key.
    var dpop: DPoPProver? = nil
    /// Earns the app check tokens of the sign-in and token calls, when the configuration sets up
    /// App Attest.
    var appCheck: AppCheckTokens? = nil

    /// A successful answer: its status and body.
    struct Answer {
        var status: Int
        var body: Data
    }

    /// An error answer's details, before they become a ``LatchkeyError``.
    struct Failure: Error {
        var status: Int
        var body: WireErrorBody?
        var retryAfter: Duration?
    }

    func url(_ path: String) -> URL {
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: base + path)!
    }

    /// Sends `method path` with `body`; returns the 2xx answer or throws ``Failure`` (an error
    /// status) or ``LatchkeyError`` (no answer).
    ///
    /// With DPoP, every request carries a proof (and the access token goes as `DPoP`); a
    /// `use_dpop_nonce` answer is sent once more with the server's nonce (RFC 9449 §8), and a
    /// nonce on any answer is kept for the next proof. With `appCheck` (a sign-in or token call)
    /// and App Attest set up, the request carries an app check token; an `app_check_failed`
    /// answer is sent once more with a new one.
    func send(
        _ method: String, _ path: String, body: (any WireEncodable)? = nil, bearer: String? = nil, appCheck attach: Bool = false
    ) async throws -> Answer {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.json.serialized)
        }
        if let bearer { request.setValue((dpop == nil ? "Bearer " : "DPoP ") + bearer, forHTTPHeaderField: "Authorization") }
        let appCheck = attach ? self.appCheck : nil
        var (nonceRetried, appCheckRetried) = (false, false)
        while true {
            if let dpop {
                request.setValue(try await dpop.proof(method: method, url: url(path), accessToken: bearer), forHTTPHeaderField: "DPoP")
            }
            let appCheckToken = try await appCheck?.token()
            if let appCheckToken { request.setValue(appCheckToken, forHTTPHeaderField: "X-Latchkey-App-Check") }
            let (data, response) = try await perform(request)
            if let dpop, let nonce = response.value(forHTTPHeaderField: "DPoP-Nonce") { await dpop.remember(nonce: nonce) }
            if (200..<300).contains(response.statusCode) { return Answer(status: response.statusCode, body: data) }
            let failure = try? WireErrorBody(parsing: Array(data))
            if !nonceRetried, dpop != nil, failure?.error == .useDPoPNonce, response.value(forHTTPHeaderField: "DPoP-Nonce") != nil {
                nonceRetried = true
                continue
            }
            if !appCheckRetried, let appCheck, let appCheckToken, failure?.error == .appCheckFailed {
                await appCheck.discard(appCheckToken)
                appCheckRetried = true
                continue
            }
            let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init).map { Duration.seconds($0) }
            throw Failure(status: response.statusCode, body: failure, retryAfter: retryAfter)
        }
    }

    /// Sends `request` as it is and returns the answer, whatever its status.
    ///
    /// - Throws: ``LatchkeyError``: ``LatchkeyError/Code/canceled`` for a canceled request,
    ///   ``LatchkeyError/Code/network`` when no answer came.
    func perform(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        do {
            return try await transport.send(request)
        } catch let error as LatchkeyError {
            throw error
        } catch is CancellationError {
            throw LatchkeyError(.canceled, "the request was canceled")
        } catch let error as URLError where error.code == .cancelled {
            throw LatchkeyError(.canceled, "the request was canceled")
        } catch {
            throw LatchkeyError(.network, "the server could not be reached")
        }
    }

    /// Sends and decodes the answer as `Model`.
    func call<Model: WireDecodable>(
        _ method: String, _ path: String, body: (any WireEncodable)? = nil, bearer: String? = nil, appCheck: Bool = false,
        as type: Model.Type = Model.self
    ) async throws -> Model {
        let answer = try await send(method, path, body: body, bearer: bearer, appCheck: appCheck)
        do {
            return try Model(parsing: Array(answer.body))
        } catch {
            throw LatchkeyError(.invalidResponse, "\(path) answered a body the wire contract does not describe: \(error)")
        }
    }
}

extension ServerAPI.Failure {
    /// The error an app sees for this answer.
    var error: LatchkeyError {
        guard let body else {
            return LatchkeyError(.server(code: status >= 500 ? "server_error" : "http_\(status)"), "the server answered HTTP \(status)", status: status)
        }
        let code: LatchkeyError.Code
        switch body.error {
        case .invalidCredentials: code = .invalidCredentials
        case .rateLimited: code = .rateLimited(retryAfter: body.retryAfter.map { .seconds($0) } ?? retryAfter)
        default: code = .server(code: body.error.rawValue)
        }
        return LatchkeyError(
            code, body.errorDescription.isEmpty ? "the server answered \(body.error.rawValue)" : body.errorDescription, status: status,
            reason: body.reason, requestID: body.requestID)
    }
}
