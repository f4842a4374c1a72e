"""Cross-checks Latchkey's JWTs with PyJWT and cryptography (test tooling only).

  interop.py verify JWKS_FILE TOKEN ISSUER AUDIENCE   prints the claims, exit 0; or the error, exit 1
  interop.py sign ES256|RS256 ISSUER AUDIENCE         prints {"jwks": ..., "token": ...}
"""
import json
import sys
import time

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa


def verify(jwks_file, token, issuer, audience):
    with open(jwks_file) as f:
        jwks = jwt.PyJWKSet.from_dict(json.load(f))
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in jwks.keys if k.key_id == kid)
    claims = jwt.decode(token, key.key, algorithms=[key.algorithm_name], issuer=issuer, audience=audience)
    print(json.dumps(claims, sort_keys=True))


def sign(alg, issuer, audience):
    if alg == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    else:
        private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    jwk.update(kid="python-" + alg, alg=alg, use="sig")
    now = int(time.time())
    claims = {"iss": issuer, "aud": audience, "sub": "from-python", "iat": now, "exp": now + 300}
    token = jwt.encode(claims, private, algorithm=alg, headers={"kid": jwk["kid"]})
    print(json.dumps({"jwks": {"keys": [jwk]}, "token": token}))


if __name__ == "__main__":
    try:
        if sys.argv[1] == "verify":
            verify(*sys.argv[2:6])
        else:
            sign(*sys.argv[2:5])
    except Exception as error:  # report which check failed, as the Swift side expects
        print(f"{type(error).__name__}: {error}")
        sys.exit(1)
