import LatchkeyHTTP

/// The frame every hosted page shares: one `<main>` column, the stylesheet, no script.
///
/// Values reach the markup only through ``HTML`` interpolation, which escapes them for element
/// content and quoted attributes (S29); URLs also pass ``safeURL(_:)``, since escaping does not
/// make a `javascript:` link harmless.
enum PageLayout {
    /// A whole document: `<html lang="en">`, a viewport for phones, the stylesheet, and `body`
    /// inside `<main>`; `wide` for the admin console's tables.
    static func document(title: String, body: HTML, wide: Bool = false) -> HTML {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <meta name="referrer" content="no-referrer">
        <title>\(title)</title>
        <link rel="stylesheet" href="\(Stylesheet.path)">
        </head>
        <body>
        \(wide ? "<main class=\"wide\">" : "<main>" as HTML)
        <div class="card">
        \(body)</div>
        </main>
        </body>
        </html>

        """
    }

    /// The error, in words, announced to screen readers; nothing when there is none.
    static func alert(_ message: String?) -> HTML {
        guard let message, !message.isEmpty else { return "" }
        return "<p class=\"alert\" role=\"alert\">\(message)</p>\n"
    }

    /// A link styled as a button, or a plain link; nothing when `url` is missing or unsafe.
    static func link(_ url: String?, _ text: String, button: Bool = false) -> HTML {
        guard let url = url.flatMap(safeURL) else { return "" }
        return button ? "<a class=\"button secondary\" href=\"\(url)\">\(text)</a>\n" : "<a href=\"\(url)\">\(text)</a>"
    }

    /// The lines of links under a form, each "`question` `text`" with `text` linking to `url`
    /// (a line without a question is the link alone); a line whose link is missing or unsafe is
    /// left out, and nothing at all is written when no line is left.
    static func links(_ lines: [(question: String, url: String?, text: String)]) -> HTML {
        let kept = lines.filter { safeURL($0.url ?? "") != nil }.map { line -> HTML in
            line.question.isEmpty ? "<p>\(link(line.url, line.text))</p>" : "<p>\(line.question) \(link(line.url, line.text))</p>"
        }
        guard !kept.isEmpty else { return "" }
        return "<div class=\"links\">\(HTML(joining: kept))</div>\n"
    }

    /// The field of a code a person reads elsewhere and types (an authenticator app's, a
    /// mailed one): `one-time-code` for AutoFill, a numeric keypad on phones, and `hint` under
    /// the label, tied to the field by `aria-describedby`.
    static func codeField(hint: String) -> HTML {
        """
        <div class="field">
        <label for="code">Code</label>
        <span class="hint" id="code-hint">\(hint)</span>
        <input type="text" id="code" name="code" autocomplete="one-time-code" inputmode="numeric" autocapitalize="none" spellcheck="false" aria-describedby="code-hint" required>
        </div>

        """
    }

    /// `url` when it is a path on this server (`/…` but not `//…`) or an `https:` or `http:` URL;
    /// `nil` for anything else (`javascript:`, `data:`, a scheme-relative URL).
    static func safeURL(_ url: String) -> String? {
        let lowered = url.lowercased()
        if lowered.hasPrefix("https://") || lowered.hasPrefix("http://") { return url }
        if url.hasPrefix("/") && !url.hasPrefix("//") && !url.hasPrefix("/\\") { return url }
        return nil
    }

    /// "to continue to Example", or nothing without a client name.
    static func continuing(to clientName: String?) -> HTML {
        guard let clientName, !clientName.isEmpty else { return "" }
        return "<p class=\"lead\">to continue to \(clientName)</p>\n"
    }
}
