"""Chromium kept to localhost: where the PDF printer and the browser tests find it, and serve it a book.

One place for what ``_ext/editions.py`` (``make pdf``) and every browser test
(``tests/conftest.py``'s ``browser`` fixture, ``tests/a11y.py``, ``tests/a11y_engines.py``) did each
in its own copy until 29 Nov 2026:

- :data:`CHROMIUM`, Debian's Chromium (``apt-get install chromium``), or None when it is missing;
- :data:`CHROMIUM_ARGS`, its launch flags that work offline and as root;
- :func:`serve`, a built folder on a free port of 127.0.0.1, its requests not logged;
- :func:`keep_local`, a browser context that reaches nothing but localhost (the book's promise:
  no CDN, no request at read time), with what it refused noted for the caller to assert on.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM: str | None = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

LOCAL_HOSTS = ("127.0.0.1", "localhost")


class Quiet(http.server.SimpleHTTPRequestHandler):
    """Serves files without a log line per request (the tests' output stays readable)."""

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: str | Path, handler: type[http.server.SimpleHTTPRequestHandler] = Quiet) -> Iterator[str]:
    """Serve *directory* on a free port of 127.0.0.1 with *handler*; yield its base URL, no slash at the end.

    The server runs in a daemon thread and is shut down when the block ends.
    """
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def is_local(url: str) -> bool:
    """Whether a browser may fetch *url* offline: localhost, or data and blobs the page made itself."""
    return url.startswith(("data:", "blob:")) or urlparse(url).hostname in LOCAL_HOSTS


def keep_local(context, outside: list | None = None) -> None:
    """Abort every request of the Playwright *context* that would leave localhost; append its URL to *outside*."""

    def route(r):
        if is_local(r.request.url):
            r.continue_()
        else:
            if outside is not None:
                outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
