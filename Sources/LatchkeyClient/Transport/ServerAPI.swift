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
    func send(_ method: String, _ path: String, body: (any WireEncodable)? = nil, bearer: String? = nil) async throws -> Answer {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.json.serialized)
        }
        if let bearer { request.setValue("Bearer " + bearer, forHTTPHeaderField: "Authorization") }
        let (data, response) = try await perform(request)
        guard (200..<300).contains(response.statusCode) else {
            let retryAfter = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init).map { Duration.seconds($0) }
            throw Failure(status: response.statusCode, body: try? WireErrorBody(parsing: Array(data)), retryAfter: retryAfter)
        }
        return Answer(status: response.statusCode, body: data)
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
        _ method: String, _ path: String, body: (any WireEncodable)? = nil, bearer: String? = nil, as type: Model.Type = Model.self
    ) async throws -> Model {
        let answer = try await send(method, path, body: body, bearer: bearer)
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
