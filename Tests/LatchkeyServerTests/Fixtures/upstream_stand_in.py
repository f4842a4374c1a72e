#!/usr/bin/env python3
# A programmable, hostile upstream identity provider for the federation tests: an OpenID Connect
# provider and a GitHub-shaped OAuth 2 provider on one port, whose answers a test turns hostile
# through POST /control. Stdlib http.server (ThreadingHTTPServer) and PyJWT + cryptography from
# the test venv (scripts/requirements-test.txt). Started by Tests/LatchkeyTestSupport/UpstreamStandIn.swift.
#
#   upstream_stand_in.py [--port N] [--owner-pid PID]
#
# Binds 127.0.0.1 (a free port unless --port), prints `port=N` once it listens, and exits when
# --owner-pid ends, or on SIGTERM/SIGKILL. Its issuer is http://127.0.0.1:N, whatever Host a
# request names.
#
# OpenID Connect:  /.well-known/openid-configuration, /jwks (an RS256 and an ES256 key),
#                  /authorize (no page: 302 to redirect_uri with code, state and iss), /token,
#                  /userinfo.
# GitHub-shaped:   /login/oauth/authorize (302 with code and state, no iss),
#                  /login/oauth/access_token (JSON with `Accept: application/json`, else a form;
#                  errors as GitHub gives them: HTTP 200 with {"error": ...}), /api/user,
#                  /api/user/emails.
# Control:         POST /control (JSON: what the next sign-ins get, kept until changed; see
#                  CONTROL_KEYS), GET /control (the settings, client secret redacted),
#                  GET /requests (the log of authorize, token, userinfo and API requests, the
#                  client secret and code verifier redacted to their presence).
#
# Both token endpoints demand what Latchkey must always send: client authentication
# (client_secret_basic or client_secret_post, not both) with the configured client, a code issued
# to that client, unused and at most CODE_LIFETIME seconds old, the authorize request's
# redirect_uri, and PKCE: the authorize request's code_challenge with method S256, and a
# code_verifier whose S256 is that challenge. A failed check is 401 invalid_client or
# 400 invalid_grant (OpenID Connect); on the GitHub shape an HTTP 200 with
# incorrect_client_credentials, bad_verification_code or redirect_uri_mismatch, as GitHub answers.
import argparse, base64, copy, hashlib, hmac, json, os, secrets, signal, sys, threading, time, warnings
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, default=0)
parser.add_argument("--owner-pid", type=int)
args = parser.parse_args()
# hs256_client_secret signs with whatever secret the test chose, however short: no warning on the
# test's standard error for it.
warnings.simplefilter("ignore")

CODE_LIFETIME = 120
TOKEN_SLOW_SECONDS = 15
REDACTED = "[redacted]"
MODES = {
    "normal", "wrong_iss", "wrong_aud", "wrong_nonce", "alg_none", "hs256_client_secret", "expired",
    "unknown_kid", "iss_param_mismatch", "error_access_denied", "azp_mismatch", "token_500", "token_slow",
}
ALGORITHMS = {"RS256", "ES256"}
OTHER_ISSUER = "https://other-issuer.invalid"
OTHER_CLIENT = "someone-else"

DEFAULTS = {
    "client_id": "latchkey",
    "client_secret": "stand-in-secret",
    "mode": "normal",
    "alg": "RS256",
    # The OpenID Connect user.
    "sub": "upstream-user-1",
    "email": "upstream-user@example.com",
    "email_verified": True,
    "name": "Upstream User",
    # The GitHub user: /api/user's id and login, its public `email` (null unless set), and
    # /api/user/emails (when null: one primary address, `email` with `email_verified`).
    "id": 12345,
    "login": "octocat",
    "public_email": None,
    "emails": None,
}
CONTROL_KEYS = set(DEFAULTS) | {"reset"}

lock = threading.Lock()
settings = copy.deepcopy(DEFAULTS)
codes = {}          # code -> what its authorize request carried
access_tokens = {}  # access token -> the user it was issued for
log = []


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(key, kid, alg):
    numbers = key.public_key().public_numbers()
    if isinstance(key, rsa.RSAPrivateKey):
        size = lambda n: n.to_bytes((n.bit_length() + 7) // 8, "big")
        return {"kty": "RSA", "kid": kid, "use": "sig", "alg": alg, "n": b64url(size(numbers.n)), "e": b64url(size(numbers.e))}
    return {"kty": "EC", "kid": kid, "use": "sig", "alg": alg, "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}


RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
ROGUE_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # in no JWKS
SIGNING = {"RS256": (RSA_KEY, "stand-in-rs256"), "ES256": (EC_KEY, "stand-in-es256")}
JWKS = {"keys": [public_jwk(RSA_KEY, "stand-in-rs256", "RS256"), public_jwk(EC_KEY, "stand-in-es256", "ES256")]}


def s256(verifier):
    return b64url(hashlib.sha256(verifier.encode()).digest())


def github_emails(user):
    if user["emails"] is not None:
        return user["emails"]
    if user["email"] is None:
        return []
    return [{"email": user["email"], "primary": True, "verified": bool(user["email_verified"]), "visibility": "private"}]


class StandIn(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "UpstreamStandIn/1"

    def log_message(self, format, *arguments):  # quiet: the tests read /requests instead
        pass

    # -- plumbing ------------------------------------------------------------------------------

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def form(self):
        raw = self.body().decode("utf-8", "replace")
        return {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}

    def query(self):
        query = urllib.parse.urlsplit(self.path).query
        return {k: v[0] for k, v in urllib.parse.parse_qs(query, keep_blank_values=True).items()}

    def send(self, status, body=b"", content_type="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def redirect(self, url):
        self.send(302, b"", "text/plain", [("Location", url)])

    def record(self, entry):
        entry["time"] = time.time()
        with lock:
            log.append(entry)

    # -- routing -------------------------------------------------------------------------------

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        routes = {
            "/.well-known/openid-configuration": self.discovery,
            "/jwks": lambda: self.send(200, JWKS),
            "/authorize": lambda: self.authorize("oidc", self.query()),
            "/userinfo": self.userinfo,
            "/login/oauth/authorize": lambda: self.authorize("github", self.query()),
            "/api/user": lambda: self.github_api("user"),
            "/api/user/emails": lambda: self.github_api("emails"),
            "/requests": self.requests_log,
            "/control": self.show_control,
        }
        (routes.get(path) or self.not_found)()

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        routes = {
            "/authorize": lambda: self.authorize("oidc", {**self.query(), **self.form()}),
            "/token": lambda: self.token("oidc"),
            "/userinfo": self.userinfo,
            "/login/oauth/access_token": lambda: self.token("github"),
            "/control": self.control,
        }
        (routes.get(path) or self.not_found)()

    def not_found(self):
        self.body()
        self.send(404, {"error": "not_found", "path": urllib.parse.urlsplit(self.path).path})

    # -- control -------------------------------------------------------------------------------

    def control(self):
        global settings
        try:
            given = json.loads(self.body() or b"{}")
            assert isinstance(given, dict), "a JSON object"
            unknown = set(given) - CONTROL_KEYS
            assert not unknown, "unknown keys %s" % sorted(unknown)
            assert given.get("mode", "normal") in MODES, "mode must be one of %s" % sorted(MODES)
            assert given.get("alg", "RS256") in ALGORITHMS, "alg must be RS256 or ES256"
            emails = given.get("emails")
            assert emails is None or (isinstance(emails, list) and all(isinstance(e, dict) and "email" in e for e in emails)), \
                "emails must be null or a list of {email, primary, verified, visibility}"
        except (ValueError, AssertionError) as error:
            return self.send(400, {"error": "invalid_control", "error_description": str(error)})
        with lock:
            if given.pop("reset", False):
                settings = copy.deepcopy(DEFAULTS)
            settings.update(given)
            shown = dict(settings, client_secret=REDACTED)
        self.send(200, shown)

    def show_control(self):
        with lock:
            shown = dict(settings, client_secret=REDACTED)
        self.send(200, shown)

    def requests_log(self):
        with lock:
            entries = copy.deepcopy(log)
        self.send(200, entries)

    # -- OpenID Connect discovery --------------------------------------------------------------

    def discovery(self):
        base = self.base
        self.send(200, {
            "issuer": base,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "jwks_uri": base + "/jwks",
            "userinfo_endpoint": base + "/userinfo",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code"],
            "subject_types_supported": ["public"],
            "scopes_supported": ["openid", "email", "profile"],
            "claims_supported": ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "email", "email_verified", "name"],
            "id_token_signing_alg_values_supported": ["RS256", "ES256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
        })

    # -- authorize -----------------------------------------------------------------------------

    def authorize(self, shape, params):
        with lock:
            current = copy.deepcopy(settings)
        entry = {
            "endpoint": "authorize", "shape": shape, "method": self.command, "params": dict(params),
            "nonce": "nonce" in params, "code_challenge": "code_challenge" in params,
            "code_challenge_method": params.get("code_challenge_method"), "mode": current["mode"],
        }
        redirect_uri = params.get("redirect_uri")
        problem = None
        if params.get("client_id") != current["client_id"]:
            problem = "unknown client_id"
        elif not redirect_uri or urllib.parse.urlsplit(redirect_uri).scheme not in ("http", "https"):
            problem = "redirect_uri missing or not http(s)"
        if problem:  # nowhere safe to send the browser: an error page, as providers do
            entry.update(status=400, error=problem)
            self.record(entry)
            return self.send(400, "<!doctype html><title>Error</title><p>%s</p>" % problem, "text/html; charset=utf-8")

        answer = {}
        if "state" in params:
            answer["state"] = params["state"]
        if shape == "oidc":
            answer["iss"] = OTHER_ISSUER if current["mode"] == "iss_param_mismatch" else self.base
        if current["mode"] == "error_access_denied":
            answer = {"error": "access_denied", "error_description": "The user denied the request.", **answer}
            entry["error"] = "access_denied"
        elif shape == "oidc" and params.get("response_type") != "code":
            answer = {"error": "unsupported_response_type", **answer}
            entry["error"] = "unsupported_response_type"
        else:
            code = secrets.token_urlsafe(24)
            user = {k: current[k] for k in ("sub", "email", "email_verified", "name", "id", "login", "public_email", "emails")}
            with lock:
                codes[code] = {
                    "shape": shape, "client_id": params["client_id"], "redirect_uri": redirect_uri,
                    "code_challenge": params.get("code_challenge"), "code_challenge_method": params.get("code_challenge_method"),
                    "nonce": params.get("nonce"), "scope": params.get("scope", ""), "issued": time.time(), "used": False,
                    "user": user,
                }
            answer = {"code": code, **answer}
            entry["code"] = code
        separator = "&" if urllib.parse.urlsplit(redirect_uri).query else "?"
        location = redirect_uri + separator + urllib.parse.urlencode(answer)
        entry.update(status=302, location=location)
        self.record(entry)
        self.redirect(location)

    # -- token ---------------------------------------------------------------------------------

    def token(self, shape):
        form = self.form()
        with lock:
            current = copy.deepcopy(settings)
        shown = {k: (REDACTED if k in ("client_secret", "code_verifier") else v) for k, v in form.items()}
        entry = {
            "endpoint": "token", "shape": shape, "method": self.command, "params": shown, "mode": current["mode"],
            "code_verifier": "code_verifier" in form, "client_secret_in_body": "client_secret" in form,
            "accept": self.headers.get("Accept"),
        }

        github_json = "application/json" in (self.headers.get("Accept") or "")

        def refuse(status, error, description):
            entry.update(status=status if shape == "oidc" else 200, error=error, error_description=description)
            self.record(entry)
            if shape == "github":  # GitHub: HTTP 200, the error in the body
                body = {"error": error, "error_description": description}
                if github_json:
                    return self.send(200, body)
                return self.send(200, urllib.parse.urlencode(body), "application/x-www-form-urlencoded; charset=utf-8")
            headers = [("WWW-Authenticate", 'Basic realm="stand-in"')] if status == 401 else []
            return self.send(status, {"error": error, "error_description": description}, headers=headers)

        if current["mode"] == "token_500":
            entry.update(status=500)
            self.record(entry)
            return self.send(500, "<!doctype html><title>500</title><p>Internal Server Error</p>", "text/html")
        if current["mode"] == "token_slow":
            time.sleep(TOKEN_SLOW_SECONDS)

        # Client authentication: exactly one of client_secret_basic and client_secret_post.
        authorization = self.headers.get("Authorization") or ""
        methods = []
        client_id = secret = None
        if authorization.lower().startswith("basic "):
            methods.append("client_secret_basic")
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                client_id, _, secret = decoded.partition(":")
                client_id, secret = urllib.parse.unquote_plus(client_id), urllib.parse.unquote_plus(secret)
            except (ValueError, UnicodeDecodeError):
                client_id = secret = None
        if "client_secret" in form:
            methods.append("client_secret_post")
            client_id, secret = form.get("client_id"), form["client_secret"]
        entry["client_auth"] = "+".join(methods) or "none"
        entry["client_id"] = client_id
        if "client_id" in form and client_id is not None and form["client_id"] != client_id:
            return refuse(401, "invalid_client" if shape == "oidc" else "incorrect_client_credentials", "client_id differs from the authenticated client")
        if len(methods) != 1:
            return refuse(401, "invalid_client" if shape == "oidc" else "incorrect_client_credentials",
                          "no client authentication" if not methods else "more than one client authentication method")
        if client_id != current["client_id"] or secret is None or not hmac.compare_digest(secret.encode(), current["client_secret"].encode()):
            return refuse(401, "invalid_client" if shape == "oidc" else "incorrect_client_credentials", "wrong client_id or client_secret")

        bad_code = "invalid_grant" if shape == "oidc" else "bad_verification_code"
        if shape == "oidc" and form.get("grant_type") != "authorization_code":
            return refuse(400, "unsupported_grant_type", "grant_type must be authorization_code")
        if shape == "github" and form.get("grant_type") not in (None, "authorization_code"):
            return refuse(400, "unsupported_grant_type", "grant_type must be authorization_code")
        with lock:
            issued = codes.get(form.get("code", ""))
            first_use = issued is not None and not issued["used"]
            if issued is not None:
                issued["used"] = True
        if issued is None or issued["shape"] != shape:
            return refuse(400, bad_code, "unknown code")
        entry.update(authorize_nonce=issued["nonce"] is not None, authorize_code_challenge=issued["code_challenge"] is not None,
                     authorize_code_challenge_method=issued["code_challenge_method"])
        if not first_use:
            return refuse(400, bad_code, "the code was already used")
        if time.time() - issued["issued"] > CODE_LIFETIME:
            return refuse(400, bad_code, "the code expired")
        if issued["client_id"] != client_id:
            return refuse(400, bad_code, "the code was issued to another client")
        if shape == "oidc" or "redirect_uri" in form:
            if form.get("redirect_uri") != issued["redirect_uri"]:
                return refuse(400, "invalid_grant" if shape == "oidc" else "redirect_uri_mismatch",
                              "redirect_uri differs from the authorize request's")
        if issued["code_challenge"] is None or issued["code_challenge_method"] != "S256":
            return refuse(400, bad_code, "the authorize request carried no S256 code_challenge")
        verifier = form.get("code_verifier")
        if verifier is None:
            return refuse(400, bad_code, "code_verifier missing")
        if not hmac.compare_digest(s256(verifier), issued["code_challenge"]):
            return refuse(400, bad_code, "code_verifier does not match the code_challenge")

        access_token = secrets.token_urlsafe(32)
        with lock:
            access_tokens[access_token] = {"shape": shape, "user": issued["user"]}
        if shape == "github":
            entry.update(status=200)
            self.record(entry)
            body = {"access_token": access_token, "token_type": "bearer", "scope": issued["scope"]}
            if github_json:
                return self.send(200, body)
            return self.send(200, urllib.parse.urlencode(body), "application/x-www-form-urlencoded; charset=utf-8")

        body = {"access_token": access_token, "token_type": "Bearer", "expires_in": 3600, "scope": issued["scope"]}
        if "openid" in issued["scope"].split():
            body["id_token"] = self.id_token(current, issued, client_id, access_token)
        entry.update(status=200, id_token_alg=current["alg"])
        self.record(entry)
        self.send(200, body)

    def id_token(self, current, issued, client_id, access_token):
        mode, alg = current["mode"], current["alg"]
        user = issued["user"]
        now = int(time.time())
        claims = {
            "iss": OTHER_ISSUER if mode == "wrong_iss" else self.base,
            "sub": user["sub"],
            "aud": OTHER_CLIENT if mode == "wrong_aud" else client_id,
            "iat": now, "exp": now + 300, "auth_time": now,
        }
        if mode == "expired":
            claims.update(iat=now - 3660, exp=now - 3600, auth_time=now - 3660)
        if mode == "azp_mismatch":
            claims.update(aud=[client_id, OTHER_CLIENT], azp=OTHER_CLIENT)
        if issued["nonce"] is not None:
            claims["nonce"] = issued["nonce"]
        if mode == "wrong_nonce":
            claims["nonce"] = "not-" + (issued["nonce"] or "") + secrets.token_urlsafe(8)
        for name in ("email", "email_verified", "name"):
            if user.get(name) is not None:
                claims[name] = user[name]
        digest = hashlib.sha256(access_token.encode()).digest()
        claims["at_hash"] = b64url(digest[:16])

        if mode == "alg_none":
            header = {"alg": "none", "typ": "JWT"}
            return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "."
        if mode == "hs256_client_secret":
            return jwt.encode(claims, current["client_secret"].encode(), algorithm="HS256", headers={"typ": "JWT"})
        if mode == "unknown_kid":
            return jwt.encode(claims, ROGUE_KEY, algorithm="RS256", headers={"kid": "stand-in-unknown", "typ": "JWT"})
        key, kid = SIGNING[alg]
        return jwt.encode(claims, key, algorithm=alg, headers={"kid": kid, "typ": "JWT"})

    # -- resources -----------------------------------------------------------------------------

    def bearer(self):
        authorization = self.headers.get("Authorization") or ""
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() not in ("bearer", "token"):  # GitHub also takes `token X`
            return None
        with lock:
            return access_tokens.get(token.strip())

    def userinfo(self):
        if self.command == "POST":
            self.body()
        granted = self.bearer()
        entry = {"endpoint": "userinfo", "shape": "oidc", "method": self.command, "bearer": granted is not None}
        if granted is None or granted["shape"] != "oidc":
            entry["status"] = 401
            self.record(entry)
            return self.send(401, {"error": "invalid_token"}, headers=[("WWW-Authenticate", 'Bearer error="invalid_token"')])
        user = granted["user"]
        entry["status"] = 200
        self.record(entry)
        self.send(200, {k: user[k] for k in ("sub", "email", "email_verified", "name") if user.get(k) is not None})

    def github_api(self, what):
        granted = self.bearer()
        entry = {"endpoint": "api/" + what, "shape": "github", "method": self.command, "bearer": granted is not None}
        if granted is None or granted["shape"] != "github":
            entry["status"] = 401
            self.record(entry)
            return self.send(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
        user = granted["user"]
        entry["status"] = 200
        self.record(entry)
        if what == "user":
            return self.send(200, {
                "id": user["id"], "login": user["login"], "name": user["name"], "email": user["public_email"],
                "type": "User", "html_url": "https://github.com/" + str(user["login"]),
            })
        self.send(200, github_emails(user))


def watch_owner(pid):
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        time.sleep(0.5)


server = ThreadingHTTPServer(("127.0.0.1", args.port), StandIn)
server.daemon_threads = True
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
if args.owner_pid:
    threading.Thread(target=watch_owner, args=(args.owner_pid,), daemon=True).start()
print("port=%d" % server.server_address[1], flush=True)
server.serve_forever()
