# The two commands a newcomer needs: `make book` and `make test`.
# Each creates .venv on first use and reinstalls when pyproject.toml changes.
# While editing the package, `make test-quick` gives a verdict in under a minute; `make test-slow`
# runs the few checks too long for `make test` (CI runs both, .ci/run).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JB_FLAGS := -W -n --keep-going

.PHONY: book book-publish book-students portable pdf badge test test-quick test-slow mutate bench bench-live clean

# The last step installs JupyterLab's side of the live book (an editable install skips data
# files): the dpmask-live extension and its page config (_ext/jupyterlab/install.py; Binder's
# postBuild runs the same).
$(STAMP): pyproject.toml _static/dpmask-explorers-a11y.js _ext/jupyterlab/labextension/static/remoteEntry.js _ext/jupyterlab/labextension/package.json _ext/jupyterlab/page_config.json _ext/jupyterlab/install.py _ext/jupyterlab/citations.py references.bib
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test,scale]'
	$(BIN)/python _ext/jupyterlab/install.py > /dev/null
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	$(BIN)/python _ext/portable.py
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# The portable notebooks (issue 29), which `make book` writes after the HTML: every chapter as a
# plain notebook any viewer shows as the book (Colab, VS Code, GitHub, a hub without the book's
# extension), numbers, statements, figures and outputs in place, into _build/portable/full and
# _build/portable/students (no solutions).  From the book's jupyter-cache and its HTML: no
# notebook runs again.
portable: $(STAMP)
	$(BIN)/python _ext/portable.py

# The book for publication (the GitHub Pages workflow runs this): the same build, but it refuses
# to start while _config.yml's `repository: url` is still the placeholder or the README's Binder
# badge does not follow it.
book-publish: $(STAMP)
	DPMASK_PUBLISH=1 $(BIN)/jupyter-book build . $(JB_FLAGS)
	$(BIN)/python _ext/portable.py
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# The edition without solutions (exercises kept): the solution-free notebooks into
# _build/students/notebooks (what the students branch holds), the HTML into _build/students/html
# (its downloads are those notebooks, its launch buttons open the students branch).  It reuses
# the notebooks executed by `make book` (jupyter-cache), so no notebook runs twice.
book-students: book
	$(BIN)/python _ext/editions.py students

# The PDFs, printed from the HTML by Debian's Chromium (apt-get install chromium); no TeX needed:
# _build/pdf/book.pdf (full edition), book-students.pdf (no solutions), api.pdf (API reference).
pdf: book-students
	$(BIN)/python _ext/editions.py pdf

# Rewrite the README's Binder badge from _config.yml's `repository:` block.
badge: $(STAMP)
	$(BIN)/python _ext/editions.py badge

# One BLAS thread per process: the tests multiply thousands of tiny matrices, where extra
# threads only add wake-up latency (badly so on a busy 2-core machine).
# The markers are set by tests/conftest.py from each test's path and fixtures (new tests inherit
# them): notebook, beside, book, browser, cluster, slow, live, publish, heavy, stress, reader.
PYTEST := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest
LANES := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python tests/lanes.py

# Everything but the slow and heavy checks: the package's unit, property and doctests, the cluster,
# every chapter (nbval), then the book built from nbval's executions (no notebook runs twice) and
# a sample of its pages in the browser (each planted slip caught).  Two lanes, one per core
# (tests/lanes.py): lane 1 runs most chapters and then the book built from them with its browser
# checks in one pytest session; lane 2, beside it, runs the two longest chapters (`beside`, handed
# to the same jupyter-cache; lane 1's build waits for them) and then the package's own tests.
# DPMASK_RUN names the run for that hand-over.
test: $(STAMP)
	DPMASK_RUN=$$(date +%s%N) $(LANES) "(notebook or book) and not (beside or slow or live or heavy)" "(beside or not (notebook or book)) and not (slow or live or heavy)" -- --durations=10

# The package alone: its unit, property and doctests that take well under a second each (the
# few that take seconds are marked heavy in tests/conftest.py); no notebook, book, browser,
# cluster or publishing check.  Two pytest-xdist workers, one per core (the tests are independent).
test-quick: $(STAMP)
	$(PYTEST) -n 2 -m "not (notebook or book or browser or cluster or slow or live or publish or heavy)"

# The checks too long for `make test` (each says in its docstring or mark what it detects), in two
# lanes as `make test` runs (tests/lanes.py).  The book is built first (`make book`: after `make
# test` nothing executes again, the build only checks its cache) and each lane then reads it as it
# is (DPMASK_BOOK_READY=1, tests/conftest.py), so that one lane can read it while the other writes
# the student edition and the PDFs beside it.  Lane 1: what builds the student edition and the PDFs
# (tests/test_publish.py), the portable notebooks read by nbconvert and run in a fresh environment,
# what needs no browser (the domain walk), and the full edition's page sweeps (axe-core on the pages
# `make test` leaves out, HTML_CodeSniffer on every page, IBM's checker on five, the keyboard walk).
# Lane 2: the package's heavy tests (`heavy`: each takes seconds; tests/conftest.py's HEAVY), JupyterLab
# with and without the book's extension, the other browser checks, the threads stress (`reader`,
# `live`, `stress`), and last the student edition's sweeps (axe-core at 1280 px and
# HTML_CodeSniffer, dropdowns closed; the keyboard walk): the first lane to ask for the student edition builds it,
# the other waits and reuses it (DPMASK_RUN names the run; tests/conftest.py's students_html).
# docs/ARCHITECTURE.md has the history.
test-slow: $(STAMP)
	$(MAKE) book
	DPMASK_BOOK_READY=1 DPMASK_RUN=$$(date +%s%N) $(LANES) "(slow or live or heavy) and not (stress or reader or heavy) and (book or publish or not (browser or live))" "(slow or live or heavy) and (stress or reader or heavy or (not (book or publish) and (browser or live)))" -- --durations=25

# Mutation testing of the functions that return a privacy number (issue 32; not part of `make
# test`): mutmut 3 mutates each function that mutation/mutmut.toml's [scope] names, in a staged
# copy (mutation/work/), and runs tests/test_privacy_mutants.py against each mutant, two at a
# time.  It fails when a mutant survives that mutation/equivalents.md does not list with its
# reason (mutation/run.py says which, with its diff).  The first scope, 1238 mutants of 34
# functions, took 36 minutes on 2 cores beside other work (28 Nov 2026); the second round added
# Theorem 3.4's root and tails, the JL calibration and the verdict's thresholds (about 1,500
# mutants more, about 35 a minute with one job): budget an hour and a half on 2 cores.
mutate: $(STAMP)
	$(BIN)/python -m pip install --quiet 'mutmut==3.8.*'
	$(BIN)/python mutation/run.py

# The benchmarks (scripts, not tests: each prints ratios against a baseline timed in the same run).
# bench_rivals.py takes about 20 s, bench_widgets.py about 2 minutes (a slider moved key by key in
# every explorer, Python side alone); it runs last because its exit status says whether that met
# the classroom targets (issue 15), so `make bench` fails when an explorer misses them.
bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/bench_scale.py
	$(BIN)/python benchmarks/bench_guards.py
	$(BIN)/python benchmarks/bench_rivals.py
	$(BIN)/python benchmarks/bench_widgets.py

# Key press to visible update of every explorer in real JupyterLab, driven by Debian's Chromium
# (apt-get install chromium) through playwright; several minutes; prints a table, asserts nothing.
bench-live: $(STAMP)
	$(BIN)/python benchmarks/bench_widgets_live.py

clean:
	rm -rf _build
