import LatchkeyHTTP

/// The page a mailed link opens, `/email/{purpose}?token=…`. Opening it consumes nothing: a mail
/// scanner or a link prefetcher that follows the link only sees a button, and the button's
/// `POST` confirms. A reset's page asks for the new password first. A sign-in link has nothing
/// to confirm in a browser: the page says where the code goes (the app, or the hosted sign-in
/// page that asked for it).
struct EmailLinkPage: Sendable {
    enum State: Sendable {
        /// The button (and for a reset the password field), carrying the token.
        case ask(token: String, error: String?)
        case done
        case failed(String)
    }

    var purpose: EmailPurpose
    var state: State

    func render() -> HTML {
        switch state {
        case .ask(let token, let error):
            let (title, lead, button): (String, String, String) =
                switch purpose {
                case .verify: ("Confirm your email", "Confirm that this address is yours.", "Confirm email")
                case .reset: ("Choose a new password", "Your new password ends every session of the account.", "Set password")
                case .signIn: ("Sign in", "Sign in with the app on the device where you asked for the code.", "Continue")
                case .change: ("Confirm your new email", "Your account will use this address from now on.", "Confirm new email")
                }
            let password: HTML =
                purpose == .reset
                ? """
                <label for="password">New password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" required>

                """ : ""
            return PageLayout.document(
                title: title,
                body: """
                    <h1>\(title)</h1>
                    <p class="lead">\(lead)</p>
                    \(PageLayout.alert(error))<form method="post" action="/email/\(purpose.rawValue)">
                    <input type="hidden" name="token" value="\(token)">
                    \(password)<button type="submit">\(button)</button>
                    </form>

                    """)
        case .done:
            let (title, message): (String, String) =
                switch purpose {
                case .verify: ("Email confirmed", "Your email address is confirmed. You can close this window.")
                case .reset: ("Password changed", "Sign in with your new password. You can close this window.")
                case .signIn:
                    ("Enter the code", "Type the code from the message where you asked for it: in the app, or on the sign-in page. On the device with the app, the link opens it.")
                case .change: ("Email changed", "Your account uses the new address now. You can close this window.")
                }
            return PageLayout.document(title: title, body: "<h1>\(title)</h1>\n<p>\(message)</p>\n")
        case .failed(let message):
            return PageLayout.document(
                title: "This link does not work", body: "<h1>This link does not work</h1>\n\(PageLayout.alert(message))")
        }
    }
}
