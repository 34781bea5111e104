"""Helpers of the browser tests (test_web_ui.py, test_compare_ui.py): a `rankscope serve`
process, Chromium's flags, and robust properties of what a canvas shows."""

import http.client
import os
import signal
import subprocess

import pytest

try:
    from playwright import sync_api as playwright_api
except ImportError:  # a missing dependency fails the suite: the UI must be tested in CI
    pytest.fail("Playwright is missing: scripts/setup.sh --deps installs it", pytrace=False)

CHROMIUM = os.environ.get("RANKSCOPE_CHROMIUM", "/usr/bin/chromium")

# Debian's Chromium, headless, with nothing that reaches the network by itself.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
if not os.path.exists(CHROMIUM):
    pytest.fail(f"no Chromium at {CHROMIUM}: scripts/setup.sh --deps installs Debian's chromium", pytrace=False)


# Fixtures of every browser test module (imported by name there): one Chromium per module, a fresh
# page per test that fails the test on any JavaScript error.
@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors in the page: {errors}"


class Server:
    def __init__(self, binary, paths, extra=()):
        self.proc = subprocess.Popen([binary, "serve", *map(str, paths), "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("rankscope serve: http://"):
            self.proc.kill()
            raise AssertionError(f"rankscope serve did not start: {line}{self.proc.stderr.read()}")
        self.url = line.split()[2].split("#")[0]
        self.port = int(self.url.rsplit(":", 1)[1].strip("/"))

    def get(self, path, headers=None, method="GET", body=None):
        """A raw request (the path is sent as written: no client-side normalisation)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        conn.putrequest(method, path, skip_accept_encoding=True)
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        res = conn.getresponse()
        out = res.status, res.read()
        conn.close()
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=30) == 0


def canvas_pixels(page, selector):
    """The canvas' RGBA pixels, read in the page."""
    return page.evaluate("""(sel) => {
        const c = document.querySelector(sel);
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        return {w: c.width, h: c.height, data: Array.from(d)};
    }""", selector)


def count_pixels(px, predicate):
    d = px["data"]
    return sum(1 for i in range(0, len(d), 4) if d[i + 3] > 0 and predicate(d[i], d[i + 1], d[i + 2]))


def is_red(r, g, b):  # the abnormal / late-arrival red (#d62728)
    return r > 180 and g < 90 and b < 90
