# ragloom — the two commands of the README.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

NEWEST ?= 3.13
# pytest-xdist workers: one more than the cores, as a quarter of the suite's time is spent waiting on the
# servers, workers and commands the tests start
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

.PHONY: run test test-newest lint bench screenshots openapi clean fonts

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"

# The base install is the client alone (the SDK, `ragloom --url`); serving needs the server extra.
$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[server]'
	touch $@

$(DEVSTAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[server,dev]'
	touch $@ $(STAMP)

## make run: set up and serve the API, status page and workers on http://127.0.0.1:9380
run: $(STAMP)
	$(VENV)/bin/ragloom serve

## make test: set up with dev dependencies, lint, type-check (mypy --strict), check the import contracts, then run the whole test suite
test: $(DEVSTAMP) fonts
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	OMP_WAIT_POLICY=PASSIVE $(VENV)/bin/pytest -q -n $(TEST_WORKERS) --dist worksteal --durations=40

## make test-newest: the same checks and suite on the newest Python ragloom supports, in .venv-$(NEWEST)
## (built from Debian's source package into .python/ when not installed)
test-newest:
	bash scripts/newest-python.sh $(NEWEST)
	$(MAKE) test PYTHON=$(CURDIR)/.python/$(NEWEST)/bin/python$(NEWEST) VENV=.venv-$(NEWEST)

# A Chinese font for the tests that render Chinese text (OCR); installed when we may, else those tests skip.
fonts:
	@fc-list :lang=zh 2>/dev/null | grep -q . || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && apt-get install -y -qq fonts-wqy-zenhei) >/dev/null 2>&1 \
	      || echo "note: fonts-wqy-zenhei could not be installed; Chinese OCR tests will be skipped"; \
	  else echo "note: install fonts-wqy-zenhei to run the Chinese OCR tests"; fi; }

lint: $(DEVSTAMP)
	$(VENV)/bin/ruff check src tests benchmarks scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

## make bench: ingestion and query benchmark (N documents, M queries)
bench: $(DEVSTAMP)
	$(PY) benchmarks/ingest_query.py

## make openapi: rewrite tests/openapi.json, the reference OpenAPI document, and src/ragloom/api/routes.py (when the API changes on purpose)
openapi: $(DEVSTAMP)
	$(PY) scripts/openapi.py

## make screenshots: every page of the web UI over the sample set, en and zh, desktop and phone (docs/screenshots/walk/)
screenshots: $(DEVSTAMP)
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) build *.egg-info
