import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LatchkeyJSON

/// The user's inbox, played by the development server's sandbox mailbox (`GET /sandbox/mail.json`):
/// what the server mailed, read as a user reads it. The code and the link are secrets the demo
/// uses and never prints.
struct SandboxMailbox {
    let base: URL

    /// A message as the user sees it: the subject, the 6-digit code and the link of its text.
    struct Message {
        var subject: String
        var code: String
        var link: String
    }

    /// The newest message to `address`, waiting up to 10 seconds for the server's outbox to send it.
    func newest(to address: String) async throws -> Message {
        for _ in 0..<100 {
            if let message = try await messages(to: address).first { return message }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw DemoFailure("no mail to \(address) reached the sandbox mailbox within 10 seconds")
    }

    /// The messages to `address` that carry a code and a link, newest first.
    private func messages(to address: String) async throws -> [Message] {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(from: URL(string: base.absoluteString + "/sandbox/mail.json")!)
        } catch {
            throw DemoFailure("GET /sandbox/mail.json got no answer from \(base.absoluteString); is the server running (make run)?")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 404 { throw DemoFailure("no sandbox mailbox at \(base.absoluteString): is the server in development mode (make run)?") }
        guard status == 200, let json = try? JSONValue(parsing: Array(data)) else { throw DemoFailure("the sandbox mailbox answered \(status)") }
        return (json["messages"]?.arrayValue ?? []).compactMap { message in
            guard message["to"]?.stringValue == address, let text = message["text"]?.stringValue else { return nil }
            let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let code = lines.first(where: { $0.hasPrefix("Your code: ") })?.dropFirst("Your code: ".count),
                let link = lines.first(where: { $0.hasPrefix("http") })
            else { return nil }
            return Message(subject: message["subject"]?.stringValue ?? "", code: String(code), link: link)
        }
    }
}
