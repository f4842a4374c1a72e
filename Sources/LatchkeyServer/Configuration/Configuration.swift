import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyHTTPServer
import LatchkeyStore

/// Everything an operator can set, as docs/reference.md's "Configuration" section describes.
///
/// Read from a JSON file (every key optional) and `LATCHKEY_<UPPER_SNAKE_PATH>` environment
/// variables, which win over the file; see ``ConfigurationLoader``. Defaults are the values
/// below. Durations are integer seconds.
package struct Configuration: Sendable, Equatable {
    /// `listen`: the address the HTTP server binds, `host:port`.
    package var listen = "127.0.0.1:8080"
    /// `public_url`: the URL clients reach this server at; the `iss` of our tokens. When unset,
    /// `http://` plus the bound address.
    package var publicURL: String?
    /// `audience`: the `aud` of our access tokens; the public URL when unset.
    package var audience: String?
    /// `database`: `sqlite:PATH`, or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]`
    /// (`postgresql://` too; libpq reads the parameters, `sslmode` among them).
    package var database = "sqlite:./latchkey-data/latchkey.sqlite"
    /// `database_password_file`: a file holding the PostgreSQL password (one line), instead of
    /// putting it in the URL. The environment variable `LATCHKEY_DATABASE_PASSWORD` may hold
    /// the password itself (environment only, never the file).
    package var databasePasswordFile: String?
    /// The PostgreSQL password from `LATCHKEY_DATABASE_PASSWORD`.
    package var databasePassword: String?
    /// `database_pool_size`: PostgreSQL connections per instance.
    package var databasePoolSize = 8
    /// `database_pool_timeout`: seconds a request waits for a free PostgreSQL connection
    /// before it is answered 503 `overloaded`.
    package var databasePoolTimeout = 2
    /// `database_statement_timeout`: seconds one PostgreSQL statement may run.
    package var databaseStatementTimeout = 5
    /// `database_durability`: `full` (a commit is synced to the disk before it is answered) or
    /// `normal` (synced only at checkpoints: a power cut may roll back the last answered writes).
    package var databaseDurability = "full"
    /// `master_key_file`: 32 random bytes (raw or base64) that seal secrets at rest.
    package var masterKeyFile = "./latchkey-data/master.key"
    /// `access_token_ttl`.
    package var accessTokenTTL = 900
    /// `refresh_token_idle_ttl`.
    package var refreshTokenIdleTTL = 2_592_000
    /// `refresh_token_absolute_ttl`.
    package var refreshTokenAbsoluteTTL = 7_776_000
    /// `refresh_token_reuse_grace`: seconds after a rotation in which the retired token still
    /// gets its unused successor back (S8); 0 turns the grace off.
    package var refreshTokenReuseGrace = 60
    /// `browser_session_ttl`: seconds a sign-in on the hosted pages lasts (the browser session
    /// behind the `__Host-` cookie, and with it single sign-on across clients).
    package var browserSessionTTL = 86_400
    /// `apple`: Sign in with Apple.
    package var apple = Apple()
    /// `password`: password accounts.
    package var password = Password()
    /// `rate_limits`: brute-force limits (docs/security.md S14).
    package var rateLimits = RateLimits()
    /// `email`: the email flows and their mail.
    package var email = Email()
    /// `device`: the device authorization grant (RFC 8628).
    package var device = Device()
    /// `passkeys`: WebAuthn passkeys (docs/reference.md, "Passkeys").
    package var passkeys = Passkeys()
    /// `dpop`: sender-constrained tokens (RFC 9449; docs/dpop.md).
    package var dpop = DPoP()
    /// `providers`: upstream identity providers people may sign in through (docs/providers.md).
    package var providers: [Provider] = []
    /// `app_attest`: App Attest and app check tokens (docs/reference.md, "App Attest").
    package var appAttest = AppAttestSettings()
    /// `associated_domains`: what `/.well-known/apple-app-site-association` lists.
    package var associatedDomains = AssociatedDomains()
    /// `trusted_proxies`: addresses or networks (`10.0.0.0/8`) of the reverse proxies in front
    /// of the server, whose `X-Forwarded-For` names the client. Empty: every peer is a client.
    package var trustedProxies: [String] = []
    /// `dev`: development mode (sandbox Apple, generated master key, banner).
    package var dev = false
    /// Development mode open to the local network (`serve --dev --lan`), so a Simulator or a
    /// phone can reach it. Only the command line turns it on, never a file or the environment:
    /// the sandbox Apple it mounts signs a token for anyone who asks.
    package var lan = false

    /// Sign in with Apple settings (docs/reference.md).
    package struct Apple: Sendable, Equatable {
        /// `team_id`: the Apple developer team that owns the app.
        package var teamID = ""
        /// `key_id`: the id of the Sign in with Apple key (`.p8`).
        package var keyID = ""
        /// `private_key_file`: the `.p8` key that signs client secrets.
        package var privateKeyFile = ""
        /// `client_ids`: the bundle ids and service ids tokens may be issued to (`aud`).
        package var clientIDs: [String] = []
        /// `issuer`: the identity tokens' `iss`.
        package var issuer = "https://appleid.apple.com"
        /// `keys_url`: Apple's JWK Set.
        package var keysURL = "https://appleid.apple.com/auth/keys"
        /// `token_url`: code exchange and refresh-token validation.
        package var tokenURL = "https://appleid.apple.com/auth/token"
        /// `revoke_url`: token revocation.
        package var revokeURL = "https://appleid.apple.com/auth/revoke"
        /// `nonce`: `required` or `optional`.
        package var nonce = "required"
        /// `authorize_url`: where web Sign in with Apple sends the browser.
        package var authorizeURL = "https://appleid.apple.com/auth/authorize"
        /// `web_client_id`: the Services ID of web Sign in with Apple on the hosted sign-in page;
        /// empty for none.
        package var webClientID = ""
    }

    /// Password account settings (docs/security.md S11–S15).
    package struct Password: Sendable, Equatable {
        /// `enabled`.
        package var enabled = true
        /// `min_length`, in characters after NFKC normalisation.
        package var minLength = 8
        /// `argon2`: `memory_kib`, `iterations`, `parallelism`.
        package var argon2 = Argon2id.Parameters.owaspMinimum
        /// `hashing_threads`: threads that run Argon2id; 0 means one per core.
        package var hashingThreads = 0
        /// `hashing_queue_limit`: hashes that may wait for a thread; more are answered 503
        /// `overloaded` at once (docs/security.md S15).
        package var hashingQueueLimit = 32
    }

    /// Brute-force limits (docs/security.md S14).
    package struct RateLimits: Sendable, Equatable {
        /// `login_per_account_15m`.
        package var loginPerAccount15m = 10
        /// `login_per_ip_15m`.
        package var loginPerIP15m = 100
        /// `email_per_address_hour`: email-flow requests per address in an hour.
        package var emailPerAddressHour = 5
        /// `email_per_ip_hour`: email-flow requests per client address in an hour.
        package var emailPerIPHour = 50
    }

    /// The device authorization grant (docs/oauth.md, "Devices without a browser").
    package struct Device: Sendable, Equatable {
        /// `code_ttl`: seconds a device code and its user code stay good.
        package var codeTTL = 600
    }

    /// The email flows (docs/reference.md, "Email").
    package struct Email: Sendable, Equatable {
        /// `code_ttl`: seconds a mailed link and code stay good.
        package var codeTTL = 900
        /// `from`: the sender of every message, `Name <address>`.
        package var from = "Latchkey <no-reply@localhost>"
        /// `product_name`: what the messages call the service.
        package var productName = "Latchkey"
        /// `smtp_url`: where mail goes (`smtp://`, `smtps://`, `smtp+plain://`); unset in
        /// development mode, the sandbox mailbox.
        package var smtpURL: String?
        /// `smtp_username`: AUTH PLAIN or LOGIN with this name.
        package var smtpUsername: String?
        /// `smtp_password_file`: a file holding the SMTP password (one line). The environment
        /// variable `LATCHKEY_SMTP_PASSWORD` may hold the password itself.
        package var smtpPasswordFile: String?
        /// The SMTP password from `LATCHKEY_SMTP_PASSWORD`.
        package var smtpPassword: String?
        /// `ca_file`: a PEM file of CA certificates trusted for the SMTP server besides the system's.
        package var caFile: String?
        /// `templates_dir`: a directory of message templates, `{locale}/{purpose}.subject`,
        /// `.txt` and `.html`, over the compiled-in English and French; checked at start.
        package var templatesDir: String?

        /// Whether mail can be sent: to the SMTP server, or in development mode to the sandbox.
        package func isAvailable(dev: Bool) -> Bool { smtpURL != nil || dev }
    }

    /// One upstream identity provider (docs/providers.md): an OpenID provider found by discovery,
    /// or GitHub's OAuth 2.
    package struct Provider: Sendable, Equatable {
        package enum Kind: String, Sendable, Equatable {
            case oidc
            case github
        }

        /// `id`: `[a-z0-9-]{1,32}`; the `provider` parameter, the callback's path segment and
        /// the identities' `provider`.
        package var id: String
        package var kind: Kind
        /// `display_name`: what the sign-in page's button says after "Continue with".
        package var displayName: String
        package var clientID: String
        /// `client_secret_file`: a file holding the client secret (one line).
        package var clientSecretFile: String?
        /// The secret, read at load from `client_secret_file` or `LATCHKEY_PROVIDER_<ID>_SECRET`;
        /// `nil` for a public client (PKCE alone). Never printed.
        package var clientSecret: ProviderSecret?
        package var scopes: [String]
        /// `link_by_email`: whether a first sign-in links to an existing account with the same
        /// email when both sides have verified it.
        package var linkByEmail = true
        /// `algorithms`: the ID token signature algorithms accepted (`oidc`).
        package var algorithms: [String] = ["RS256", "ES256"]
        /// `issuer` (`oidc`): discovery is read from `{issuer}/.well-known/openid-configuration`.
        package var issuer = ""
        /// `authorize_url`, `token_url`, `api_url` (`github`).
        package var authorizeURL = "https://github.com/login/oauth/authorize"
        package var tokenURL = "https://github.com/login/oauth/access_token"
        package var apiURL = "https://api.github.com"
        /// The development sandbox upstream (`--dev`): its issuer is this server's own public
        /// URL plus `/sandbox/oidc`, known once the port is bound.
        package var isSandbox = false

        package init(id: String, kind: Kind, displayName: String, clientID: String, scopes: [String]) {
            self.id = id
            self.kind = kind
            self.displayName = displayName
            self.clientID = clientID
            self.scopes = scopes
        }
    }

    /// A provider's client secret: its description never shows the value.
    package struct ProviderSecret: Sendable, Equatable, CustomStringConvertible {
        package var value: String
        package init(_ value: String) { self.value = value }
        package var description: String { "<secret>" }
    }

    /// DPoP: tokens bound to a key the client proves it holds (RFC 9449).
    package struct DPoP: Sendable, Equatable {
        /// `required`: issue only DPoP-bound tokens; a token request without a proof is refused.
        package var required = false
        /// `nonce`: `off`, or `on` to make every proof carry a server nonce (RFC 9449 §8).
        package var nonce = "off"
    }

    /// Passkeys: this server as a WebAuthn relying party.
    package struct Passkeys: Sendable, Equatable {
        /// `enabled`.
        package var enabled = true
        /// `rp_id`: the relying party id, a domain; unset, the host of the public URL.
        package var rpID: String?
        /// `rp_name`: the name authenticators show; unset, `email.product_name`.
        package var rpName: String?
        /// `origins`: the exact origins a ceremony may come from; empty, the public URL's origin.
        package var origins: [String] = []
        /// `user_verification`: `required` or `preferred`.
        package var userVerification = "required"
        /// `attestation`: `none` (statements accepted as `none`) or `direct` (`packed`, `apple` and
        /// `fido-u2f` statements verified to ``attestationRoots``).
        package var attestation = "none"
        /// `attestation_roots`: PEM files of the root certificates attestation chains must lead
        /// to with `direct`.
        package var attestationRoots: [String] = []
        /// The certificates of ``attestationRoots``, read and parsed when the configuration is
        /// loaded (a file that does not read stops the load, naming the setting).
        package var attestationRootCertificates: [TrustedRootCertificate] = []
        /// `timeout`: seconds a ceremony's challenge stays good.
        package var timeout = 300
    }

    /// App Attest: which apps may attest keys, and which endpoints need an app check token.
    package struct AppAttestSettings: Sendable, Equatable {
        /// `app_ids`: the apps allowed, each `TEAMID.bundle.id`; empty, App Attest is off.
        package var appIDs: [String] = []
        /// `environment`: `production` or `development`, the one App Attest environment accepted.
        package var environment = "production"
        /// `root_ca_file`: a PEM file of the root to trust instead of Apple App Attestation Root
        /// CA (tests).
        package var rootCAFile: String?
        /// The certificates of ``rootCAFile``, read when the configuration is loaded.
        package var rootCertificates: [TrustedRootCertificate] = []
        /// `token_ttl`: seconds an app check token lives.
        package var tokenTTL = 3_600
        /// `enforce`: the endpoints that need an app check token: `signup`, `sign_in`, `token`.
        package var enforce: [String] = []
        /// `enforce_mode`: `enforce` (refuse without a valid token) or `log` (count and audit).
        package var enforceMode = "enforce"
    }

    /// A root certificate attestation chains may lead to; equal when the DER bytes are.
    package struct TrustedRootCertificate: Sendable, Equatable {
        package let certificate: X509Certificate
        /// The file it was read from, for messages.
        package let file: String

        package init(_ certificate: X509Certificate, file: String) {
            self.certificate = certificate
            self.file = file
        }

        package static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.certificate.derRepresentation == rhs.certificate.derRepresentation && lhs.file == rhs.file
        }
    }

    /// The relying party passkeys use, with the defaults resolved against the public URL.
    package struct RelyingParty: Sendable, Equatable {
        /// The RP ID, a domain.
        package var id: String
        /// The name authenticators show.
        package var name: String
        /// The origins ceremonies may come from.
        package var origins: [String]

        package init(id: String, name: String, origins: [String]) {
            self.id = id
            self.name = name
            self.origins = origins
        }
    }

    /// App ids (`TEAMID.bundle.id`) for the apple-app-site-association file.
    package struct AssociatedDomains: Sendable, Equatable {
        /// `webcredentials`: apps that may offer this domain's passwords (Password AutoFill).
        package var webcredentials: [String] = []
        /// `applinks`: apps that open this domain's https links (universal links, callbacks).
        package var applinks: [String] = []
    }

    /// The defaults.
    package init() {}
}

extension Configuration {
    /// The bind address as host and port (validated at load).
    package var listenAddress: (host: String, port: Int) {
        Self.parseListen(listen) ?? ("127.0.0.1", 8080)
    }

    /// Whether `database` is a PostgreSQL URL.
    package var usesPostgreSQL: Bool { PostgreSQLURL.isPostgreSQL(database) }

    /// `database` as it may be shown: a PostgreSQL password replaced by `***`.
    package var databaseForDisplay: String { PostgreSQLURL.redact(database) }

    /// The SQLite file, for a `sqlite:` database (validated at load).
    package var sqlitePath: String {
        database.hasPrefix("sqlite:") ? String(database.dropFirst("sqlite:".count)) : database
    }

    /// The passkeys' relying party for `publicURL` (the configured one, or the bound address),
    /// or `nil` when passkeys are off or the RP ID would be an IP address, which WebAuthn does not
    /// allow (a server reached only by an address has no passkeys).
    ///
    /// Without `passkeys.origins` the origins are the public URL's (the hosted pages) and
    /// `https://` + the RP ID, what an iOS app with the `webcredentials` association presents.
    package func relyingParty(publicURL: String) -> RelyingParty? {
        guard passkeys.enabled else { return nil }
        let origin = Self.origin(of: publicURL)
        guard let id = passkeys.rpID ?? origin.flatMap({ Self.host(ofOrigin: $0) }), !Self.isIPAddress(id) else { return nil }
        guard passkeys.origins.isEmpty else { return RelyingParty(id: id, name: passkeys.rpName ?? email.productName, origins: passkeys.origins) }
        guard let origin else { return nil }
        let app = "https://" + id
        let origins = origin == app ? [origin] : [origin, app]
        return RelyingParty(id: id, name: passkeys.rpName ?? email.productName, origins: origins)
    }

    /// `scheme://host[:port]` of an absolute http(s) URL, lowercased, without its path.
    static func origin(of text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The host of an origin `scheme://host[:port]` (no path, query or user), or `nil`.
    static func host(ofOrigin origin: String) -> String? {
        guard let url = URL(string: origin), let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/",
            url.query == nil, url.fragment == nil, url.user == nil
        else { return nil }
        return host.lowercased()
    }

    /// Whether `host` is an IPv4 or IPv6 address (with or without brackets) rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return IPNetwork.bytes(of: bare) != nil
    }

    static func parseListen(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else { return nil }
        return (host, port)
    }

    /// Whether a host name or address (IPv6 with or without brackets) is on the loopback
    /// interface, where plain http is allowed.
    package static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
