import LatchkeyHTTP
import LatchkeyJSON
import Testing

@Suite("HTML escaping and forms")
struct PageTests {
    @Test("S29: escape replaces & < > \" ' and keeps everything else")
    func escaping() {
        #expect(HTML.escape(#"<script>alert("x" & 'y')</script>"#) == "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;")
        #expect(HTML.escape("plain text, é ü 日本") == "plain text, é ü 日本")
        #expect(HTML.escape("&amp;") == "&amp;amp;")
        #expect(HTML.escape("") == "")
    }

    @Test("S29: interpolated values are escaped by construction; literals and HTML values are kept")
    func interpolation() {
        let name = #""><img src=x onerror=alert(1)>"#
        let row: HTML = "<li title=\"\(name)\">\(name)</li>"
        #expect(row.text == #"<li title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</li>"#)
        let count = 3
        let page: HTML = "<ul>\([row, row])</ul><p>\(count) & \(row)</p>"
        #expect(page.text == "<ul>\(row.text)\(row.text)</ul><p>3 & \(row.text)</p>")
        #expect(HTML(escaping: "<b>").text == "&lt;b&gt;")
        #expect(HTML(joining: ["<a>", HTML(escaping: "<")]).text == "<a>&lt;")
    }

    @Test("form encoding keeps the order, escapes all but unreserved characters, and round-trips through the parser")
    func forms() throws {
        let fields = [("redirect_uri", "https://app.example/cb?x=1&y=2"), ("state", "a b+c/é"), ("code", "")]
        let encoded = FormEncoding.encode(fields)
        #expect(encoded == "redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1%26y%3D2&state=a%20b%2Bc%2F%C3%A9&code=")
        #expect(FormEncoding.decode(encoded) == ["redirect_uri": "https://app.example/cb?x=1&y=2", "state": "a b+c/é", "code": ""])
        #expect(FormEncoding.decode("a=1&a=2") == nil)
        #expect(FormEncoding.decode("a=%zz") == nil)
    }

    @Test("S24: typed form fields: a missing or empty required field is 400 invalid_request naming it")
    func formFields() throws {
        let request = HTTPRequest(
            method: .post, path: "/", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("username=ada&password=&x=1".utf8))
        let fields = try request.formFields()
        #expect(try fields.required("username") == "ada")
        #expect(fields.optional("password") == nil)
        #expect(fields.optional("missing") == nil)
        #expect(throws: HTTPError.invalidRequest("")) { try fields.required("password") }
        let error = #expect(throws: HTTPError.self) { try fields.required("missing") }
        #expect(error?.errorDescription == "the form field missing is required")
    }
}
