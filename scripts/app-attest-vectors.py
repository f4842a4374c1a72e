#!/usr/bin/env python3
"""Writes Tests/LatchkeyTestSupport/Vectors/app_attest_vectors.json from upstream test data.

Usage: scripts/app-attest-vectors.py NL_WALLET_CHECKOUT NODE_APP_ATTEST_CHECKOUT

Carries only data (attestation objects, assertions, keys, challenges) and the outcome Latchkey's
verifier must give; see Vectors/SOURCE.md for the upstream commits. Derived cases reuse the same
bytes under another expectation (another environment, app id, time, key id or client data hash).
"""
import base64
import hashlib
import json
import subprocess
import sys


def show(repo, path):
    return subprocess.check_output(["git", "-C", repo, "show", "HEAD:" + path])


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    nl_wallet, node = sys.argv[1], sys.argv[2]
    cases = []

    apple = base64.b64decode(show(nl_wallet, "wallet_core/lib/apple_app_attest/assets/test_attestation_object.b64"))
    apple_key_id = base64.b64decode("bSrEhF8TIzIvWSPwvZ0i2+UOBre4ASH84rK15m6emNY=")
    # Apple's guide appends the challenge itself, not its hash, to authData in this sample.
    apple_hash = b"test_server_challenge"
    apple_app = "0352187391.com.apple.example_app_attest"
    base = dict(kind="attestation", source="Apple, Attestation Object Validation Guide (via MinBZK/nl-wallet)",
                attestation=b64url(apple), keyID=b64url(apple_key_id), clientDataHash=b64url(apple_hash),
                appIDs=[apple_app], environment="production", time="2024-04-18T12:00:00Z")
    cases.append(dict(base, comment="Apple's sample: clientDataHash is the raw challenge", expected="accepted"))
    cases.append(dict(base, comment="the sample under the development environment", environment="development",
                      expected="environment_mismatch"))
    cases.append(dict(base, comment="another app id", appIDs=["0352187391.com.apple.other_app"], expected="rp_id_mismatch"))
    cases.append(dict(base, comment="after the credential certificate expired", time="2024-04-21T00:00:00Z",
                      expected="untrusted_attestation"))
    cases.append(dict(base, comment="SHA-256 of the challenge is not what this sample signed",
                      clientDataHash=b64url(hashlib.sha256(apple_hash).digest()), expected="nonce_mismatch"))
    cases.append(dict(base, comment="another key id", keyID=b64url(bytes(32)), expected="key_id_mismatch"))

    node_app = "V8H6LQ9448.io.uebelacker.AppAttestExample"
    for name, environment in [("production", "production"), ("development", "development")]:
        fixture = json.loads(show(node, "test/fixtures/attestation-%s.json" % name))
        challenge = base64.b64decode(fixture["challenge"])
        node_base = dict(kind="attestation", source="uebelack/node-app-attest test/fixtures/attestation-%s.json" % name,
                         attestation=b64url(base64.b64decode(fixture["attestation"])),
                         keyID=b64url(base64.b64decode(fixture["keyId"])),
                         clientDataHash=b64url(hashlib.sha256(challenge).digest()),
                         appIDs=[node_app], environment=environment, time="2024-03-01T00:00:00Z")
        cases.append(dict(node_base, comment="a device's %s attestation; clientDataHash is SHA-256 of the challenge" % name,
                          expected="accepted"))
        other = "development" if environment == "production" else "production"
        cases.append(dict(node_base, comment="the %s attestation under %s" % (name, other), environment=other,
                          expected="environment_mismatch"))

    test = show(node, "test/verifyAssertion.test.js").decode()
    assertion = base64.b64decode(test.split("Buffer.from(\n  '")[1].split("'")[0])
    pem = test.split("const PUBLIC_KEY =\n  '")[1].split("'")[0].replace("\\n", "\n")
    spki = base64.b64decode("".join(line for line in pem.splitlines() if not line.startswith("-----")))
    payload = '{"subject":"Lorem ipsum","message":"Lorem ipsum dolor sit amet, consectetur adipiscing elit."}'
    assertion_base = dict(kind="assertion", source="uebelack/node-app-attest test/verifyAssertion.test.js",
                          assertion=b64url(assertion), publicKey=b64url(spki[-65:]),
                          clientDataHash=b64url(hashlib.sha256(payload.encode()).digest()), appID=node_app,
                          previousCounter=0)
    cases.append(dict(assertion_base, comment="a device's assertion over SHA-256 of a JSON payload", expected="accepted",
                      counter=1))
    cases.append(dict(assertion_base, comment="replayed: the counter does not exceed the stored one", previousCounter=1,
                      expected="counter_mismatch"))
    cases.append(dict(assertion_base, comment="another payload", clientDataHash=b64url(hashlib.sha256(b"{}").digest()),
                      expected="bad_signature"))
    cases.append(dict(assertion_base, comment="another app id", appID="V8H6LQ9448.io.uebelacker.Other",
                      expected="rp_id_mismatch"))

    for number, case in enumerate(cases, start=1):
        case["tcId"] = number
    json.dump({"numberOfTests": len(cases), "testCases": cases}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


main()
