"""A real browser through Latchkey's hosted pages: Debian's headless Chromium, driven by Selenium
through chromium-driver.

Usage: browser_flows.py FLOW < CONFIG_JSON

FLOW is one of:
  sign-in   password sign-in with a TOTP code, consent for a third-party client, single sign-on
            into a second client, RP-initiated logout with post_logout_redirect_uri (confirmed
            on Latchkey's page), the signed-out page, and the sign-in page again afterwards
  sign-up   sign-up (prompt=create), a refused password first (the username is kept), and the
            error page of an unregistered redirect URI (no redirect)
  apache    the page Apache (mod_auth_openidc) protects: Latchkey's sign-in and consent, back to
            Apache, which shows the claims
  forgot-password
            "Forgot password?" on the sign-in page: the address, the code read from the
            development mailbox (/sandbox/mail.json), a refused password first, then a good one,
            and back at the client with a code
  email-code
            "Email me a code" on the sign-in page: the address, a wrong code first, then the
            mailed one, and back at the client with a code
  mailed-link
            the link of a reset message, opened as a person would from the mail: the page with
            one button, a new password, done

CONFIG_JSON names the server (`base`), the folder for screenshots (`screenshots`), the clients
and the user; see BrowserFlowTests.swift and ApacheRelyingPartyTests.swift. The browser types and
clicks as a person would; the authorization requests carry PKCE (S256), state and nonce. The
callbacks land on a small HTTP server of this script on a free loopback port, which records what
reached it. Prints one JSON object with what the browser saw; the Swift tests assert on it.
Codes, tokens and passwords are never printed.
"""

import base64
import hashlib
import json
import os
import re
import secrets
import sys
import time
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By

from browser_harness import Callback, Page, chromium, run, start_callback, totp

flow = sys.argv[1]
config = json.load(sys.stdin)
base = config["base"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
out = {}


# MARK: The relying party's callback

callback_server, rp = start_callback()


# MARK: The browser

browser = chromium(config)
page = Page(browser, shots, {base: "latchkey", rp: "rp"})
screenshot, heading, click_and_wait, submit, where = page.screenshot, page.heading, page.click_and_wait, page.submit, page.where


def path():
    return urllib.parse.urlsplit(browser.current_url).path




def query():
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(browser.current_url).query))


def callback_seen(q):
    """What a callback's query shows, with the code reduced to whether it is there."""
    return {"has_code": bool(q.get("code")), "state": q.get("state"), "iss": q.get("iss"), "error": q.get("error")}


def follow_link(text):
    """Clicks the link (or the link styled as a button) that reads `text`."""
    click_and_wait(browser.find_element(By.LINK_TEXT, text))


def autofill_attributes():
    """What AutoFill reads of each visible input, from the DOM: type, autocomplete, inputmode,
    whether it is read-only."""
    return {
        field.get_attribute("name"): {
            "type": field.get_attribute("type"), "autocomplete": field.get_attribute("autocomplete"),
            "inputmode": field.get_attribute("inputmode"), "readonly": field.get_attribute("readonly") is not None,
        }
        for field in browser.find_elements(By.CSS_SELECTOR, "input:not([type=hidden])")
    }


def alert():
    alerts = browser.find_elements(By.CSS_SELECTOR, '[role="alert"]')
    return alerts[0].text if alerts else None


def mailed(address, purpose, pattern):
    """The first group of `pattern` in the newest message of `purpose` to `address` in the
    development mailbox, as a person reads it from the message; waits up to 15 s for the outbox
    to send it."""
    # The loopback, never through a proxy the environment may name.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.time() + 15
    while time.time() < deadline:
        with opener.open(base + "/sandbox/mail.json", timeout=10) as response:
            messages = json.load(response)["messages"]
        for message in messages:  # newest first
            if message["to"] == address and message["purpose"] == purpose:
                found = re.search(pattern, message["text"], re.MULTILINE)
                if found:
                    return found.group(1)
        time.sleep(0.2)
    raise RuntimeError(f"no {purpose} message in the mailbox within 15 s")


def mailed_code(address, purpose):
    """The 6-digit code of the newest message of `purpose` to `address`."""
    return mailed(address, purpose, r"Your code: ([0-9]{6})")


def mailed_link(address, purpose):
    """The link of the newest message of `purpose` to `address`."""
    return mailed(address, purpose, r"^(https?://\S+/email/\S+)$")


def fields_on_page():
    """Each visible input's name and autocomplete attribute, and whether a <label for> names it."""
    result = {}
    for field in browser.find_elements(By.CSS_SELECTOR, "input:not([type=hidden])"):
        labelled = bool(browser.find_elements(By.CSS_SELECTOR, f'label[for="{field.get_attribute("id")}"]'))
        result[field.get_attribute("name")] = {"autocomplete": field.get_attribute("autocomplete"), "labelled": labelled}
    return result


def latchkey_cookies():
    """The hosted pages' cookies Chromium keeps for the server's host, with their attributes."""
    return {
        c["name"]: {"secure": c.get("secure"), "http_only": c.get("httpOnly"), "same_site": c.get("sameSite"), "path": c.get("path")}
        for c in browser.get_cookies() if c["name"].startswith("__Host-latchkey")
    }


def authorize_url(client_id, redirect_uri, state, scope="openid profile email", **extra):
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    parameters = {
        "response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "scope": scope, "state": state,
        "nonce": secrets.token_urlsafe(16), "code_challenge": challenge, "code_challenge_method": "S256", **extra,
    }
    return base + "/oauth/authorize?" + urllib.parse.urlencode(parameters, quote_via=urllib.parse.quote)


# MARK: Flows

def sign_in_flow():
    user = config["user"]
    third, second = config["third_party"], config["second_client"]
    callback = rp + "/callback"

    # 1. A third-party client sends the browser to the authorization endpoint: the sign-in page.
    browser.get(authorize_url(third, callback, "state-one", scope="openid profile email"))
    out["first_page"] = where()
    out["sign_in_fields"] = fields_on_page()
    screenshot("sign-in")
    submit({"username": user["username"], "password": user["password"]})

    # 2. The password was right; the account has TOTP: the second-factor page.
    out["after_password"] = where()
    out["second_factor_fields"] = fields_on_page()
    screenshot("second-factor")
    submit({"code": totp(user["totp_secret"])})

    # 3. Signed in; the client is third-party: the consent page lists the scopes in words.
    out["after_code"] = where()
    out["consent_items"] = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "main li")]
    out["cookies_after_sign_in"] = latchkey_cookies()
    screenshot("consent")
    submit({}, button="allow")

    # 4. Back at the client's redirect URI with code, state and iss.
    out["first_callback_page"] = where()
    out["first_callback"] = callback_seen(query())

    # 5. Single sign-on: a second client; no page is shown, the browser lands on its callback.
    browser.get(authorize_url(second, callback, "state-two"))
    out["second_callback_page"] = where()
    out["second_callback"] = callback_seen(query())

    # 6. RP-initiated logout back to the second client's registered post-logout URI. The request
    #    names the client but carries no ID token of the user's, so Latchkey asks first; the
    #    person presses "Sign out".
    logout = base + "/oauth/logout?" + urllib.parse.urlencode(
        {"client_id": second, "post_logout_redirect_uri": rp + "/signed-out", "state": "state-three"})
    browser.get(logout)
    out["logout_confirmation_page"] = where()
    screenshot("sign-out")
    submit({})
    out["after_logout_page"] = where()
    out["after_logout_query"] = query()
    out["cookies_after_logout"] = latchkey_cookies()

    # 7. Logout without a return address: Latchkey's signed-out page.
    browser.get(base + "/oauth/logout")
    out["signed_out_page"] = where()
    screenshot("signed-out")

    # 8. The browser session is gone: the second client gets the sign-in page again.
    browser.get(authorize_url(second, callback, "state-four"))
    out["after_logout_authorize"] = where()
    out["rp_hits"] = [
        {"path": h["path"], "state": h["query"].get("state"), "has_code": "code" in h["query"]}
        for h in Callback.hits if h["path"] != "/favicon.ico"
    ]


def sign_up_flow():
    client = config["client"]
    new = config["new_user"]
    callback = rp + "/callback"

    # 1. prompt=create: the sign-up page.
    browser.get(authorize_url(client, callback, "state-new", prompt="create"))
    out["first_page"] = where()
    out["sign_up_fields"] = fields_on_page()
    screenshot("sign-up")

    # 2. A password the policy refuses: back on the sign-up page, the reason said, the username kept.
    submit({"username": new["username"], "password": "password"})
    out["after_refused"] = where()
    alerts = browser.find_elements(By.CSS_SELECTOR, '[role="alert"]')
    out["refused_alert"] = alerts[0].text if alerts else None
    out["kept_username"] = browser.find_element(By.NAME, "username").get_attribute("value")
    out["kept_password"] = browser.find_element(By.NAME, "password").get_attribute("value")
    screenshot("sign-up-refused")

    # 3. A good one: the account exists, and (a first-party client) straight to the callback.
    submit({"username": new["username"], "password": new["password"]})
    out["callback_page"] = where()
    out["callback"] = callback_seen(query())
    out["cookies_after_sign_up"] = latchkey_cookies()

    # 4. An unregistered redirect URI: an error page on Latchkey, and the browser goes nowhere.
    hits_before = len(Callback.hits)
    browser.get(authorize_url(client, rp + "/not-registered", "state-bad"))
    out["unregistered_page"] = where()
    out["unregistered_message"] = " ".join(p.text for p in browser.find_elements(By.CSS_SELECTOR, '[role="alert"]'))
    out["unregistered_reached_rp"] = any(h["path"] != "/favicon.ico" for h in Callback.hits[hits_before:])
    screenshot("error")


def apache_flow():
    user = config["user"]
    protected = config["protected_url"]

    # 1. The protected page sends the browser to Latchkey (discovery told Apache where).
    browser.get(protected)
    out["first_page"] = where()
    parameters = query()
    out["authorize_parameters"] = sorted(parameters)
    out["authorize_pkce"] = parameters.get("code_challenge_method")
    submit({"username": user["username"], "password": user["password"]})

    # 2. A third-party client: consent.
    out["after_password"] = where()
    submit({}, button="allow")

    # 3. Back at Apache, which exchanged the code and shows the claims.
    parts = urllib.parse.urlsplit(browser.current_url)
    out["final_url"] = f"{parts.scheme}://{parts.netloc}{parts.path}"
    out["final_h1"] = heading()
    out["claims"] = {
        name: (browser.find_element(By.ID, name).text if browser.find_elements(By.ID, name) else None)
        for name in ("sub", "email", "remote_user", "iss")
    }
    screenshot("apache-protected-page")

    # 4. Once more: Apache's own session, no trip to Latchkey.
    browser.get(protected)
    parts = urllib.parse.urlsplit(browser.current_url)
    out["again_url"] = f"{parts.scheme}://{parts.netloc}{parts.path}"


def forgot_password_flow():
    user = config["user"]
    callback = rp + "/callback"

    # 1. A client's authorization request: the sign-in page offers both ways by email.
    browser.get(authorize_url(config["client"], callback, "state-reset"))
    out["first_page"] = where()
    out["sign_in_links"] = [link.text for link in browser.find_elements(By.CSS_SELECTOR, "main a")]
    follow_link("Forgot password?")

    # 2. The address.
    out["address_page"] = where()
    out["address_fields"] = fields_on_page()
    out["address_autofill"] = autofill_attributes()
    screenshot("forgot-password")
    submit({"email": user["username"]})

    # 3. The code and a new password; the address shows read-only for AutoFill to save under.
    out["code_page"] = where()
    out["code_fields"] = fields_on_page()
    out["code_autofill"] = autofill_attributes()
    out["code_page_username"] = browser.find_element(By.NAME, "username").get_attribute("value")
    out["code_page_text"] = " ".join(p.text for p in browser.find_elements(By.CSS_SELECTOR, "main p"))
    screenshot("reset-code")
    code = mailed_code(user["username"], "reset")

    # 4. A password the rules refuse: the same page, the reason said.
    submit({"code": code, "password": "password"})
    out["after_refused"] = where()
    out["refused_alert"] = alert()
    # Neither secret comes back in the page: both fields are empty again.
    out["refused_fields_empty"] = all(browser.find_element(By.NAME, name).get_attribute("value") == "" for name in ("code", "password"))
    screenshot("reset-refused")

    # 5. The same code and a good password: signed in, back at the client.
    submit({"code": code, "password": user["new_password"]})
    out["callback_page"] = where()
    out["callback"] = callback_seen(query())
    out["cookies_after_reset"] = latchkey_cookies()


def email_code_flow():
    user = config["user"]
    callback = rp + "/callback"

    # 1. The sign-in page's "Email me a code" button.
    browser.get(authorize_url(config["client"], callback, "state-code"))
    out["first_page"] = where()
    follow_link("Email me a code")

    # 2. The address.
    out["address_page"] = where()
    out["address_autofill"] = autofill_attributes()
    submit({"email": user["username"]})

    # 3. The code: a wrong one first (the page again, the reason said), then the mailed one.
    out["code_page"] = where()
    out["code_fields"] = fields_on_page()
    out["code_autofill"] = autofill_attributes()
    screenshot("email-code")
    code = mailed_code(user["username"], "sign-in")
    submit({"code": "000000" if code != "000000" else "111111"})
    out["after_wrong"] = where()
    out["wrong_alert"] = alert()
    submit({"code": code})
    out["callback_page"] = where()
    out["callback"] = callback_seen(query())
    out["cookies_after_code"] = latchkey_cookies()


def mailed_link_flow():
    user = config["user"]
    browser.get(mailed_link(user["username"], "reset"))
    out["link_page"] = where()
    out["link_fields"] = fields_on_page()
    screenshot("mailed-link")
    submit({"password": user["new_password"]})
    out["after_submit"] = where()
    out["after_text"] = " ".join(p.text for p in browser.find_elements(By.CSS_SELECTOR, "main p"))


run(
    {
        "sign-in": sign_in_flow, "sign-up": sign_up_flow, "apache": apache_flow, "forgot-password": forgot_password_flow,
        "email-code": email_code_flow, "mailed-link": mailed_link_flow,
    }[flow], page, out, flow, servers=[callback_server])
