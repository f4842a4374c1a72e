"""Passkeys on Latchkey's hosted pages in a real browser: Debian's headless Chromium, driven by
Selenium through chromium-driver, with Chromium's virtual authenticator (WebDriver's
"Add Virtual Authenticator": CTAP2, internal transport, resident keys, user verification) in
place of Touch ID.

Usage: browser_passkeys.py < CONFIG_JSON

The server must run at a public URL of http://localhost:PORT (`base`) with `passkeys.rp_id`
localhost: WebAuthn needs a secure context and a domain, and http://localhost is both. CONFIG_JSON
also names the folder for screenshots (`screenshots`), a first-party public client (`client`)
and the new account's email (`email`).

What it does, in one browser:
  1. prompt=create: "Create with a passkey" on the sign-up page, back at the client with a code,
     exchanged for tokens (PKCE);
  2. a fresh authorization (cookies gone) in a browser without conditional mediation: "Sign in
     with a passkey", a code, tokens;
  3. a fresh authorization with conditional mediation: what happens on load and when the
     username field is focused (the virtual authenticator answers the pending request), and
     whether the browser got to the client without pressing the button;
  4. refusals: an authenticator whose user does not consent and one that does not verify its
     user (the browser refuses; the page says so), and answers changed in the page before they
     are posted: user presence cleared, user verification cleared, the signature broken (the
     server refuses; the page says why).

Prints one JSON object with what the browser saw; codes and tokens are reduced to whether they
are there.
"""

import base64
import hashlib
import json
import os
import secrets
import sys
import time
import urllib.parse
import urllib.request

from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from browser_harness import Callback, Page, chromium, run, start_callback

config = json.load(sys.stdin)
base = config["base"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
out = {}


callback_server, rp = start_callback()
callback = rp + "/callback"


browser = chromium(config, hosts=("127.0.0.1", "localhost"))
page = Page(browser, shots, {base: "latchkey", rp: "rp"})
screenshot, where = page.screenshot, page.where




def alert():
    """The visible alert of the page: the server's refusal, or the script's."""
    for element in browser.find_elements(By.CSS_SELECTOR, '[role="alert"], #passkey-alert'):
        if element.is_displayed() and element.text:
            return element.text
    return None


def wait_for_new_page(old):
    wait = WebDriverWait(browser, 30, ignored_exceptions=[WebDriverException])
    wait.until(expected_conditions.staleness_of(old))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def press_passkey_button(navigates=True):
    """Presses the page's passkey button; waits for the next page when the answer is posted, or
    for the script's alert when the browser refused."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.ID, "passkey-button").click()
    if navigates:
        wait_for_new_page(page)
    else:
        # An authenticator whose user never answers leaves the request to the options' timeout.
        WebDriverWait(browser, 40).until(lambda d: d.find_element(By.ID, "passkey-alert").is_displayed())


def authorize(state, **extra):
    """Opens an authorization request with PKCE; returns its verifier."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    parameters = {
        "response_type": "code", "client_id": config["client"], "redirect_uri": callback, "scope": "openid email",
        "state": state, "nonce": secrets.token_urlsafe(16), "code_challenge": challenge, "code_challenge_method": "S256", **extra,
    }
    browser.get(base + "/oauth/authorize?" + urllib.parse.urlencode(parameters, quote_via=urllib.parse.quote))
    return verifier


def exchange(verifier):
    """The client's side: the callback's code for tokens; what came back, tokens reduced to
    whether they are there, and the ID token's `amr` and `sub`."""
    code = Callback.hits[-1]["query"].get("code")
    if not code:
        return {"error": "no code"}
    body = urllib.parse.urlencode({
        "grant_type": "authorization_code", "code": code, "redirect_uri": callback, "client_id": config["client"],
        "code_verifier": verifier,
    }).encode()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(base + "/oauth/token", data=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with opener.open(request, timeout=10) as response:
            tokens = json.load(response)
    except urllib.error.HTTPError as error:
        return {"error": error.read().decode()[:300]}
    payload = tokens.get("id_token", "..").split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return {
        "access_token": bool(tokens.get("access_token")), "refresh_token": bool(tokens.get("refresh_token")),
        "token_type": tokens.get("token_type"), "amr": claims.get("amr"), "sub": claims.get("sub"),
    }


def passkey_state():
    """What the page offers: the button (shown by the script), the username's autocomplete."""
    buttons = browser.find_elements(By.ID, "passkey-button")
    usernames = browser.find_elements(By.NAME, "username")
    return {
        "button": buttons[0].text if buttons and buttons[0].is_displayed() else None,
        "username_autocomplete": usernames[0].get_attribute("autocomplete") if usernames else None,
    }


def sign_out():
    """Forgets Latchkey's cookies (the browser session), as a fresh browser would: WebDriver
    deletes only the cookies of the page it shows."""
    browser.get(base + "/oauth/style.css")
    browser.delete_all_cookies()


def cdp(method, parameters=None):
    return browser.execute_cdp_cmd(method, parameters or {})


def without_conditional_mediation():
    """From the next page on, a browser that has no conditional mediation (the page offers only
    its button); returns the handle to undo it."""
    return cdp("Page.addScriptToEvaluateOnNewDocument", {
        "source": "if (window.PublicKeyCredential) { delete PublicKeyCredential.isConditionalMediationAvailable; "
                  "PublicKeyCredential.isConditionalMediationAvailable = undefined; }"
    })["identifier"]


# Changes the answer in the page before its form is posted, as a hostile page script could:
# `how` is "up" (clear user presence), "uv" (clear user verification) or "signature".
TAMPER = """
const how = arguments[0];
const submit = HTMLFormElement.prototype.submit;
HTMLFormElement.prototype.submit = function () {
  const field = this.elements.credential;
  const credential = JSON.parse(field.value);
  const decode = s => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), c => c.charCodeAt(0));
  const encode = b => btoa(String.fromCharCode(...b)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  if (how === "signature") {
    const signature = decode(credential.response.signature);
    signature[signature.length - 1] ^= 0x01;
    credential.response.signature = encode(signature);
  } else {
    const data = decode(credential.response.authenticatorData);
    data[32] &= how === "up" ? ~0x01 : ~0x04;
    credential.response.authenticatorData = encode(data);
  }
  field.value = JSON.stringify(credential);
  submit.call(this);
};
"""


def passkeys_flow():
    options = VirtualAuthenticatorOptions(
        protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
        is_user_verified=True)
    # Enables WebAuthn's virtual environment for the browser's tab.
    browser.add_virtual_authenticator(options)

    # 1. Sign-up with a passkey.
    verifier = authorize("state-sign-up", prompt="create", login_hint=config["email"])
    out["sign_up_page"] = where()
    out["sign_up_offer"] = passkey_state()
    screenshot("passkey-sign-up")
    press_passkey_button()
    out["after_sign_up"] = where()
    out["sign_up_callback"] = {k: (bool(v) if k == "code" else v) for k, v in Callback.hits[-1]["query"].items()} if Callback.hits else None
    out["sign_up_tokens"] = exchange(verifier)
    out["credentials_after_sign_up"] = [
        {"resident": c.is_resident_credential, "rp_id": c.rp_id, "user_handle": bool(c.user_handle), "sign_count": c.sign_count}
        for c in browser.get_credentials()
    ]

    # 2. Signed out (the cookies gone); a browser without conditional mediation: the button.
    sign_out()
    plain = without_conditional_mediation()
    verifier = authorize("state-button")
    out["sign_in_page"] = where()
    out["sign_in_offer"] = passkey_state()
    screenshot("passkey-sign-in")
    press_passkey_button()
    out["after_button"] = where()
    out["button_callback_state"] = Callback.hits[-1]["query"].get("state") if Callback.hits else None
    out["button_tokens"] = exchange(verifier)

    # 3. Conditional mediation: the page hands a request to AutoFill on load.
    sign_out()
    cdp("Page.removeScriptToEvaluateOnNewDocument", {"identifier": plain})
    hits = len(Callback.hits)
    verifier = authorize("state-conditional")
    try:
        out["conditional_available"] = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "(window.PublicKeyCredential && PublicKeyCredential.isConditionalMediationAvailable"
            " ? PublicKeyCredential.isConditionalMediationAvailable() : Promise.resolve(null)).then(done, () => done(null));")
    except WebDriverException:  # The page had gone on already.
        out["conditional_available"] = "navigated"
    deadline = time.time() + 5
    while time.time() < deadline and len(Callback.hits) == hits:
        time.sleep(0.2)
    how = "on_load" if len(Callback.hits) > hits else None
    if how is None and where()["server"] == "latchkey":
        screenshot("passkey-conditional")
        browser.find_element(By.NAME, "username").click()
        deadline = time.time() + 10
        while time.time() < deadline and len(Callback.hits) == hits:
            time.sleep(0.2)
        how = "on_focus" if len(Callback.hits) > hits else "pending"
    out["conditional"] = how
    out["after_conditional"] = where()
    out["conditional_tokens"] = exchange(verifier) if how != "pending" else None

    # 4. Refusals, each on a fresh sign-in page without conditional mediation.
    plain = without_conditional_mediation()
    sign_out()
    credentials = browser.get_credentials()
    authenticator = browser.virtual_authenticator_id

    #    An authenticator whose user does not consent: the browser refuses, nothing is posted.
    browser.remove_virtual_authenticator()
    browser.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
        is_user_verified=True, is_user_consenting=False))
    for credential in credentials:
        browser.add_credential(credential)
    authorize("state-no-consent")
    hits = len(Callback.hits)
    press_passkey_button(navigates=False)
    out["no_consent"] = {"page": where(), "alert": alert(), "reached_rp": len(Callback.hits) > hits}
    screenshot("passkey-refused-by-browser")

    #    An authenticator that does not verify its user: the browser refuses too.
    browser.remove_virtual_authenticator()
    browser.add_virtual_authenticator(options)
    for credential in credentials:
        browser.add_credential(credential)
    browser.set_user_verified(False)
    authorize("state-no-uv")
    try:
        press_passkey_button(navigates=False)
        out["not_verified"] = {"page": where(), "alert": alert(), "reached_rp": len(Callback.hits) > hits}
    except Exception:  # The browser posted an answer without UV after all: the server's word.
        out["not_verified"] = {"page": where(), "alert": alert(), "reached_rp": len(Callback.hits) > hits, "posted": True}
    browser.set_user_verified(True)

    #    Answers changed in the page before they are posted: the server refuses each.
    for how in ("up", "uv", "signature"):
        authorize("state-" + how)
        browser.execute_script(TAMPER, how)
        press_passkey_button()
        out["tampered_" + how] = {"page": where(), "alert": alert(), "reached_rp": len(Callback.hits) > hits}
        screenshot("passkey-refused-" + how)
    out["authenticator_replaced"] = authenticator != browser.virtual_authenticator_id
    out["callback_states"] = [hit["query"].get("state") for hit in Callback.hits]


run(passkeys_flow, page, out, "passkeys", servers=[callback_server], on_failure=lambda out: out.update(failed_alert=alert()))
