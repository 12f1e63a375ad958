"""_ext/localhost.py: the served book and the browser kept to localhost, which every browser test and the PDF printer use."""

from __future__ import annotations

import urllib.request

import pytest

from _ext_import import ext_module

localhost = ext_module("localhost")


@pytest.mark.parametrize("url, local", [
    ("http://127.0.0.1:8000/index.html", True),
    ("http://localhost/_static/x.js", True),
    ("data:image/png;base64,AAAA", True),
    ("blob:http://127.0.0.1:8000/1234", True),
    ("https://assets.invalid/mathjax/tex-chtml.js", False),
    ("http://127.0.0.1.example.org/x", False),
    ("http://localhost.example.org/x", False),
    ("https://binder.invalid/v2/gh/x", False),
])
def test_only_localhost_data_and_blobs_are_local(url, local):
    assert localhost.is_local(url) is local


def test_serve_gives_the_folder_on_127_0_0_1_until_the_block_ends(tmp_path):
    (tmp_path / "page.html").write_text("<p>served</p>")
    with localhost.serve(tmp_path) as base:
        assert base.startswith("http://127.0.0.1:") and not base.endswith("/")
        with urllib.request.urlopen(f"{base}/page.html", timeout=10) as r:
            assert r.read() == b"<p>served</p>"
    with pytest.raises(OSError):  # shut down and closed with the block: nothing answers there
        urllib.request.urlopen(f"{base}/page.html", timeout=10)


def test_a_context_kept_local_refuses_and_notes_what_would_leave(browser, tmp_path):
    """A page that asks another host (a reserved .invalid name, never resolved) for a script: the
    request is refused before it leaves and noted; the page's own file loads."""
    (tmp_path / "own.js").write_text("window.ownLoaded = true;")
    (tmp_path / "page.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><title>t</title><script src='own.js'></script>"
        "<script src='https://assets.invalid/lib.js'></script></head><body></body></html>")
    outside = []
    with localhost.serve(tmp_path) as base:
        context = browser.new_context()
        try:
            localhost.keep_local(context, outside)
            page = context.new_page()
            page.goto(f"{base}/page.html", wait_until="load")
            assert page.evaluate("() => window.ownLoaded === true")
        finally:
            context.close()
    assert outside == ["https://assets.invalid/lib.js"]
