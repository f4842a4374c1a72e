/// What `enrollTOTP()` returns: the secret to put into an authenticator app, shown once.
public struct TOTPEnrollment: Sendable, Hashable {
    /// The secret in base32 without padding, for typing in.
    public var secret: String
    /// The `otpauth://totp/…` Key URI, for a QR code.
    public var otpauthURI: String

    /// An enrolment with this secret.
    public init(secret: String, otpauthURI: String) {
        self.secret = secret
        self.otpauthURI = otpauthURI
    }
}
