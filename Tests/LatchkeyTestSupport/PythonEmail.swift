import Foundation

/// What Python's `email` package (policy `default`, its strict modern parser) makes of an RFC 5322
/// message: a parser no one here wrote. Python's standard library is all it needs; it runs
/// `LATCHKEY_PYTHON` (`make test` sets it) or `python3`.
package enum PythonEmail {
    /// A JSON object: `headers` (names, in order), `from`, `to` (addresses), `from_name`,
    /// `to_name`, `subject`, `message_id`, `date` (ISO 8601), `plain` and `html` (the decoded
    /// parts, LF line ends) and `defects` (every defect the parser found, of any part).
    package static func parse(_ message: String) throws -> String {
        let python = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"] ?? "/usr/bin/python3"
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script], input: message)
        guard result.status == 0 else { throw Failure(message: result.error) }
        return result.output
    }

    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { "python email: \(message)" }
    }

    static let script = """
        import email, email.policy, json, sys
        raw = sys.stdin.buffer.read()
        m = email.message_from_bytes(raw, policy=email.policy.default)
        plain = m.get_body(('plain',)); html = m.get_body(('html',))
        print(json.dumps({
            "headers": [k for k in m.keys()],
            "from": [a.addr_spec for a in m['From'].addresses], "from_name": m['From'].addresses[0].display_name,
            "to": [a.addr_spec for a in m['To'].addresses], "to_name": m['To'].addresses[0].display_name,
            "subject": str(m['Subject']), "message_id": m['Message-ID'], "date": m['Date'].datetime.isoformat(),
            "plain": plain.get_content().replace("\\r\\n", "\\n"), "html": html.get_content().replace("\\r\\n", "\\n"),
            "defects": [str(d) for d in m.defects] + [str(d) for p in m.walk() for d in p.defects],
        }))
        """
}
