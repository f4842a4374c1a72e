import Foundation

/// What py_webauthn (Duo Labs' relying-party library, a verifier no one here wrote) makes of a
/// registration and an assertion: `verify_registration_response`, then
/// `verify_authentication_response` with the key and sign count the registration gave. Runs
/// `LATCHKEY_PYTHON` (`make test` sets it to the venv of scripts/requirements-test.txt, which
/// lists `webauthn`) or `python3`; a missing interpreter or module is a thrown ``Failure``, never
/// a skip.
package enum PythonWebAuthn {
    /// The verdict, as the fixture prints it: `registration` (`credential_id`, `sign_count`, `fmt`,
    /// `user_verified`, `backed_up`, `device_type`, `aaguid`) and `authentication`
    /// (`new_sign_count`, `user_verified`, `backed_up`), or `error` (the exception's class and
    /// message) for whichever step refused.
    ///
    /// - Parameters:
    ///   - registration: a `RegistrationResponseJSON`, serialized.
    ///   - assertion: an `AuthenticationResponseJSON` of the same credential, serialized.
    ///   - challenges: the registration's and the assertion's challenges, base64url.
    package static func verify(
        registration: String, assertion: String, registrationChallenge: String, assertionChallenge: String, rpID: String, origin: String
    ) throws -> String {
        let python = ProcessInfo.processInfo.environment["LATCHKEY_PYTHON"] ?? "/usr/bin/python3"
        let input = """
            {"registration": \(registration), "assertion": \(assertion), "registration_challenge": "\(registrationChallenge)", \
            "assertion_challenge": "\(assertionChallenge)", "rp_id": "\(rpID)", "origin": "\(origin)"}
            """
        let result = try Subprocess.run(URL(fileURLWithPath: python), ["-c", script], input: input)
        guard result.status == 0 else { throw Failure(message: "\(python) exited \(result.status): \(result.error)") }
        return result.output
    }

    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { "py_webauthn: \(message)" }
    }

    static let script = """
        import json, sys
        try:
            import webauthn
            from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
        except ImportError as error:
            sys.exit("the webauthn module (py_webauthn, scripts/requirements-test.txt) is not installed: %s" % error)
        given = json.load(sys.stdin)
        name = lambda value: getattr(value, "value", value)  # an enum in some releases, a str in others
        out = {}
        try:
            registered = webauthn.verify_registration_response(
                credential=json.dumps(given["registration"]),
                expected_challenge=base64url_to_bytes(given["registration_challenge"]),
                expected_origin=given["origin"], expected_rp_id=given["rp_id"], require_user_verification=True)
            out["registration"] = {
                "credential_id": bytes_to_base64url(registered.credential_id), "sign_count": registered.sign_count,
                "fmt": name(registered.fmt), "user_verified": registered.user_verified,
                "backed_up": registered.credential_backed_up, "device_type": name(registered.credential_device_type),
                "aaguid": registered.aaguid,
            }
            authenticated = webauthn.verify_authentication_response(
                credential=json.dumps(given["assertion"]),
                expected_challenge=base64url_to_bytes(given["assertion_challenge"]),
                expected_rp_id=given["rp_id"], expected_origin=given["origin"],
                credential_public_key=registered.credential_public_key,
                credential_current_sign_count=registered.sign_count, require_user_verification=True)
            out["authentication"] = {
                "new_sign_count": authenticated.new_sign_count, "user_verified": authenticated.user_verified,
                "backed_up": authenticated.credential_backed_up,
            }
        except Exception as error:
            out["error"] = "%s: %s" % (type(error).__name__, error)
        print(json.dumps(out))
        """
}
