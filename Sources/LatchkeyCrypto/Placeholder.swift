internal import CLatchkeyOpenSSL
internal import CLatchkeyArgon2
public enum Placeholder { static func f() -> Int { Int(OpenSSL_version_num()) + Int(ARGON2_VERSION_13.rawValue) } }
