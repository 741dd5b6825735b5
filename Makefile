# ragloom — the two commands of the README.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: run test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@ $(STAMP)

## make run: set up and serve the API, status page and workers on http://127.0.0.1:9380
run: $(STAMP)
	$(VENV)/bin/ragloom serve

## make test: set up with dev dependencies, lint, then run the whole test suite
test: $(DEVSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/pytest -q

lint: $(DEVSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks

## make bench: ingestion and query benchmark (N documents, M queries)
bench: $(DEVSTAMP)
	$(PY) benchmarks/ingest_query.py

clean:
	rm -rf $(VENV) build *.egg-info
