import LatchkeyCrypto
import LatchkeyHTTP

/// The passkey part of the sign-in, sign-up and second-factor pages: a form that posts a
/// WebAuthn answer (`credential.toJSON()`) to its route, hidden until ``script`` shows it, so a
/// browser without JavaScript or without WebAuthn sees the page as before.
///
/// The options (`PublicKeyCredentialRequestOptionsJSON` or `…CreationOptionsJSON`, made when
/// the page was rendered) travel in the form's `data-options` attribute, escaped as every
/// attribute is; the one script reads them from there, so the script's text never changes and
/// the page's `Content-Security-Policy` allows it by its hash (``scriptHash``), never by
/// `'unsafe-inline'`.
struct PasskeyForm: Sendable, Hashable {
    /// What the browser is asked to do.
    enum Ceremony: String, Sendable, Hashable {
        /// `navigator.credentials.get`, the button and, with ``PasskeyForm/conditional``,
        /// AutoFill's conditional mediation on load.
        case get
        /// `navigator.credentials.create`, on the button.
        case create
    }

    var ceremony: Ceremony
    /// Where the form posts, its CSRF token and the authorization request it carries.
    var form: HostedForm
    /// The flow the options belong to (`flow_id` of the service).
    var flowID: String
    /// The options as JSON text.
    var options: String
    /// The button's label.
    var button: String
    /// Whether the script also offers the passkey to AutoFill (`mediation: "conditional"`),
    /// against the username field's `autocomplete="username webauthn"`.
    var conditional: Bool = false

    /// What the page says when the browser or the authenticator gave no passkey (cancelled,
    /// timed out, refused by the authenticator).
    static let notUsed = "The passkey was not used. Please try again, or sign in another way."

    /// The document's fragment: the hidden form with its button, the place of the browser's
    /// refusal, and the script.
    func render() -> HTML {
        let fields = [HiddenField(name: HostedForm.csrfFieldName, value: form.csrfToken)] + form.hidden + [
            HiddenField(name: "flow_id", value: flowID), HiddenField(name: "credential", value: ""),
        ]
        return """
            <form method="post" action="\(PageLayout.safeURL(form.action) ?? "")" id="passkey" data-ceremony="\(ceremony.rawValue)" \
            data-conditional="\(conditional ? "true" : "false")" data-failed="\(Self.notUsed)" data-options="\(options)" hidden>
            \(fields.map(\.input))<button type="button" id="passkey-button" class="secondary">\(button)</button>
            </form>
            <p class="alert" id="passkey-alert" hidden></p>
            <script>\(HTML(stringLiteral: Self.script))</script>

            """
    }

    /// The one script of the passkey pages. It turns the options JSON into WebAuthn's options
    /// (`PublicKeyCredential.parse…OptionsFromJSON`, or base64url decoded by hand where a
    /// browser lacks it), asks the browser, and posts `credential.toJSON()` (or the same built
    /// by hand) in the form. On the sign-in page it first hands a conditional request to
    /// AutoFill, and aborts it when the button asks instead: a browser runs one request at a time.
    static let script = """
        (function () {
          var form = document.getElementById("passkey");
          if (!form || !window.PublicKeyCredential || !navigator.credentials) return;
          var P = window.PublicKeyCredential, create = form.dataset.ceremony === "create";
          var alert = document.getElementById("passkey-alert"), conditional = null, clicked = false, waiting = Promise.resolve();
          function bytes(s) {
            return Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), function (c) { return c.charCodeAt(0); });
          }
          function text(b) {
            return btoa(String.fromCharCode.apply(null, new Uint8Array(b))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
          }
          function options() {
            var o = JSON.parse(form.dataset.options);
            if (create && P.parseCreationOptionsFromJSON) return P.parseCreationOptionsFromJSON(o);
            if (!create && P.parseRequestOptionsFromJSON) return P.parseRequestOptionsFromJSON(o);
            o.challenge = bytes(o.challenge);
            if (o.user) o.user.id = bytes(o.user.id);
            (o.allowCredentials || o.excludeCredentials || []).forEach(function (d) { d.id = bytes(d.id); });
            return o;
          }
          function json(c) {
            if (c.toJSON) return c.toJSON();
            var r = c.response, out = { clientDataJSON: text(r.clientDataJSON) };
            if (r.attestationObject) {
              out.attestationObject = text(r.attestationObject);
              out.transports = r.getTransports ? r.getTransports() : [];
            } else {
              out.authenticatorData = text(r.authenticatorData);
              out.signature = text(r.signature);
              if (r.userHandle) out.userHandle = text(r.userHandle);
            }
            return { id: c.id, rawId: text(c.rawId), type: c.type, response: out,
              authenticatorAttachment: c.authenticatorAttachment, clientExtensionResults: c.getClientExtensionResults() };
          }
          function send(c) {
            form.elements.credential.value = JSON.stringify(json(c));
            form.submit();
          }
          function failed(e) {
            if (e && e.name === "AbortError") return;
            alert.textContent = form.dataset.failed;
            alert.setAttribute("role", "alert");
            alert.hidden = false;
          }
          form.hidden = false;
          document.getElementById("passkey-button").addEventListener("click", function () {
            alert.hidden = true;
            clicked = true;
            if (conditional) { conditional.abort(); conditional = null; }
            waiting.then(function () {
              return create ? navigator.credentials.create({ publicKey: options() }) : navigator.credentials.get({ publicKey: options() });
            }).then(send, failed);
          });
          if (create || form.dataset.conditional !== "true" || !P.isConditionalMediationAvailable) return;
          P.isConditionalMediationAvailable().then(function (available) {
            if (!available || clicked) return;
            conditional = new AbortController();
            // AutoFill's request fails quietly: the person asked for nothing yet.
            waiting = navigator.credentials.get({ mediation: "conditional", publicKey: options(), signal: conditional.signal })
              .then(send, function () {});
          });
        })();
        """

    /// `'sha256-…'` of ``script``, for `script-src`.
    static let scriptHash = "'sha256-" + Base64.encode(HashFunction.sha256.hash(Array(script.utf8)), padded: true) + "'"
}
