"""The course page covers the whole book, and every number it states is checked.

``chapters/course.md`` is a Markdown page, not a notebook: it cannot glue values, so this test
holds its numbers to their sources.

- The plan covers every chapter of the book (7a, 9, 10 and the appendix included), and every
  session gives its time, prerequisites, reading, exercises to assign and self-check questions.
- Every exercise of the book is assigned once; each reference carries the number the chapter's
  source gives the exercise (``:enumerator:``, itself held to the built book by tests/test_book.py),
  and each page link carries the page's title.
- The self-check questions are the package's (:mod:`dpmask.selfcheck`), word for word, with their
  tolerances.
- What the page says the book found about the paper follows the concordance: the counts of each
  status and the labels listed as slips and as false are computed here from the concordance's
  own table.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from dpmask.selfcheck import QUESTIONS

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "chapters" / "course.md"
CONCORDANCE = ROOT / "chapters" / "concordance.ipynb"

# every chapter and section of the book that a course must cover (the reference pages aside)
CHAPTERS = [
    "01_introduction", "02_setup", "03_main_results", "04_discussion", "05_proofs", "06_inference",
    "07_tightness", "07a_exact_p2", "08_scale", "09_rivals", "privacy_in_practice", "A_technical_lemmas",
]


def _page():
    return COURSE.read_text()


def _sessions(text):
    """{number: text of its "### Session N" block}."""
    parts = re.split(r"^### Session (\d+):.*$", text, flags=re.M)
    blocks = {int(n): body.split("\n## ", 1)[0] for n, body in zip(parts[1::2], parts[2::2])}
    assert blocks, "no '### Session N:' blocks"
    return blocks


def _plan(text):
    """{session: {time, read, assign, check}} from the plan table."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split("|")]
            rows[int(m.group(1))] = dict(zip(("time", "read", "assign", "check"), cells))
    return rows


def _cells(path):
    return [(c["cell_type"], c["source"] if isinstance(c["source"], str) else "".join(c["source"]))
            for c in json.loads(path.read_text())["cells"]]


def test_the_plan_covers_every_chapter():
    text = _page()
    plan = _plan(text)
    assert sorted(plan) == list(range(1, len(plan) + 1)) and len(plan) >= 10
    read = {t for row in plan.values() for t in re.findall(r"\{doc\}`[^`<]*<([^>]+)>`", row["read"])}
    missing = [c for c in CHAPTERS if c not in read]
    assert not missing, f"the plan's reading leaves out {missing}"
    assert "concordance" in read
    # every chapter file the table of contents numbers is in the list above
    toc = (ROOT / "_toc.yml").read_text()
    in_toc = set(re.findall(r"file: chapters/(\S+)", toc)) - {"notation", "concordance", "course", "api", "references", "accessibility"}
    assert in_toc == set(CHAPTERS)


def test_each_session_has_its_time_prerequisites_reading_assignment_and_self_check():
    text = _page()
    plan, sessions = _plan(text), _sessions(text)
    assert sorted(sessions) == sorted(plan)
    for n, body in sessions.items():
        for field in ("**Prerequisites**", "**Read**", "**Assign**", "**Self-check**"):
            assert field in body, (n, field)
        assert re.fullmatch(r"\d+(\.\d+)? h", plan[n]["time"]), (n, plan[n]["time"])
        assigned = re.findall(r"\{ref\}`Exercise [^`]*<(ex-[\w-]+)>`", body.split("**Assign**")[1].split("\n- **")[0])
        assert assigned, n
        assert assigned == re.findall(r"<(ex-[\w-]+)>", plan[n]["assign"]), n
        asked = re.findall(r"^  - `([\w-]+)`: ", body, re.M)
        assert asked and asked == re.findall(r"`([\w-]+)`", plan[n]["check"]), n
        read_here = re.findall(r"<([\w]+)>`", body.split("**Read**")[1].split("\n- **")[0])
        assert set(read_here) >= set(re.findall(r"<([\w]+)>`", plan[n]["read"])), n


def test_every_exercise_is_assigned_once_with_its_number():
    text = _page()
    plan = _plan(text)
    assigned = [lab for row in plan.values() for lab in re.findall(r"<(ex-[\w-]+)>", row["assign"])]
    exercises = {}
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for kind, src in _cells(path):
            for m in re.finditer(r"^[`:]{3,}\{exercise\}[^\n]*\n:label: (\S+)\n:enumerator: (\S+)", src, re.M):
                exercises[m.group(1)] = m.group(2)
    assert len(exercises) >= 25
    counts = Counter(assigned)
    assert sorted(counts) == sorted(exercises), set(exercises) ^ set(counts)
    assert all(c == 1 for c in counts.values()), counts
    wrong = [(lab, txt) for txt, lab in re.findall(r"\{ref\}`Exercise ([^`<]+?) <(ex-[\w-]+)>`", text)
             if txt != exercises[lab]]
    assert not wrong, wrong


def test_page_links_carry_the_pages_titles():
    titles = {}
    for path in (ROOT / "chapters").glob("*"):
        if path.suffix == ".ipynb":
            first = next(src for kind, src in _cells(path) if kind == "markdown")
        elif path.suffix == ".md":
            first = path.read_text()
        else:
            continue
        titles[path.stem] = re.search(r"^# (.+)$", first, re.M).group(1).strip()
    links = re.findall(r"\{doc\}`([^`<]+?) <([\w]+)>`", _page())
    assert len(links) > 15
    wrong = [(text, target, titles.get(target)) for text, target in links if titles.get(target) != text]
    assert not wrong, wrong


def _asked(text):
    """{id: the question's text as the page prints it}."""
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^  - `([\w-]+)`: (.+)$", text, re.M)}


def expected_line(qid):
    q = QUESTIONS[qid]
    tol = "" if q.rel_tol == 5e-3 else f" Tolerance {100 * q.rel_tol:g} %."
    return q.text + tol


def test_self_check_questions_are_the_packages_word_for_word():
    asked = _asked(_page())
    assert sorted(asked) == sorted(QUESTIONS), set(asked) ^ set(QUESTIONS)
    wrong = {qid: (line, expected_line(qid)) for qid, line in asked.items() if line != expected_line(qid)}
    assert not wrong, wrong
    # each question sits in the session that reads its chapter
    sessions, plan = _sessions(_page()), _plan(_page())
    for n, body in sessions.items():
        for qid in re.findall(r"^  - `([\w-]+)`: ", body, re.M):
            assert QUESTIONS[qid].chapter in plan[n]["read"], (n, qid)
    # the default tolerance the page states is the package's
    assert "within a relative tolerance of 0.5 %" in _page()
    assert all(q.rel_tol <= 5e-3 for q in QUESTIONS.values())


# --- what the book found about the paper ---------------------------------------------------------

_ROW = re.compile(r"^\|\s*(?P<num>[^|]*?)\s*\|\s*`(?P<label>[^`]+)`\s*\|\s*(?P<book>[^|]*?)\s*\|\s*(?P<status>[^|]*?)\s*\|\s*$")
_STATUS = re.compile(r"^\*(as printed|slip|false|not used)\*")


def concordance_findings():
    """{status: [labels]} from the concordance's own table, in its order."""
    found = {"as printed": [], "slip": [], "false": [], "not used": []}
    for kind, src in _cells(CONCORDANCE):
        if kind != "markdown":
            continue
        for line in src.splitlines():
            m = _ROW.match(line)
            if m:
                status = _STATUS.match(m.group("status"))
                assert status, line
                found[status.group(1)].append(m.group("label"))
    return found


def course_findings(text):
    """(counts, slips, false) as the course page states them."""
    m = re.search(
        r"accounts for every one of the paper's (\d+) labels:\s+(\d+) are \*as printed\*, (\d+) are \*slips\*"
        r"[^,]*, (\d+) are \*false\*[^,]*,\s+and (\d+) are not used", text)
    assert m, "the course page no longer states the concordance's counts in the expected sentence"
    total, printed, slips, false, unused = (int(g) for g in m.groups())
    section = text.split("## What the book found about the paper", 1)[1].split("\n## ", 1)[0]
    n_slips = int(re.search(r"The (\d+) slips", section).group(1))
    n_false = int(re.search(r"The (\d+) false statements", section).group(1))
    slip_block = section.split("The %d slips" % n_slips, 1)[1].split("The %d false" % n_false, 1)[0]
    false_block = section.split("The %d false statements" % n_false, 1)[1]
    slip_labels = re.findall(r"^- [^`\n]*`([^`]+)`", slip_block, re.M)
    false_labels = re.findall(r"^- [^`\n]*`([^`]+)`", false_block, re.M)
    counts = {"total": total, "as printed": printed, "slip": slips, "false": false, "not used": unused,
              "slip list": n_slips, "false list": n_false}
    return counts, slip_labels, false_labels


def findings_problems(text, found):
    counts, slip_labels, false_labels = course_findings(text)
    problems = []
    truth = {k: len(v) for k, v in found.items()}
    truth["total"] = sum(truth.values())
    truth["slip list"], truth["false list"] = truth["slip"], truth["false"]
    for key, value in truth.items():
        if counts[key] != value:
            problems.append(f"{key}: the course page says {counts[key]}, the concordance {value}")
    if sorted(slip_labels) != sorted(found["slip"]):
        problems.append(f"slips listed {sorted(slip_labels)}, the concordance's {sorted(found['slip'])}")
    if sorted(false_labels) != sorted(found["false"]):
        problems.append(f"false statements listed {sorted(false_labels)}, the concordance's {sorted(found['false'])}")
    return problems


def test_what_the_book_found_follows_the_concordance():
    found = concordance_findings()
    assert sum(map(len, found.values())) == 70  # every label of the paper (tests/test_concordance.py)
    text = _page()
    assert findings_problems(text, found) == []
    # The check can fail: a status the concordance changes, a count or a label the page changes.
    moved = {k: list(v) for k, v in found.items()}
    moved["slip"].append(moved["as printed"].pop())
    assert findings_problems(text, moved)
    assert findings_problems(text.replace("60 are *as printed*", "61 are *as printed*"), found)
    assert findings_problems(text.replace("`lem:GaussianQuantile`", "`lem:Chi-tail`"), found)


@pytest.mark.parametrize("needle", ["7a", "chapter 9", "chapter 10"])
def test_the_old_gaps_are_closed(needle):
    """The page once stopped at chapter 8; the reading of sessions 10 to 12 names what follows it."""
    plan = _plan(_page())
    reading = " ".join(row["read"] for row in plan.values())
    target = {"7a": "07a_exact_p2", "chapter 9": "09_rivals", "chapter 10": "privacy_in_practice"}[needle]
    assert f"<{target}>" in reading


# --- each question within the reading of its session ----------------------------------------------------------

_STATEMENT = re.compile(r"\b(Lemma|Theorem|Proposition|Corollary|Definition|Exercise) (\d+|[A-Z])\.(\d+)")


def _reading_range(read_cell):
    """(low, high) limits a plan row puts on its reading: "up to Lemma 5.3" -> (None, (5, 3)), "from Lemma 5.4" -> ((5, 4), None)."""
    low = re.search(r"from (?:the proof of )?\w+ (\d+)\.(\d+)", read_cell)
    high = re.search(r"up to \w+ (\d+)\.(\d+)", read_cell)
    as_pair = lambda m: (int(m.group(1)), int(m.group(2))) if m else None     # noqa: E731
    return as_pair(low), as_pair(high)


def reading_problems(text):
    """Questions that name a statement of a chapter outside the part of it their session reads."""
    problems = []
    sessions, plan = _sessions(text), _plan(text)
    for n, body in sessions.items():
        low, high = _reading_range(plan[n]["read"])
        for qid in re.findall(r"^  - `([\w-]+)`: ", body, re.M):
            for kind, chap, num in _STATEMENT.findall(QUESTIONS[qid].text):
                if not chap.isdigit() or not QUESTIONS[qid].chapter.startswith(f"{int(chap):02d}_"):
                    continue          # a statement of another chapter, read in an earlier session
                where = (int(chap), int(num))
                if (low and where < low) or (high and where > high):
                    problems.append((n, qid, f"{kind} {chap}.{num}", plan[n]["read"]))
    return problems


def test_each_question_is_within_its_sessions_reading():
    """ch5-a once asked about G_2 (defined with Lemma 5.5) in session 5, which reads only up to Lemma 5.3."""
    text = _page()
    assert reading_problems(text) == []
    # the check can fail: the old placement of the G_2 question in session 5
    moved = text.replace("| `ch5-a` |", "| `ch5-b` |").replace("| `ch5-b`, `ch5-c` |", "| `ch5-a`, `ch5-c` |")
    s5 = re.search(r"(### Session 5:.*?)(?=### Session 6)", moved, re.S).group(1)
    s6 = re.search(r"(### Session 6:.*?)(?=### Session 7)", moved, re.S).group(1)
    line_a = re.search(r"^  - `ch5-a`: .*$", moved, re.M).group(0)
    line_b = re.search(r"^  - `ch5-b`: .*$", moved, re.M).group(0)
    moved = moved.replace(s5, s5.replace(line_a, line_b)).replace(s6, s6.replace(line_b, line_a))
    assert reading_problems(moved)


def test_every_statement_a_question_names_exists():
    """A question that names Lemma 5.4 for what Lemma 5.5 defines points the student to the wrong place; at least
    every statement named must exist in the book with that number."""
    numbers = set()
    for path in sorted((ROOT / "chapters").glob("*.ipynb")):
        for kind, src in _cells(path):
            numbers |= set(re.findall(r"^:enumerator: (\S+)$", src, re.M))
    named = {f"{c}.{n}" for q in QUESTIONS.values() for _, c, n in _STATEMENT.findall(q.text)}
    assert named and named <= numbers, named - numbers
