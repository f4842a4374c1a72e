import LatchkeyHTTP

/// `/device`: where a person types the code a device (an Apple TV) shows, RFC 8628 §3.3. The
/// code from `verification_uri_complete` is filled in, and still needs the button (§5.4).
struct DeviceCodePage: Sendable, Hashable {
    /// Where the form posts and its CSRF token.
    var form: HostedForm
    /// The code to fill in, as the device shows it.
    var code: String
    /// What went wrong, in words, shown above the form.
    var error: String?

    /// The document.
    func render() -> HTML {
        PageLayout.document(
            title: "Sign in a device",
            body: """
                <h1>Sign in a device</h1>
                <p class="lead">Enter the code your device shows.</p>
                \(PageLayout.alert(error))\(form.opening)<div class="field">
                <label for="user_code">Code</label>
                <input type="text" id="user_code" name="user_code" value="\(code)" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="16" placeholder="XXXX-XXXX" required>
                </div>
                <button type="submit">Continue</button>
                </form>

                """)
    }
}

/// The consent page of a device's sign-in: names the application, says that a device is asking
/// for the signed-in account, and posts `decision=allow` or `decision=deny` (RFC 8628 §5.4: the
/// person allows it here, never the link alone).
struct DeviceConsentPage: Sendable, Hashable {
    /// The application on the device.
    var clientName: String
    /// The scopes it asks for.
    var scopes: [String]
    /// Where the form posts, its CSRF token and the request it carries.
    var form: HostedForm

    /// The document.
    func render() -> HTML {
        let items = scopes.map { scope -> HTML in "<li>\(ConsentPage.describe(scope))</li>\n" }
        return PageLayout.document(
            title: "Sign in on your device?",
            body: """
                <h1>Sign in \(clientName) on your device?</h1>
                <p class="lead">A device is asking to sign in to \(clientName) with your account. Allow it only if you started this on your own device and it shows the code you typed.</p>
                <p>\(clientName) on that device would be able to:</p>
                <ul class="scopes">
                \(items)</ul>
                \(form.opening)<button type="submit" name="decision" value="allow">Allow</button>
                <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
                </form>

                """)
    }
}

/// What the person sees after answering a device's consent page.
struct DeviceAnsweredPage: Sendable, Hashable {
    var decision: DeviceAuthorizationService.Decision

    /// The document.
    func render() -> HTML {
        let (title, message): (String, String) =
            switch decision {
            case .approved: ("Your device is signed in", "You can go back to your device; it continues on its own. You may close this page.")
            case .denied: ("Request denied", "The device was not signed in. You may close this page.")
            case .gone: ("This code can no longer be used", "It has expired or was already answered. Start again on your device.")
            }
        return PageLayout.document(
            title: title,
            body: """
                <h1>\(title)</h1>
                <p role="status">\(message)</p>

                """)
    }
}
