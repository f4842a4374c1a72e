/// Names of the passkey providers people use, by the AAGUID their authenticator data carries.
///
/// A passkey registered without a name is called after its provider ("Apple Passwords",
/// "1Password"), so an account holder with several can tell them apart; the list and the CLI
/// show the same name. An AAGUID is only what the authenticator claims: with
/// `passkeys.attestation` `none` nothing proves it, so the name is a label, never a policy.
///
/// The entries are from the community list passkeydeveloper/passkey-authenticator-aaguids
/// (`aaguid.json`, commit 47b6f84e4e3c, August 2026), limited to password managers and
/// platforms; security keys are named by their owners. The all-zero AAGUID (many synced
/// passkeys and every `none` attestation that hides its model) names nothing.
enum KnownAuthenticators {
    /// What a passkey is called when neither its registration nor this table names it.
    static let fallbackName = "Passkey"

    /// Lowercase AAGUID → provider name.
    static let names: [String: String] = [
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "Apple Passwords",
        "dd4ec289-e01d-41c9-bb89-70fa845d4bf2": "iCloud Keychain (Managed)",
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "b5397666-4885-aa6b-cebf-e52262a439a2": "Chromium Browser",
        "771b48fd-d3d4-4f74-9232-fc157ab0507a": "Edge on Mac",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
        "6028b017-b1d4-4c02-b4b3-afcdafc96bb2": "Windows Hello",
        "d3452668-01fd-4c12-926c-83a4204853aa": "Microsoft Password Manager",
        "53414d53-554e-4700-0000-000000000000": "Samsung Pass",
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
        "531126d6-e717-415c-9320-3d9aa6981239": "Dashlane",
        "50726f74-6f6e-5061-7373-50726f746f6e": "Proton Pass",
        "fdb141b2-5d84-443e-8a35-4698c205a502": "KeePassXC",
        "b84e4048-15dc-4dd0-8640-f4f60813c8af": "NordPass",
        "0ea242b4-43c4-4a1b-8b17-dd6d0b6baec6": "Keeper",
        "f3809540-7f14-49c1-a8b3-8f813b225541": "Enpass",
    ]

    /// The provider's name for a 16-byte AAGUID, or nil when the table does not know it.
    static func name(aaguid: [UInt8]) -> String? {
        names[PasskeyService.uuid(aaguid)]
    }

    /// The name a new passkey gets: the account holder's, else its provider's, else
    /// ``fallbackName``.
    static func defaultName(given: String?, aaguid: [UInt8]) -> String {
        given ?? name(aaguid: aaguid) ?? fallbackName
    }
}
