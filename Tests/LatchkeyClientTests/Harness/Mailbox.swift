import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON
import LatchkeyTestSupport

/// A message of the development server's sandbox mailbox, read as a user reads mail: the link and
/// the 6-digit code from its text. The link and code are secrets: a test compares them, never
/// prints them.
struct SandboxMail {
    var subject: String
    var text: String
    /// The first `http…` line of the text: `{public_url}/email/{purpose}?token=T`.
    var link: URL?
    /// The `Your code: NNNNNN` of the text.
    var code: String?
    /// The link's token.
    var token: String? {
        link.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "token" }?.value }
    }
}

extension DevServer {
    /// Every message delivered to `address`, oldest first (`GET /sandbox/mail.json`).
    func messages(to address: String) async throws -> [SandboxMail] {
        let (data, response) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("sandbox/mail.json"))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw HarnessError("the sandbox mailbox did not answer 200") }
        let messages = try JSONValue(parsing: Array(data))["messages"]?.arrayValue ?? []
        return messages.filter { $0["to"]?.stringValue == address }.reversed().map { message in
            let text = message["text"]?.stringValue ?? ""
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let code = lines.first { $0.hasPrefix("Your code: ") }.map { String($0.dropFirst("Your code: ".count)) }
            return SandboxMail(
                subject: message["subject"]?.stringValue ?? "", text: text, link: lines.first { $0.hasPrefix("http") }.flatMap(URL.init(string:)),
                code: code)
        }
    }

    /// The `count`th message to `address`, waiting for it (the outbox sends within a second or two).
    func mail(to address: String, count: Int = 1) async throws -> SandboxMail {
        guard try await eventually(within: .seconds(15), { try await messages(to: address).count >= count }) else {
            throw HarnessError("message \(count) to \(address) did not arrive within 15 s")
        }
        return try await messages(to: address)[count - 1]
    }
}
