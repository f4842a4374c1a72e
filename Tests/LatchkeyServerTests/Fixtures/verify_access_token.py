"""Verifies a Latchkey access token the way another service would: PyJWT, keys fetched from the
server's /.well-known/jwks.json. Test tooling only.

  verify_access_token.py JWKS_URL TOKEN ISSUER AUDIENCE
prints the claims and exits 0, or prints the error class and exits 1.
"""
import json
import sys

import jwt

jwks_url, token, issuer, audience = sys.argv[1:5]
try:
    key = jwt.PyJWKClient(jwks_url, cache_keys=False).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["ES256"], issuer=issuer, audience=audience,
                        options={"require": ["exp", "iat", "sub", "jti"]})
    if jwt.get_unverified_header(token).get("typ") != "at+jwt":
        raise jwt.InvalidTokenError("typ is not at+jwt")
    print(json.dumps(claims, sort_keys=True))
except Exception as error:
    print(f"{type(error).__name__}: {error}")
    sys.exit(1)
