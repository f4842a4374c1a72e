"""A desktop browser registers a passkey on a development server at http://localhost:PORT:
Debian's headless Chromium with a virtual platform authenticator (DevTools WebAuthn domain:
CTAP2, internal transport, resident keys, user verification), driven by Selenium.

Usage: localhost_passkey.py < CONFIG_JSON   ({"base", "chromium", "chromedriver", "username"})

The page at `base` signs up by password, asks for registration options, passes them to
`PublicKeyCredential.parseCreationOptionsFromJSON` and `navigator.credentials.create`, and posts
`credential.toJSON()` back. Prints one JSON object: the page's origin, the options' `rp`, and the
registration's status and body. Tokens and passwords are never printed.
"""

import json
import sys

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

config = json.load(sys.stdin)
options = Options()
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
    options.add_argument(argument)
options.binary_location = config["chromium"]
driver = webdriver.Chrome(options=options, service=Service(config["chromedriver"]))
try:
    authenticator = VirtualAuthenticatorOptions()
    authenticator.protocol = VirtualAuthenticatorOptions.Protocol.CTAP2
    authenticator.transport = VirtualAuthenticatorOptions.Transport.INTERNAL
    authenticator.has_resident_key = True
    authenticator.has_user_verification = True
    authenticator.is_user_verified = True
    driver.add_virtual_authenticator(authenticator)
    driver.get(config["base"] + "/healthz")
    driver.set_script_timeout(30)
    result = driver.execute_async_script(
        """
        const [username, done] = arguments;
        (async () => {
          const signUp = await fetch('/v1/auth/password/signup', {method: 'POST', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({username, password: 'correct horse battery staple'})});
          if (signUp.status !== 201 && signUp.status !== 200) throw new Error('sign-up answered ' + signUp.status);
          const headers = {'Content-Type': 'application/json', 'Authorization': 'Bearer ' + (await signUp.json()).access_token};
          const options = await (await fetch('/v1/passkeys/registration/options', {method: 'POST', headers, body: '{}'})).json();
          const credential = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options.publicKey)});
          const answer = await fetch('/v1/passkeys', {method: 'POST', headers,
            body: JSON.stringify({flow_id: options.flow_id, credential: credential.toJSON()})});
          done({origin: location.origin, rp: options.publicKey.rp, status: answer.status, body: await answer.json()});
        })().catch(error => done({failed: String(error)}));
        """,
        config["username"],
    )
    print(json.dumps(result))
finally:
    driver.quit()
