"""What the end-to-end sign-in test needs besides the server: an https server on 127.0.0.1 for a
client ID metadata document (a certificate made here, trusted by the server through
SSL_CERT_FILE), the loopback callback that receives the code, and the consent in chromium or
over plain HTTP."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that is its own authority, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


class _Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def serve_document(cert: Path, key: Path, document: dict) -> tuple[ThreadingHTTPServer, str]:
    """Serve `document` over https at /client.json; returns the server and the document's URL
    (the document's client_id is set to that URL)."""
    holder: dict[str, bytes] = {}

    class Handler(_Quiet):
        def do_GET(self) -> None:  # noqa: N802
            body = holder["body"]
            self.send_response(200 if self.path == "/client.json" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://127.0.0.1:{server.server_address[1]}/client.json"
    holder["body"] = json.dumps({**document, "client_id": url}).encode()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, url


class Callback:
    """The client's loopback redirect URI: remembers the query of the one request it gets."""

    def __init__(self) -> None:
        received: dict[str, str] = {}
        self.received = received
        self.done = threading.Event()
        done = self.done

        class Handler(_Quiet):
            def do_GET(self) -> None:  # noqa: N802
                received.update({k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()})
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"signed in")
                done.set()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def in_chromium(base: str, username: str, password: str, steps) -> None:
    """Sign in on /login/ in headless chromium, then run `steps(page)`; in this thread only."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            page = browser.new_page(base_url=base)
            page.set_default_timeout(TIMEOUT_MS)
            page.on("dialog", lambda dialog: dialog.accept())
            page.goto("/login/")
            page.fill("input[name=username]", username)
            page.fill("input[name=password]", password)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/")
            steps(page)
        finally:
            browser.close()


class _Forms(HTMLParser):
    """Each form of a page: its hidden inputs' values, and the names of all its fields."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[dict[str, str], set[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form":
            self.forms.append(({}, set()))
        elif tag in ("input", "button", "select") and self.forms and found.get("name"):
            hidden, names = self.forms[-1]
            names.add(found["name"])
            if found.get("type") == "hidden":
                hidden[found["name"]] = found.get("value") or ""


def hidden_inputs(html: str, *, of_form_with: str = "csrfmiddlewaretoken") -> dict[str, str]:
    """The hidden inputs (the CSRF token, the request's parameters) of the page's first form
    that has a field named `of_form_with`."""
    parser = _Forms()
    parser.feed(html)
    return next(hidden for hidden, names in parser.forms if of_form_with in names)


def signed_in_over_http(base: str, username: str, password: str) -> httpx2.Client:
    """A person signed in on /login/ over plain HTTP (no browser): a client with their session."""
    person = httpx2.Client(base_url=base, timeout=60)
    page = person.get("/login/")
    assert page.status_code == 200, page.text
    form = hidden_inputs(page.text, of_form_with="password")
    form.update(username=username, password=password)
    answer = person.post("/login/", data=form)
    assert answer.status_code == 302, answer.text
    return person


def consent_over_http(person: httpx2.Client, url: str, scope_ids: list[str]) -> dict[str, str]:
    """The consent page at `url` (an authorization request), allowed for these scopes, the way
    the form posts it; the query of the redirect back to the client (code, state, iss)."""
    page = person.get(url)
    assert page.status_code == 200, page.text
    answer = person.post(
        url,
        data={**hidden_inputs(page.text, of_form_with="allow"), "scopes": scope_ids, "allow": "on"},
    )
    assert answer.status_code == 302, answer.text
    return {k: v[0] for k, v in parse_qs(urlsplit(answer.headers["Location"]).query).items()}
