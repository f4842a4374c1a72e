public import Foundation

/// A link the server mailed, `{server}/email/{purpose}?token=T`, opened as a universal link: what
/// the app should do with it. Read one with ``LatchkeyClient/emailLink(from:)``.
///
/// The token is a secret that proves the mail was read, as the code does: send it to the server
/// with the call of its case, once, and keep it nowhere. `description` does not show it.
public enum EmailLink: Sendable, Hashable, CustomStringConvertible {
    /// Confirms the account's address: ``LatchkeyClient/confirmEmailVerification(token:)``.
    case verify(token: String)
    /// Sets a new password: ask the user for one, then ``LatchkeyClient/resetPassword(token:newPassword:)``.
    case reset(token: String)
    /// Signs in: ``LatchkeyClient/signIn(emailToken:)``.
    case signIn(token: String)
    /// Moves the account to the new address: ``LatchkeyClient/confirmEmailChange(token:)``.
    case change(token: String)

    /// What the link is for.
    public var purpose: EmailPurpose {
        switch self {
        case .verify: .verify
        case .reset: .reset
        case .signIn: .signIn
        case .change: .change
        }
    }

    /// The link's token, for the confirmation call.
    public var token: String {
        switch self {
        case .verify(let token), .reset(let token), .signIn(let token), .change(let token): token
        }
    }

    /// The link for `purpose` with `token`.
    public init(purpose: EmailPurpose, token: String) {
        switch purpose {
        case .verify: self = .verify(token: token)
        case .reset: self = .reset(token: token)
        case .signIn: self = .signIn(token: token)
        case .change: self = .change(token: token)
        }
    }

    /// The mailed link `url`, when the server at `server` sent it; `nil` for anything else.
    ///
    /// Strict, as a URL that arrives from outside the app deserves: the scheme, host and port
    /// must be the server's (no user info), the path exactly the server's path followed by
    /// `/email/verify`, `/email/reset`, `/email/sign-in` or `/email/change` (no other spelling,
    /// no trailing slash), and the query must carry exactly one `token` of 1 to 128 characters
    /// of `A–Z a–z 0–9 - . _ ~`. Other query parameters and a fragment are ignored; nothing of
    /// them is sent anywhere.
    public init?(url: URL, server: URL) {
        guard let link = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let base = URLComponents(url: server, resolvingAgainstBaseURL: false),
            let scheme = link.scheme?.lowercased(), scheme == "https" || scheme == "http", scheme == base.scheme?.lowercased(),
            let host = link.host?.lowercased(), !host.isEmpty, host == base.host?.lowercased(),
            Self.port(of: link, scheme: scheme) == Self.port(of: base, scheme: scheme),
            link.user == nil, link.password == nil
        else { return nil }
        var prefix = base.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        prefix += "/email/"
        let path = link.percentEncodedPath
        guard path.hasPrefix(prefix), let purpose = EmailPurpose(rawValue: String(path.dropFirst(prefix.count))) else { return nil }
        guard let pairs = FormEncoding.decode(link.percentEncodedQuery ?? "") else { return nil }
        let tokens = pairs.filter { $0.name == "token" }.map(\.value)
        guard tokens.count == 1, let token = tokens.first, Self.isToken(token) else { return nil }
        self.init(purpose: purpose, token: token)
    }

    /// The purpose, without the token.
    public var description: String { "EmailLink.\(purpose == .signIn ? "signIn" : purpose.rawValue)(token: <redacted>)" }

    /// The port a URL of `scheme` reaches: the explicit one, else the scheme's default.
    private static func port(of components: URLComponents, scheme: String) -> Int {
        components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// 1 to 128 characters of RFC 3986's unreserved set: what the server mails (base64url) and
    /// accepts (at most 128 bytes).
    private static func isToken(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                    true
                default: false
                }
            }
    }
}
