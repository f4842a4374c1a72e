"""DPoP proofs (RFC 9449) made with jwcrypto, a JOSE library Latchkey does not share code with.

Reads one JSON request per line on standard input and answers one JSON line each, so one
process serves a whole test run. Keys are generated here and named by the caller; nothing
private leaves this process but what a request asks to put in a (hostile) proof.

Request: {"key": NAME, "kty": "EC" | "OKP" | "RSA", "htm": ..., "htu": ..., "iat": SECONDS,
          "jti": optional, "access_token": optional (gives ath), "ath": optional (given as is),
          "nonce": optional, "typ": optional (default dpop+jwt),
          "attack": optional: "private_jwk" | "alg_none" | "hs256", "omit": [claim names]}
Answer:  {"proof": COMPACT, "jkt": RFC 7638 thumbprint of the key} or {"error": TEXT}
"""
import base64
import hashlib
import json
import sys
import uuid

from jwcrypto import jwk, jws
from jwcrypto.common import json_encode

keys = {}
algorithms = {"EC": "ES256", "OKP": "EdDSA", "RSA": "RS256"}


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_named(name, kty):
    if name not in keys:
        if kty == "EC":
            keys[name] = jwk.JWK.generate(kty="EC", crv="P-256")
        elif kty == "OKP":
            keys[name] = jwk.JWK.generate(kty="OKP", crv="Ed25519")
        else:
            keys[name] = jwk.JWK.generate(kty="RSA", size=2048)
    return keys[name]


def proof(request):
    kty = request.get("kty", "EC")
    key = key_named(request["key"], kty)
    claims = {
        "jti": request.get("jti") or str(uuid.uuid4()),
        "htm": request["htm"],
        "htu": request["htu"],
        "iat": int(request["iat"]),
    }
    if "access_token" in request:
        claims["ath"] = b64(hashlib.sha256(request["access_token"].encode()).digest())
    if "ath" in request:
        claims["ath"] = request["ath"]
    if "nonce" in request:
        claims["nonce"] = request["nonce"]
    for name in request.get("omit", []):
        claims.pop(name, None)
    attack = request.get("attack")
    header = {"typ": request.get("typ", "dpop+jwt"), "alg": algorithms[kty], "jwk": key.export_public(as_dict=True)}
    payload = json_encode(claims)
    if attack == "alg_none":
        header["alg"] = "none"
        compact = b64(json_encode(header).encode()) + "." + b64(payload.encode()) + "."
    elif attack == "hs256":
        secret = jwk.JWK.generate(kty="oct", size=256)
        header["alg"] = "HS256"
        token = jws.JWS(payload)
        token.add_signature(secret, alg="HS256", protected=json_encode(header))
        compact = token.serialize(compact=True)
    else:
        if attack == "private_jwk":
            header["jwk"] = key.export_private(as_dict=True)
        token = jws.JWS(payload)
        token.add_signature(key, alg=header["alg"], protected=json_encode(header))
        compact = token.serialize(compact=True)
    return {"proof": compact, "jkt": key.thumbprint()}


for line in sys.stdin:
    try:
        answer = proof(json.loads(line))
    except Exception as error:  # the test reads the reason
        answer = {"error": "%s: %s" % (type(error).__name__, error)}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
