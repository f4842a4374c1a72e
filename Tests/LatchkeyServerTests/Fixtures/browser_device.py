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

import base64
import hashlib
import hmac
import json
import os
import struct
import sys
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

flow = sys.argv[1]
config = json.load(sys.stdin)
base = config["base"]
shots = config["screenshots"]
os.makedirs(shots, exist_ok=True)
out = {}


def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = config.get("chromium", "/usr/bin/chromium")
    for argument in [
        "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=420,900",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
        "--metrics-recording-only", "--password-store=basic", "--lang=en-US",
        # Loopback only: any other host name resolves to nothing.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        f"--user-data-dir={tempfile.mkdtemp(prefix='latchkey-chromium-')}",
    ]:
        options.add_argument(argument)
    if os.geteuid() == 0:
        # Chromium's sandbox cannot run as root; the tests run as root in CI.
        options.add_argument("--no-sandbox")
    service = Service(config.get("chromedriver", "/usr/bin/chromedriver"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    return driver


browser = chromium()


def screenshot(name):
    browser.save_screenshot(os.path.join(shots, name + ".png"))


def heading():
    headings = browser.find_elements(By.TAG_NAME, "h1")
    return headings[0].text if headings else None


def where():
    """The page the browser shows: path and heading."""
    parts = urllib.parse.urlsplit(browser.current_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return {"server": "latchkey" if origin == base else origin, "path": parts.path, "h1": heading()}


def paragraphs():
    return [p.text for p in browser.find_elements(By.CSS_SELECTOR, "main p")]


def click_and_wait(element):
    """Clicks and waits until the next page has replaced this one and finished loading."""
    page = browser.find_element(By.TAG_NAME, "html")
    element.click()
    wait = WebDriverWait(browser, 30, ignored_exceptions=[WebDriverException])
    wait.until(expected_conditions.staleness_of(page))
    wait.until(lambda d: d.execute_script("return document.readyState") == "complete")


def submit(fields, button=None):
    """Types into the fields (by name) and presses the form's submit button (or the one named)."""
    for name, value in fields.items():
        field = browser.find_element(By.NAME, name)
        field.clear()
        field.send_keys(value)
    selector = f'button[type="submit"][value="{button}"]' if button else 'button[type="submit"]'
    click_and_wait(browser.find_element(By.CSS_SELECTOR, selector))


def totp(secret_base32):
    """RFC 6238 with SHA-1, six digits, 30-second steps: what an authenticator app shows."""
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    counter = int(time.time() // 30)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{number % 1_000_000:06d}"


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


try:
    {"device": device_flow}[flow]()
except Exception as error:  # What the browser showed when a step failed, for the test's message.
    out["failed"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    try:
        out["failed_at"] = where()
        screenshot("failed-" + flow)
    except Exception:
        pass
finally:
    browser.quit()

print(json.dumps(out, sort_keys=True))
