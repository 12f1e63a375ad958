"""``make test``'s two lanes (tests/lanes.py) run what one session would, and fail when either fails.

* The Makefile's two marker expressions partition the one-session selection ``not (slow or live)``:
  for every combination of the markers conftest sets, exactly one lane takes a test that the one
  session would run, and neither takes one it would not.  A lane expression edited on its own
  (a marker dropped from one side) fails this.
* The runner's exit status is non-zero when either lane fails, and both lanes' results are printed.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression

from conftest import MARKERS

ROOT = Path(__file__).resolve().parents[1]
ONE_SESSION = "not (slow or live or heavy)"


def _lane_expressions(makefile_text, target="test"):
    """The two -m expressions of the Makefile's *target* (its $(LANES) line)."""
    block = makefile_text.split(f"\n{target}: ", 1)[1].split("\n\n", 1)[0]
    line = next(line for line in block.splitlines() if "$(LANES)" in line)
    found = re.findall(r'"([^"]+)"', line.split("--", 1)[0])
    assert len(found) == 2, line
    return found


def _selected(expression, markers):
    return Expression.compile(expression).evaluate(lambda name, **kwargs: name in markers)


def lane_problems(lanes, one_session=ONE_SESSION):
    """Marker sets that no lane, both lanes, or a lane outside the one session would run."""
    problems = []
    names = sorted(MARKERS)
    for bits in itertools.product((False, True), repeat=len(names)):
        markers = {name for name, bit in zip(names, bits) if bit}
        want = _selected(one_session, markers)
        taken = [_selected(lane, markers) for lane in lanes]
        if sum(taken) != (1 if want else 0):
            problems.append((sorted(markers), taken, want))
    return problems


def test_the_two_lanes_run_exactly_what_one_session_would():
    lanes = _lane_expressions((ROOT / "Makefile").read_text())
    assert lane_problems(lanes) == []
    # the check fails on a lane that drops a marker, or on two lanes that overlap
    assert lane_problems(["notebook and not (slow or live or heavy)", "not (notebook or book or slow or live or heavy)"])
    assert lane_problems(["not (slow or live or heavy)", "not (notebook or book or slow or live or heavy)"])
    # a chapter run beside (``beside``) taken by both lanes, or by neither
    assert lane_problems(["(notebook or book) and not (slow or live or heavy)",
                          "(beside or not (notebook or book)) and not (slow or live or heavy)"])
    assert lane_problems(["(notebook or book) and not (beside or slow or live or heavy)",
                          "not (notebook or book or slow or live or heavy)"])


def test_the_two_slow_lanes_run_exactly_what_one_slow_session_would():
    """``make test-slow`` runs ``slow or live or heavy`` in two lanes (issue 32's CI ran out of its 90
    minutes with them in one): together they take each of those tests once."""
    lanes = _lane_expressions((ROOT / "Makefile").read_text(), target="test-slow")
    assert lane_problems(lanes, "slow or live or heavy") == []
    assert lane_problems(["(slow or live) and book", "(slow or live) and not (book or publish)"], "slow or live or heavy")


@pytest.mark.parametrize("second_passes", [True, False])
def test_the_runner_fails_when_a_lane_fails_and_prints_both(tmp_path, second_passes):
    (tmp_path / "test_two.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.one\ndef test_first():\n    pass\n\n"
        f"@pytest.mark.two\ndef test_second():\n    assert {second_passes}\n"
    )
    res = subprocess.run([sys.executable, str(ROOT / "tests" / "lanes.py"), "one", "two", "--", "-q", "-p",
                          "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"))
    out = res.stdout + res.stderr
    assert "1 passed" in out, out
    assert ("1 failed" in out) != second_passes, out
    assert (res.returncode == 0) == second_passes, out


def session_wide_playwright(source: str) -> list[str]:
    """The session-scoped fixtures in *source* that start a sync Playwright."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and "sync_playwright" in ast.unparse(node):
            for dec in node.decorator_list:
                text = ast.unparse(dec).replace("'", '"')
                if "fixture" in text and 'scope="session"' in text:
                    found.append(node.name)
    return found


def test_no_fixture_keeps_a_sync_playwright_for_the_whole_session():
    """A lane is one pytest session: a sync Playwright left running by one file's session-scoped
    fixture makes the next file's fail to start ("Sync API inside the asyncio loop").  It happened
    twice (test_book before test_keyboard in make test, test_portable_lab before test_publish in
    make test-slow); browser fixtures are module-scoped."""
    offenders = {path.name: names for path in sorted((ROOT / "tests").glob("*.py"))
                 if (names := session_wide_playwright(path.read_text()))}
    assert not offenders, offenders
    planted = ('@pytest.fixture(scope="session")\ndef browser():\n'
               '    with sync_api.sync_playwright() as pw:\n        yield pw\n')
    assert session_wide_playwright(planted) == ["browser"]
    assert session_wide_playwright(planted.replace("session", "module")) == []
