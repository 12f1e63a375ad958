# The two commands a newcomer needs: `make book` and `make test`.
# Each creates .venv on first use and reinstalls when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
JB_FLAGS := -W -n --keep-going

.PHONY: book test bench clean widgets-js

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[book,test,scale]'
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	@echo "The book is at $(CURDIR)/_build/html/index.html"

# One BLAS thread per process: the tests multiply thousands of tiny matrices, where extra
# threads only add wake-up latency (badly so on a busy 2-core machine).
test: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py
	$(BIN)/python benchmarks/bench_scale.py

clean:
	rm -rf _build
