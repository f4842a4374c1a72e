"""Verifies a Latchkey ID token the way a relying party would: PyJWT, keys fetched from the
server's /.well-known/jwks.json, the checks of OpenID Connect Core 3.1.3.7. Test tooling only.

  verify_id_token.py JWKS_URL TOKEN ISSUER CLIENT_ID ALG NONCE ACCESS_TOKEN
prints the claims and exits 0, or prints the error class and exits 1.
"""
import base64
import hashlib
import json
import sys

import jwt

jwks_url, token, issuer, client_id, algorithm, nonce, access_token = sys.argv[1:8]
try:
    header = jwt.get_unverified_header(token)
    if header.get("alg") != algorithm:
        raise jwt.InvalidAlgorithmError(f"alg is {header.get('alg')}, not {algorithm}")
    key = jwt.PyJWKClient(jwks_url, cache_keys=False).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=[algorithm], issuer=issuer, audience=client_id,
                        options={"require": ["exp", "iat", "sub", "auth_time"]})
    if claims.get("azp") != client_id:
        raise jwt.InvalidTokenError("azp is not the client id")
    if claims.get("nonce") != nonce:
        raise jwt.InvalidTokenError("nonce does not match")
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    expected = base64.urlsafe_b64encode(digest[: len(digest) // 2]).rstrip(b"=").decode("ascii")
    if claims.get("at_hash") != expected:
        raise jwt.InvalidTokenError("at_hash does not match the access token")
    print(json.dumps(claims, sort_keys=True))
except Exception as error:
    print(f"{type(error).__name__}: {error}")
    sys.exit(1)
