"""Mutation testing of the privacy numbers: stage a copy, run mutmut 3 on the chosen functions, judge.

``make mutate`` runs this (not ``make test``).  What it does:

1. stages the package and the tests in ``mutation/work/`` (git-ignored): ``dpmask/`` with the
   ``@lru_cache`` lines removed from the mutated modules (mutmut 3 does not mutate a decorated
   function, and a cache filled before the fork would answer for a mutant anyway), ``tests/``,
   and ``pyproject.toml`` with the ``[tool.mutmut]`` table of ``mutation/mutmut.toml``;
2. runs ``mutmut run`` there on every mutant of the functions ``[scope]`` names, two at a time;
3. reads mutmut's results and fails (exit 1) if a mutant survived that
   ``mutation/equivalents.md`` does not list, or if a function in scope was called by no test.

An entry of ``mutation/equivalents.md`` is a line ``- `MUTANT` `FRAGMENT`: reason``; it counts
only while the mutant's changed line still contains FRAGMENT (mutmut numbers mutants in source
order, so an edit above can renumber them: a stale entry then fails loudly instead of excusing
another mutant); an entry whose mutant a test now kills fails too (drop it).

Usage: ``python mutation/run.py [--keep] [--resume] [--jobs N] [--only GLOB ...]``.  ``--keep`` reuses
the staged copy's mutants (faster when only tests changed).  ``--resume`` finishes an interrupted run:
it keeps the staged mutants and their verdicts, runs only the mutants in scope that have none yet,
and judges the whole scope (valid while the package and the tests are those of the interrupted run:
staging leaves unchanged files untouched, and mutmut re-tests a changed one).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "work"
CONFIG = HERE / "mutmut.toml"
EQUIVALENTS = HERE / "equivalents.md"
MUTMUT = Path(sys.executable).with_name("mutmut")

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped",
          36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout",
          -11: "segfault", -9: "segfault", None: "not checked"}
# statuses that mean a test noticed the mutant (a hang or a crash is noticed too)
CAUGHT = {"killed", "timeout", "segfault", "suspicious"}


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


def stage(config, keep):
    """Copy what mutmut needs into WORK; the mutants folder is kept only with --keep."""
    WORK.mkdir(exist_ok=True)
    if not keep:
        shutil.rmtree(WORK / "mutants", ignore_errors=True)
    mutated = set(config["tool"]["mutmut"]["only_mutate"])
    for src in sorted((ROOT / "dpmask").rglob("*")):
        if "__pycache__" in src.parts or src.is_dir():
            continue
        rel = src.relative_to(ROOT)
        dst = WORK / rel
        text = src.read_bytes()
        if str(rel) in mutated:
            text = re.sub(rb"(?m)^@lru_cache\(.*\)\n", b"", text)
        if not dst.exists() or dst.read_bytes() != text:  # unchanged files keep their mtime (mutmut reads it)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(text)
    shutil.rmtree(WORK / "tests", ignore_errors=True)
    shutil.copytree(ROOT / "tests", WORK / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    lines = [(ROOT / "pyproject.toml").read_text(), "", "[tool.mutmut]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in config["tool"]["mutmut"].items()]
    (WORK / "pyproject.toml").write_text("\n".join(lines) + "\n")


def scope_globs(config):
    return [f"{module}.x_{name}__mutmut_*" for module, names in config["scope"].items() for name in names]


def results(config):
    """{mutant name: status} for the mutants in scope, from mutmut's .meta files."""
    globs = scope_globs(config)
    out = {}
    for meta in (WORK / "mutants" / "dpmask").rglob("*.py.meta"):
        data = json.loads(meta.read_text())
        for name, code in data.get("exit_code_by_key", {}).items():
            if any(fnmatch.fnmatchcase(name, g) for g in globs):
                out[name] = STATUS.get(code, "suspicious")
    return out


def _function_source(module_file, name):
    """The source of function *name* in a mutated module (up to the next top-level statement)."""
    lines = module_file.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"def {name}("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    return [lines[start].replace(f"def {name}(", "def (", 1)] + lines[start + 1:end]


def changed_line(name):
    """(the mutated lines, a diff of the mutant against the original), read from mutmut's mutants."""
    module, _, func = name.partition("__mutmut_")[0].rpartition(".")
    module_file = WORK / "mutants" / (module.replace(".", "/") + ".py")
    orig = _function_source(module_file, func + "__mutmut_orig")
    mutant = _function_source(module_file, name.rpartition(".")[2])
    diff = [ln for ln in difflib.unified_diff(orig, mutant, lineterm="", n=1)][2:]
    plus = [ln[1:] for ln in diff if ln.startswith("+")]
    return "\n".join(plus), f"# {name}\n" + "\n".join(diff)


def equivalents():
    out = {}
    for line in EQUIVALENTS.read_text().splitlines():
        m = re.match(r"^- `([^`]+)` `([^`]+)`: (.+)$", line)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="reuse the staged mutants (mutmut's cache)")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2, one per core)")
    ap.add_argument("--only", nargs="*", help="mutant-name globs to run instead of the whole scope")
    ap.add_argument("--resume", action="store_true",
                    help="finish an interrupted run: run only the mutants without a verdict, judge all")
    args = ap.parse_args(argv)
    if args.resume and args.only:
        ap.error("--resume runs the mutants that have no verdict yet; it takes no --only")
    config = tomllib.loads(CONFIG.read_text())
    start = time.perf_counter()
    stage(config, args.keep or args.resume)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    globs = args.only or scope_globs(config)
    returncode = 0
    if args.resume:  # mutmut re-runs every mutant named on its command line: name only the pending ones
        globs = sorted(name for name, state in results(config).items() if state == "not checked")
        print(f"resuming: {len(globs)} mutant(s) in scope have no verdict yet")
    log = WORK / "mutmut.log"
    if globs:
        with open(log, "w") as fh:
            returncode = subprocess.run([str(MUTMUT), "run", "--max-children", str(args.jobs), *globs],
                                        cwd=WORK, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode
    seconds = time.perf_counter() - start
    status = results(config)
    if args.only:
        status = {k: v for k, v in status.items() if any(fnmatch.fnmatchcase(k, g) for g in args.only)}
    if returncode != 0 or not status:
        print(log.read_text()[-4000:] if log.exists() else "")
        print(f"mutmut failed (status {returncode}); its log: {log}")
        return 1
    counts = Counter(status.values())
    listed = equivalents()
    bad, excused, stale = [], [], []
    for name in sorted(status):
        if status[name] in CAUGHT:
            if name in listed:     # a test kills it now (or the name is another mutant's): the entry is stale
                stale.append(name)
                bad.append(name)
            continue
        if status[name] == "survived" and name in listed:
            plus, _ = changed_line(name)
            if listed[name][0] in plus:
                excused.append(name)
                continue
            stale.append(name)
        bad.append(name)
    per_function = Counter(n.partition("__mutmut_")[0] for n in status)
    print(f"mutmut: {len(status)} mutants of {len(per_function)} functions in {seconds / 60:.1f} min "
          f"({args.jobs} at a time)")
    print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    print(f"  survivors listed as equivalent (mutation/equivalents.md): {len(excused)}")
    for name in bad:
        plus, diff = changed_line(name)
        why = ""
        if name in stale:
            why = (" (listed as equivalent, but a test kills it: drop its entry)" if status[name] in CAUGHT
                   else " (listed, but its changed line no longer matches: renumbered?)")
        print(f"\n{status[name].upper()}{why}: {name}\n{diff.strip()}")
    if bad:
        print(f"\n{len(bad)} mutant(s) neither caught by a test nor listed as equivalent: each needs a test "
              "against independent truth, or (if it cannot change any output) a line in mutation/equivalents.md")
        return 1
    print("every mutant in scope is killed or listed as equivalent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
