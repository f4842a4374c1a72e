"""The phone's half of a device sign-in (RFC 8628) in a real browser: Debian's headless Chromium,
driven by Selenium through chromium-driver, on Latchkey's /device page and hosted sign-in. The TV's
half (the device authorization and the polling) is the Swift test's, with a plain HTTP client.

Usage: browser_device.py device < CONFIG_JSON

CONFIG_JSON: `base` (the server), `screenshots` (a folder), `chromium`, `chromedriver`,
`verification_uri_complete` (what the TV would show as a QR code), `user_code` (what it shows as
text), and `user` with `username`, `password` and `totp_secret` (base32). The flow opens the QR
code's link, checks that it only filled the code in, presses Continue, signs in with the password
and a TOTP code, reads the consent page and presses Allow. Screenshots are named `device-*.png`.
Prints one JSON object with what the browser saw; the password, the TOTP secret and codes are never
printed.
"""

import json
import os
import sys

from selenium.webdriver.common.by import By

from browser_harness import Page, chromium, run, totp

flow = sys.argv[1]
config = json.load(sys.stdin)
base = config["base"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
out = {}


browser = chromium(config)
page = Page(browser, shots, {base: "latchkey"})
screenshot, heading, click_and_wait, submit, where = page.screenshot, page.heading, page.click_and_wait, page.submit, page.where




def paragraphs():
    return [p.text for p in browser.find_elements(By.CSS_SELECTOR, "main p")]


def device_flow():
    user = config["user"]

    # 1. The phone scans the TV's QR code: the code page, the code filled in, nothing approved.
    browser.get(config["verification_uri_complete"])
    out["code_page"] = where()
    out["code_filled_in"] = browser.find_element(By.NAME, "user_code").get_attribute("value") == config["user_code"]
    screenshot("device-code")
    submit({})

    # 2. The usual sign-in page, naming the application; the password.
    out["sign_in_page"] = where()
    out["sign_in_lead"] = paragraphs()[:1]
    screenshot("device-sign-in")
    submit({"username": user["username"], "password": user["password"]})

    # 3. The account has TOTP: the second-factor page.
    out["second_factor_page"] = where()
    screenshot("device-second-factor")
    submit({"code": totp(user["totp_secret"])})

    # 4. The device consent page: the application named, a device asking, the scopes in words.
    out["consent_page"] = where()
    out["consent_text"] = paragraphs()
    out["consent_items"] = [item.text for item in browser.find_elements(By.CSS_SELECTOR, "main li")]
    out["consent_buttons"] = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "button[type=submit]")]
    screenshot("device-consent")
    submit({}, button="allow")

    # 5. Done: the phone says the TV is signed in.
    out["done_page"] = where()
    out["done_text"] = paragraphs()
    screenshot("device-done")


run({"device": device_flow}[flow], page, out, flow)
