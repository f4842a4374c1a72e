"""What the browser scripts (browser_*.py) share: Debian's headless Chromium driven by Selenium
through chromium-driver, a small HTTP server in the place of the app's redirect URI, the page
helpers every flow types and clicks with, and TOTP codes as an authenticator app shows them.

Each script imports it from its own folder (Python puts a script's folder first on its path).
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import struct
import tempfile
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait


def chromium(config, hosts=("127.0.0.1",)):
    """Headless Chromium (config's `chromium` and `chromedriver`, else Debian's paths) in which
    only `hosts` resolve, to the loopback: the servers under test, never anything else."""
    options = webdriver.ChromeOptions()
    options.binary_location = config.get("chromium", "/usr/bin/chromium")
    for argument in [
        "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=420,900",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
        "--metrics-recording-only", "--password-store=basic",
        # English pages and mail (Accept-Language: en-US) whatever the machine's LANG: the mail's
        # language follows the browser's, and the flows read English text.
        "--lang=en-US",
        "--host-resolver-rules=MAP * ~NOTFOUND, " + ", ".join(f"EXCLUDE {host}" for host in hosts),
        f"--user-data-dir={tempfile.mkdtemp(prefix='latchkey-chromium-')}",
    ]:
        options.add_argument(argument)
    if os.geteuid() == 0:
        # Chromium's sandbox cannot run as root; the tests run as root in CI.
        options.add_argument("--no-sandbox")
    driver = webdriver.Chrome(options=options, service=Service(config.get("chromedriver", "/usr/bin/chromedriver")))
    driver.set_page_load_timeout(30)
    return driver


class Callback(http.server.BaseHTTPRequestHandler):
    """The app's redirect URI: answers every GET with a small page and records its path and query
    (but the browser's own /favicon.ico)."""

    hits = []

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        if parts.path != "/favicon.ico":
            Callback.hits.append({"path": parts.path, "query": dict(urllib.parse.parse_qsl(parts.query))})
        body = b"<!DOCTYPE html><title>Relying party</title><h1>Back at the application</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start_callback():
    """Starts ``Callback`` on a free loopback port; returns the server and its origin."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Callback)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


class Page:
    """What a person does on the page `browser` shows; screenshots go to the folder `shots`;
    `servers` names the origins the flow visits (`{base: "latchkey", rp: "rp"}`)."""

    def __init__(self, browser, shots, servers):
        self.browser = browser
        self.shots = shots
        self.servers = servers

    def where(self):
        """The page the browser shows: which server (its name, else its origin), path, heading."""
        parts = urllib.parse.urlsplit(self.browser.current_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        return {"server": self.servers.get(origin, origin), "path": parts.path, "h1": self.heading()}

    def screenshot(self, name):
        self.browser.save_screenshot(os.path.join(self.shots, name + ".png"))

    def heading(self):
        headings = self.browser.find_elements(By.TAG_NAME, "h1")
        return headings[0].text if headings else None

    def click_and_wait(self, element):
        """Clicks and waits until the next page has replaced this one and finished loading."""
        page = self.browser.find_element(By.TAG_NAME, "html")
        element.click()
        wait = WebDriverWait(self.browser, 30, ignored_exceptions=[WebDriverException])
        wait.until(expected_conditions.staleness_of(page))
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")

    def submit(self, fields, button=None):
        """Types into the fields (by name) and presses the form's submit button (or the one named);
        every form answers 303 (S23), so the next page replaces this one."""
        for name, value in fields.items():
            field = self.browser.find_element(By.NAME, name)
            field.clear()
            field.send_keys(value)
        selector = f'button[type="submit"][value="{button}"]' if button else 'button[type="submit"]'
        self.click_and_wait(self.browser.find_element(By.CSS_SELECTOR, selector))


def totp(secret_base32, at=None):
    """RFC 6238 with SHA-1, six digits, 30-second steps: what an authenticator app shows."""
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    counter = int((time.time() if at is None else at) // 30)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    number = struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF
    return f"{number % 1_000_000:06d}"


def run(flow, page, out, name, servers=(), on_failure=None):
    """Runs `flow`, then prints `out` as one JSON object. When a step fails, `out` records the
    error (`failed`), the page it happened on (`failed_at`) and what `on_failure(out)` adds, and
    the screenshot `failed-NAME` shows it; the browser quits and `servers` stop either way."""
    try:
        flow()
    except Exception as error:
        out["failed"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        try:
            out["failed_at"] = page.where()
            if on_failure:
                on_failure(out)
            page.screenshot("failed-" + name)
        except Exception:
            pass
    finally:
        page.browser.quit()
        for server in servers:
            server.shutdown()
    print(json.dumps(out, sort_keys=True))
