import LatchkeyHTTP

/// What every form of the hosted pages posts besides its own inputs: where it goes, its CSRF
/// token (field `csrf_token`) and the authorization request it carries through the page.
package struct HostedForm: Sendable, Hashable {
    /// The path the form posts to, e.g. `/oauth/authorize`.
    package var action: String
    /// The token ``CSRFProtection`` made for this browser (S29).
    package var csrfToken: String
    /// The authorization request's parameters, sent back as they came.
    package var hidden: [HiddenField]

    /// Creates a form description.
    package init(action: String, csrfToken: String, hidden: [HiddenField] = []) {
        self.action = action
        self.csrfToken = csrfToken
        self.hidden = hidden
    }

    /// The name of the CSRF token's field.
    package static let csrfFieldName = "csrf_token"

    /// The opening `<form>` tag and its hidden inputs, CSRF token first; the page closes it. An
    /// action that is not a path or an http(s) URL is left empty (the form posts to the page).
    var opening: HTML {
        let fields = [HiddenField(name: Self.csrfFieldName, value: csrfToken)] + hidden
        return """
            <form method="post" action="\(PageLayout.safeURL(action) ?? "")">
            \(fields.map(\.input))
            """
    }
}

/// One `<input type="hidden">` of a ``HostedForm``.
package struct HiddenField: Sendable, Hashable {
    /// The field's name, as the route reads it back.
    package var name: String
    /// Its value, sent back as given.
    package var value: String

    /// Creates a hidden field.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    var input: HTML {
        "<input type=\"hidden\" name=\"\(name)\" value=\"\(value)\">\n"
    }
}
