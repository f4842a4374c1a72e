import LatchkeyBasics

/// HTML text that is safe to send: written as a string literal, every interpolated value is
/// escaped unless it is itself ``HTML``.
///
/// ```swift
/// let page: HTML = "<p>Signed in as \(user.email)</p>"   // the e-mail address is escaped
/// let layout: HTML = "<main>\(page)</main>"              // HTML inside HTML is kept
/// return .html(layout)
/// ```
///
/// Escaping makes text safe in element content and in quoted attribute values (`"…"` or `'…'`);
/// it does not make a value safe as a URL (`href="javascript:…"`), inside `<script>` or `<style>`,
/// or in an unquoted attribute. Pages put values only in those two safe places.
package struct HTML: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    package private(set) var text: String

    /// The markup of a literal, trusted as written.
    package init(stringLiteral literal: String) {
        text = literal
    }

    package init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
    }

    /// Text to show, escaped: `HTML(escaping: "<b>")` is `&lt;b&gt;`.
    package init(escaping text: String) {
        self.text = HTML.escape(text)
    }

    package var description: String { text }

    /// Builds ``HTML`` from a literal: literal parts are kept, values are escaped.
    package struct StringInterpolation: StringInterpolationProtocol {
        var text = ""

        package init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        package mutating func appendLiteral(_ literal: String) { text += literal }

        /// Escapes the value's text.
        package mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            text += HTML.escape(value.description)
        }

        /// Escapes `value`.
        package mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }

        /// Keeps markup that is already ``HTML``.
        package mutating func appendInterpolation(_ html: HTML) { text += html.text }

        /// Keeps each piece of markup, one after the other (a list of rows, say).
        package mutating func appendInterpolation(_ pieces: [HTML]) {
            for piece in pieces { text += piece.text }
        }
    }

    /// Pieces of markup one after the other.
    package init(joining pieces: [HTML]) {
        text = pieces.map(\.text).joined()
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references
    /// (``HTMLEscaping/escape(_:)``, shared with the mail templates).
    package static func escape(_ text: String) -> String { HTMLEscaping.escape(text) }
}

/// `application/x-www-form-urlencoded` text (WHATWG URL Standard §5): query strings of
/// redirects and form bodies.
package enum FormEncoding {
    /// `a=1&b=2`, in the order given, every byte but RFC 3986's unreserved characters
    /// percent-encoded (a space as `%20`, which every form parser reads as a space).
    package static func encode(_ fields: [(String, String)]) -> String {
        fields.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
    }

    /// Parses `a=1&b=2` as ``HTTPRequest/formBody()`` does.
    ///
    /// - Returns: `nil` for a broken escape, text that is not UTF-8, a control character, or a
    ///   name given twice.
    package static func decode(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { PercentEncoding.parseForm(UnsafeRawBufferPointer($0)) }
    }
}

/// The fields of a form body with accessors that answer 400 `invalid_request` naming the field.
package struct FormFields: Sendable {
    /// Every field, by name.
    package let values: [String: String]

    /// Wraps parsed fields.
    package init(_ values: [String: String]) { self.values = values }

    /// The field `name`, or `nil` when it is absent or empty (RFC 6749 §3.1: a parameter sent
    /// without a value is treated as omitted).
    package func optional(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// The field `name`.
    ///
    /// - Throws: ``HTTPError/invalidRequest(_:)`` when it is absent or empty.
    package func required(_ name: String) throws(HTTPError) -> String {
        guard let value = optional(name) else { throw HTTPError.invalidRequest("the form field \(name) is required") }
        return value
    }
}

extension HTTPRequest {
    /// ``formBody()`` with typed accessors.
    ///
    /// - Throws: As ``formBody()``.
    package func formFields() throws -> FormFields { FormFields(try formBody()) }
}
