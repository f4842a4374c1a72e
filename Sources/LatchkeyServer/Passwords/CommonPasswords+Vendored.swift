import LatchkeyCommonPasswords

extension CommonPasswords {
    /// The vendored list, one password a line: Django's, compiled in by the
    /// `LatchkeyCommonPasswords` module (`CommonPasswordList.swift`, generated from
    /// `Vendor/common-passwords/`, where its source and licence are).
    static var vendoredList: String { CommonPasswordList.text }
}
