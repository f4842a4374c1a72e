"""A relying party built on authlib, with a scripted browser, against Latchkey's OAuth provider.

Usage: oauth_rp.py BASE_URL CLIENT_ID CLIENT_SECRET|- REDIRECT_URI USERNAME PASSWORD [SCOPE]

authlib (not our code) builds the authorization URL with PKCE S256, state and nonce, checks the
state of the callback, exchanges the code, validates the ID token (signature against the JWKS,
iss, aud, nonce, at_hash), calls userinfo, refreshes, introspects and revokes. The "browser" is
requests with its own cookie jar: the hosted pages' cookies are `Secure`, which a jar would not
send over the loopback's plain http, so it keeps them by hand, as a browser does for 127.0.0.1.

Prints one JSON object with what each step saw; the Swift test asserts on it. Tokens are never
printed, only their shapes.
"""

import json
import re
import sys
import urllib.parse

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, jwt
from authlib.oidc.core import CodeIDToken

base, client_id, secret, redirect_uri, username, password = sys.argv[1:7]
scope = sys.argv[7] if len(sys.argv) > 7 else "openid profile email offline_access"
secret = None if secret == "-" else secret
out = {}


class Browser:
    """GETs and form POSTs that keep cookies by hand and never follow redirects."""

    def __init__(self):
        self.cookies = {}
        self.http = requests.Session()

    def _send(self, method, url, data=None):
        url = urllib.parse.urljoin(base + "/", url)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())} if self.cookies else {}
        response = self.http.request(method, url, data=data, headers=headers, allow_redirects=False)
        for name, value in response.raw.headers.items():
            if name.lower() != "set-cookie":
                continue
            pair, _, attributes = value.partition(";")
            key, _, val = pair.strip().partition("=")
            if "max-age=0" in attributes.lower():
                self.cookies.pop(key, None)
            else:
                self.cookies[key] = val
        return response

    def get(self, url):
        return self._send("GET", url)

    def post(self, url, data):
        return self._send("POST", url, data)


def form(page):
    """The action and fields of the page's one form."""
    action = re.search(r'<form[^>]*action="([^"]*)"', page).group(1)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    fields = {k: html_unescape(v) for k, v in fields.items()}
    return html_unescape(action), fields


def html_unescape(text):
    import html
    return html.unescape(text)


def follow(browser, response, limit=10):
    """Follows 303s on this server; stops at the first one that leaves it (the callback)."""
    for _ in range(limit):
        if response.status_code not in (302, 303):
            return response, None
        location = response.headers["Location"]
        if not location.startswith("/") and not location.startswith(base):
            return response, location
        response = browser.get(location)
    raise SystemExit("too many redirects")


auth_method = "client_secret_basic" if secret else "none"
client = OAuth2Session(
    client_id, secret, scope=scope, redirect_uri=redirect_uri, code_challenge_method="S256",
    token_endpoint_auth_method=auth_method)
verifier = "v" * 20 + "-._~" + "0123456789abcdefghijklmnop"
nonce = "n-" + "0123456789abcdef"
url, state = client.create_authorization_url(base + "/oauth/authorize", code_verifier=verifier, nonce=nonce)

browser = Browser()
page = browser.get(url)
out["sign_in_status"] = page.status_code
out["sign_in_has_autofill"] = 'autocomplete="username"' in page.text and 'autocomplete="current-password"' in page.text
out["frame_ancestors_none"] = "frame-ancestors 'none'" in page.headers.get("Content-Security-Policy", "")
action, fields = form(page.text)
fields.update({"username": username, "password": password})
response, callback = follow(browser, browser.post(action, fields))
out["signed_in_cookie"] = "__Host-latchkey_session" in browser.cookies
if callback is None:
    out["consent_page"] = 'name="decision"' in response.text
    action, fields = form(response.text)
    fields["decision"] = "allow"
    response, callback = follow(browser, browser.post(action, fields))
out["callback_status"] = response.status_code
query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(callback).query))
out["callback_iss"] = query.get("iss")
out["callback_state_matches"] = query.get("state") == state

token = client.fetch_token(base + "/oauth/token", authorization_response=callback, code_verifier=verifier)
out["token_keys"] = sorted(token.keys())
out["scope"] = token.get("scope")

jwks = JsonWebKey.import_key_set(requests.get(base + "/.well-known/jwks.json").json())
claims = jwt.decode(
    token["id_token"], jwks, claims_cls=CodeIDToken,
    claims_options={"iss": {"essential": True, "value": base}, "aud": {"essential": True, "value": client_id}},
    claims_params={"nonce": nonce, "access_token": token["access_token"]})
claims.validate()
out["id_token"] = {k: claims.get(k) for k in ("sub", "aud", "azp", "nonce", "amr") if k in claims}
out["id_token_has"] = sorted(k for k in ("auth_time", "sid", "at_hash", "exp", "iat") if k in claims)
out["id_token_alg"] = claims.header["alg"]

out["userinfo"] = client.get(base + "/oauth/userinfo").json()
out["v1_me_status"] = requests.get(base + "/v1/me", headers={"Authorization": "Bearer " + token["access_token"]}).status_code

if "refresh_token" in token:
    first_refresh = token["refresh_token"]
    refreshed = client.refresh_token(base + "/oauth/token", refresh_token=first_refresh)
    out["refreshed_keys"] = sorted(refreshed.keys())
    out["refresh_rotated"] = refreshed["refresh_token"] != first_refresh
    if secret:
        info = client.introspect_token(base + "/oauth/introspect", token=refreshed["access_token"]).json()
        out["introspect_access"] = {k: info.get(k) for k in ("active", "client_id", "sub", "token_type")}
        info = client.introspect_token(base + "/oauth/introspect", token=refreshed["refresh_token"]).json()
        out["introspect_refresh"] = {k: info.get(k) for k in ("active", "client_id")}
    revoked = client.revoke_token(base + "/oauth/revoke", token=refreshed["refresh_token"])
    out["revoke_status"] = revoked.status_code
    again = requests.post(
        base + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": refreshed["refresh_token"], "client_id": client_id},
        auth=(client_id, secret) if secret else None)
    out["refresh_after_revoke"] = [again.status_code, again.json().get("error")]
    if secret:
        info = client.introspect_token(base + "/oauth/introspect", token=refreshed["access_token"]).json()
        out["introspect_after_revoke"] = info.get("active")

print(json.dumps(out, sort_keys=True))
