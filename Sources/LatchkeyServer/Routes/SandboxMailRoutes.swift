import LatchkeyHTTP
import LatchkeyJSON
import LatchkeyMail

/// The development mailbox (dev mode only): `GET /sandbox/mail`, a page listing the newest
/// messages, and `/sandbox/mail.json` for scripts and tests.
struct SandboxMailRoutes {
    let mailbox: DevelopmentMailbox

    func register(on router: Router) {
        let mailbox = mailbox
        router.get("/sandbox/mail.json") { _ in
            let messages = mailbox.messages.map { delivered -> JSONValue in
                [
                    "id": .number(Double(delivered.id)), "received_at": .string(RFC3339.string(delivered.receivedAt)), "from": .string(delivered.from),
                    "to": .string(delivered.message.to), "subject": .string(delivered.message.subject), "purpose": .string(delivered.message.purpose),
                    "text": .string(delivered.message.text), "html": .string(delivered.message.html),
                    "message_id": .string(delivered.mime.messageID), "raw": .string(delivered.raw),
                ]
            }
            var response = HTTPResponse.json(["messages": .array(messages)])
            response.headers.set("Cache-Control", "no-store")
            return response
        }
        router.get("/sandbox/mail") { _ in
            let items = mailbox.messages.map { delivered -> HTML in
                """
                <article>
                <h2>\(delivered.message.subject)</h2>
                <p class="lead">To \(delivered.message.to), \(RFC3339.string(delivered.receivedAt))</p>
                <pre>\(delivered.message.text)</pre>
                </article>

                """
            }
            let body: HTML = items.isEmpty ? "<p>No mail yet.</p>\n" : HTML(joining: items)
            return .page(PageLayout.document(title: "Sandbox mailbox", body: "<h1>Sandbox mailbox</h1>\n\(body)"))
        }
    }
}
