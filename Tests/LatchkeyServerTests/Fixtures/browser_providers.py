"""Sign-in through an upstream OpenID provider in a real browser: Debian's headless Chromium, driven
by Selenium through chromium-driver, between Latchkey's hosted pages and oidc-provider-mock (PyPI),
a real OpenID provider no one here wrote.

Usage: browser_providers.py FLOW < CONFIG_JSON

FLOW is one of:
  provider  a third-party client's authorization request (PKCE S256, state, nonce): Latchkey's
            sign-in page, "Continue with <display name>", the upstream's page (the subject typed,
            "Authorize" pressed), back through Latchkey's callback to its consent page, "Allow",
            the code at the app's redirect URI with state and iss; the code exchanged at
            /oauth/token and /oauth/userinfo read. Then, in the same browser, a first-party
            client's request (single sign-on: no page at all), and one with prompt=login, which
            goes through the upstream again with the same subject.

CONFIG_JSON: `base` (the server), `screenshots` (a folder), `chromium`, `chromedriver`,
`third_party` and `first_party` (client ids; both public clients with PKCE), `display_name` (the
provider's button reads "Continue with <display_name>"), `upstream` (the provider's issuer) and
`sub` (the subject to type at the upstream). The callbacks land on a small HTTP server of this
script on a free loopback port, which records what reached it. Screenshots are named
`provider-*.png`. Prints one JSON object with what the browser saw and what the token and
userinfo endpoints answered; codes, tokens and verifiers are never printed.

This is its own script beside browser_flows.py (whose patterns it follows): the flows there have
no upstream, and a change here must not disturb them.
"""

import base64
import hashlib
import json
import os
import secrets
import sys
import urllib.error
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By

from browser_harness import Callback, Page, chromium, run, start_callback

flow = sys.argv[1]
config = json.load(sys.stdin)
base = config["base"]
upstream = config["upstream"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
out = {}


# MARK: The relying party's callback

callback_server, rp = start_callback()
callback = rp + "/callback"


# MARK: The browser

browser = chromium(config)
page = Page(browser, shots, {base: "latchkey", upstream: "upstream", rp: "rp"})
screenshot, heading, click_and_wait, submit, where = page.screenshot, page.heading, page.click_and_wait, page.submit, page.where
# The loopback, never through a proxy the environment may name.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))




def query():
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(browser.current_url).query))


def callback_seen(q):
    """What a callback's query shows, with the code reduced to whether it is there."""
    return {"has_code": bool(q.get("code")), "state": q.get("state"), "iss": q.get("iss"), "error": q.get("error")}


def latchkey_cookies():
    """The names of the hosted pages' cookies Chromium keeps for the server's host."""
    return sorted(c["name"] for c in browser.get_cookies() if c["name"].startswith("__Host-latchkey"))


def authorize_url(client_id, state, **extra):
    """An app's authorization request with PKCE S256, state and nonce; returns it and its verifier."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    parameters = {
        "response_type": "code", "client_id": client_id, "redirect_uri": callback, "scope": "openid profile email",
        "state": state, "nonce": secrets.token_urlsafe(16), "code_challenge": challenge, "code_challenge_method": "S256",
        **extra,
    }
    return base + "/oauth/authorize?" + urllib.parse.urlencode(parameters, quote_via=urllib.parse.quote), verifier


def redeem(client_id, verifier):
    """What the app does with the code at its redirect URI: the token exchange, then userinfo.
    Returns what they said, without the tokens."""
    code = query().get("code")
    if not code:
        return {"token_status": None}
    form = urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": code, "redirect_uri": callback, "client_id": client_id,
        "code_verifier": verifier,
    }).encode()
    request = urllib.request.Request(base + "/oauth/token", data=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with opener.open(request, timeout=15) as response:
            status, tokens = response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return {"token_status": error.code, "token_error": json.load(error).get("error")}
    seen = {"token_status": status, "token_type": tokens.get("token_type"), "has_id_token": "id_token" in tokens}
    request = urllib.request.Request(base + "/oauth/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]})
    with opener.open(request, timeout=15) as response:
        userinfo = json.load(response)
    seen["userinfo_status"] = response.status
    seen["userinfo"] = {name: userinfo.get(name) for name in ("sub", "email", "email_verified")}
    return seen


def upstream_request():
    """What Latchkey's redirect asked of the upstream (the names, and PKCE's method)."""
    q = query()
    return {
        "code_challenge_method": q.get("code_challenge_method"), "has_code_challenge": bool(q.get("code_challenge")),
        "has_state": bool(q.get("state")), "has_nonce": bool(q.get("nonce")), "redirect_uri": q.get("redirect_uri"),
        "scope": q.get("scope"), "response_type": q.get("response_type"),
    }


def authorize_at_upstream(sub):
    """At the upstream's page: the subject typed, "Authorize" pressed (the first form's submit)."""
    field = browser.find_element(By.CSS_SELECTOR, 'input[name="sub"]')
    field.clear()
    field.send_keys(sub)
    click_and_wait(browser.find_element(By.CSS_SELECTOR, 'form button[type="submit"]'))


# MARK: Flows

def provider_flow():
    name = config["display_name"]
    third, first = config["third_party"], config["first_party"]

    # 1. A third-party app sends the browser to the authorization endpoint: the sign-in page,
    #    with a button per provider.
    url, verifier = authorize_url(third, "state-provider-one")
    browser.get(url)
    out["first_page"] = where()
    out["continue_buttons"] = [link.text for link in browser.find_elements(By.PARTIAL_LINK_TEXT, "Continue with")]
    screenshot("provider-sign-in")
    click_and_wait(browser.find_element(By.LINK_TEXT, "Continue with " + name))

    # 2. The upstream's own page, reached with Latchkey's state, nonce and PKCE.
    out["upstream_page"] = where()
    out["upstream_request"] = upstream_request()
    out["upstream_buttons"] = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "button")]
    out["cookies_at_upstream"] = latchkey_cookies()
    screenshot("provider-upstream")
    authorize_at_upstream(config["sub"])

    # 3. Back through Latchkey's callback: a third-party app, so the consent page.
    out["after_upstream"] = where()
    out["consent_items"] = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "main li")]
    out["cookies_after_upstream"] = latchkey_cookies()
    screenshot("provider-consent")
    click_and_wait(browser.find_element(By.CSS_SELECTOR, 'button[type="submit"][value="allow"]'))

    # 4. The code at the app's redirect URI with state and iss; exchanged, userinfo read.
    out["first_callback_page"] = where()
    out["first_callback"] = callback_seen(query())
    out["first_redeemed"] = redeem(third, verifier)
    screenshot("provider-callback")

    # 5. The same browser, a first-party app: single sign-on, no page and no upstream.
    url, verifier = authorize_url(first, "state-provider-two")
    browser.get(url)
    out["sso_page"] = where()
    out["sso_callback"] = callback_seen(query())
    out["sso_redeemed"] = redeem(first, verifier)

    # 6. The same browser, prompt=login: the sign-in page again, the upstream again, the same
    #    subject typed; a first-party app, so straight back with a code.
    url, verifier = authorize_url(first, "state-provider-three", prompt="login")
    browser.get(url)
    out["again_page"] = where()
    click_and_wait(browser.find_element(By.LINK_TEXT, "Continue with " + name))
    out["again_upstream_page"] = where()
    authorize_at_upstream(config["sub"])
    out["again_callback_page"] = where()
    out["again_callback"] = callback_seen(query())
    out["again_redeemed"] = redeem(first, verifier)

    out["rp_hits"] = [
        {"path": h["path"], "state": h["query"].get("state"), "has_code": "code" in h["query"]}
        for h in Callback.hits if h["path"] != "/favicon.ico"
    ]


run({"provider": provider_flow}[flow], page, out, flow, servers=[callback_server])
