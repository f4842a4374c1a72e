"""The admin console (/admin) in a real browser: Debian's headless Chromium, driven by Selenium
through chromium-driver. An admin signs in on the hosted pages with a password and a TOTP code,
opens every page of the console and does each action through its confirmation page.

Usage: browser_console.py console < CONFIG_JSON

CONFIG_JSON: `base` (the server), `screenshots` (a folder), `chromium`, `chromedriver`, `admin`
with `username`, `password` and `totp_secret` (base32), and `target` with `email` (an account
with two live sessions). Screenshots are named `admin-*.png`. Prints one JSON object with what
the browser saw; the password, the TOTP secret and codes and client secrets are never printed.
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
screenshot, click_and_wait, submit, where = page.screenshot, page.click_and_wait, page.submit, page.where


def press(label):
    """Presses the submit button whose text is `label` and waits for the next page."""
    click_and_wait(browser.find_element(By.XPATH, f"//button[normalize-space()='{label}']"))


def follow(text):
    """Follows the first link whose text is `text`."""
    click_and_wait(browser.find_element(By.XPATH, f"//a[normalize-space()='{text}']"))


def confirm(link, button):
    """Opens an action's confirmation page by its link and presses its button; returns the page
    the confirmation was on."""
    follow(link)
    shown = where()
    press(button)
    return shown


def status():
    found = browser.find_elements(By.CSS_SELECTOR, '[role="status"]')
    return found[0].text if found else None


def console_flow():
    admin, target = config["admin"], config["target"]

    # 1. /admin sends the browser to the hosted sign-in: the password, then a TOTP code.
    browser.get(base + "/admin")
    out["sign_in_page"] = where()
    submit({"username": admin["username"], "password": admin["password"]})
    out["second_factor_page"] = where()
    submit({"code": totp(admin["totp_secret"])})
    out["overview"] = where()
    out["chart"] = len(browser.find_elements(By.CSS_SELECTOR, "svg.chart rect")) > 0
    screenshot("admin-overview")

    # 2. Users: the list, then a search for the target, and the target's page.
    follow("Users")
    out["users"] = where()
    screenshot("admin-users")
    field = browser.find_element(By.NAME, "query")
    field.send_keys(target["email"][:6])
    press("Search")
    out["search_rows"] = len(browser.find_elements(By.CSS_SELECTOR, "tbody tr"))
    follow(next(a.text for a in browser.find_elements(By.CSS_SELECTOR, "tbody a")))
    out["user"] = where()
    out["sessions_shown"] = len(browser.find_elements(By.XPATH, "//a[normalize-space()='End']"))
    screenshot("admin-user")

    # 3. The actions, each through its confirmation page.
    out["end_session_confirmation"] = confirm("End", "End the session")
    out["after_end_session"] = status()
    out["disable_confirmation"] = confirm("Disable", "Disable the account")
    screenshot("admin-confirm")
    out["after_disable"] = status()
    confirm("Enable", "Enable the account")
    out["after_enable"] = status()
    confirm("Send a password reset", "Send a password reset")
    out["after_reset"] = status()

    # 4. Clients: add a confidential one (its secret shown once), rotate the secret, remove it.
    follow("Clients")
    out["clients"] = where()
    screenshot("admin-clients")
    submit_fields = {"name": "Console Notes", "redirect_uris": "https://notes.example/cb"}
    for name, value in submit_fields.items():
        browser.find_element(By.NAME, name).send_keys(value)
    browser.find_element(By.NAME, "confidential").click()
    press("Add")
    out["client_added"] = where()
    first_secret = browser.find_element(By.ID, "client-secret").text
    rotate = browser.find_element(By.XPATH, "//a[normalize-space()='Rotate the secret']").get_attribute("href")
    client_page = rotate.replace(base, "").replace("/confirm/rotate-secret", "")
    screenshot("admin-client")
    confirm("Rotate the secret", "Rotate the secret")
    second_secret = browser.find_element(By.ID, "client-secret").text
    out["secret_rotated"] = bool(first_secret) and bool(second_secret) and first_secret != second_secret
    browser.get(base + client_page)
    out["secret_shown_again"] = len(browser.find_elements(By.ID, "client-secret")) > 0
    confirm("Remove the client", "Remove the client")
    out["after_remove"] = where()

    # 5. Keys: rotate.
    follow("Keys")
    out["keys"] = where()
    screenshot("admin-keys")
    confirm("Rotate the keys", "Rotate the keys")
    out["after_rotate"] = status()

    # 6. The audit log, filtered, and its export link.
    follow("Audit log")
    out["audit"] = where()
    browser.find_element(By.NAME, "event").send_keys("account.disabled")
    press("Filter")
    out["audit_rows"] = [row.find_elements(By.TAG_NAME, "td")[2].text for row in browser.find_elements(By.CSS_SELECTOR, "tbody tr")]
    out["export_link"] = browser.find_element(By.XPATH, "//a[normalize-space()='Export as NDJSON']").get_attribute("href").replace(base, "")
    screenshot("admin-audit")


run({"console": console_flow}[flow], page, out, flow)
