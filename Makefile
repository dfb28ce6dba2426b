# The two commands a newcomer needs: `make run` and `make test` (each creates .venv on first use).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# a platform's PORT when HIREKIT_PORT is unset
HIREKIT_PORT ?= $(or $(PORT),8000)
export HIREKIT_PORT
# pytest processes `make test` runs (pytest-xdist; each file's tests stay in one, and each gets its own PostgreSQL
# database and Redis database, see tests/conftest.py); TEST_WORKERS=0 runs the suite in this process
TEST_WORKERS ?= 2

.PHONY: run test services lint requirements upgrade-check fuzz bench install install-dev clean opensearch-start \
	opensearch-stop opensearch-test elasticsearch-start elasticsearch-stop elasticsearch-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# runtime dependencies (pinned) + the package itself
$(VENV)/.installed: requirements.txt setup.cfg setup.py pyproject.toml plugins/person/backends/embedded/_fastdoc.c | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

# test tools (pinned) on top
$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt requirements-samples.txt
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

## make samples: the client libraries the docs' Python samples import (People Data Labs' SDK, MCP's SDK with its HTTP
## client httpx2), into .venv beside what `make run` installs (`make test` installs them too)
.PHONY: samples
samples: $(VENV)/.installed-samples

$(VENV)/.installed-samples: $(VENV)/.installed requirements-samples.txt
	$(BIN)/pip install --quiet -r requirements-samples.txt -c requirements.txt
	touch $@

## make run: migrate the embedded SQLite database, load the sample datasets, print a demo key, serve on 127.0.0.1:$HIREKIT_PORT
## (and the call relay's WebSockets on 127.0.0.1:$HIREKIT_RELAY_PORT, started and stopped with gunicorn)
run: install
	$(BIN)/flask --app wsgi demo setup
	HIREKIT_RELAY_EMBEDDED=1 $(BIN)/gunicorn -c deploy/gunicorn.conf.py --bind 127.0.0.1:$(HIREKIT_PORT) wsgi:app

## make test: ruff (pyproject.toml's rules) on the files git tracks, then the whole suite (PostgreSQL/Redis tests run when
## HIREKIT_TEST_DATABASE_URL / HIREKIT_TEST_REDIS_URL are set), in TEST_WORKERS processes
test: install-dev lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

## make drills: the drills alone (HIREKIT_TEST_DRILLS=1; `make test` skips them): the scale-out drill across hosts in
## network namespaces (root, nginx, PostgreSQL and Redis binaries) and the OpenSearch node-loss drill (Java, Maven); each
## prints what it measured and fails on any loss
.PHONY: drills
drills: install-dev
	HIREKIT_TEST_DRILLS=1 $(BIN)/python -m pytest -n 0 -m drill -s $(PYTEST_ARGS)

## make services: install (as root, from Debian's packages, when absent) and start PostgreSQL on 127.0.0.1:5432 (trust
## on loopback, user postgres, database test) and Redis on 127.0.0.1:6379, for the full suite (.ci/run does the same)
services:
	bash deploy/services.sh

## make opensearch-start: build deploy/opensearch with Maven (offline once ~/.m2 holds its artifacts), start a real
## OpenSearch node on loopback (OPENSEARCH_NODES=3 for a cluster, OPENSEARCH_HEAP per node) under instance/opensearch and
## wait until it is green; make opensearch-stop stops it and removes its data; make opensearch-test runs the launcher's
## own Java test (JUnit, Maven Surefire)
OPENSEARCH_NODES ?= 1
OPENSEARCH_HEAP ?= 1g
opensearch-start: install
	$(BIN)/python -m deploy.opensearch start --nodes $(OPENSEARCH_NODES) --heap $(OPENSEARCH_HEAP)

opensearch-stop: install
	$(BIN)/python -m deploy.opensearch stop --clean

opensearch-test:
	cd deploy/opensearch && (mvn -B -q -o test || mvn -B -q test)

## make elasticsearch-start / -stop / -test: the same for a real Elasticsearch 8 node (deploy/elasticsearch,
## ELASTICSEARCH_NODES, ELASTICSEARCH_HEAP) under instance/elasticsearch; point Hirekit at it with
## HIREKIT_ELASTICSEARCH_COMPATIBLE_WITH=8
ELASTICSEARCH_NODES ?= 1
ELASTICSEARCH_HEAP ?= 1g
elasticsearch-start: install
	$(BIN)/python -m deploy.elasticsearch start --nodes $(ELASTICSEARCH_NODES) --heap $(ELASTICSEARCH_HEAP)

elasticsearch-stop: install
	$(BIN)/python -m deploy.elasticsearch stop --clean

elasticsearch-test:
	cd deploy/elasticsearch && (mvn -B -q -o test || mvn -B -q test)

# the files git tracks (a scratch file or a generated client in the tree is not the project's), every file outside git
lint: install-dev
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
		git ls-files -- '*.py' | while IFS= read -r file; do [ -e "$$file" ] && printf '%s\0' "$$file"; done \
			| xargs -0 -r $(BIN)/ruff check --quiet --force-exclude; \
	else \
		$(BIN)/ruff check --quiet .; \
	fi

fuzz: install-dev
	HIREKIT_FUZZ_EXAMPLES=$${HIREKIT_FUZZ_EXAMPLES:-200} $(BIN)/python -m pytest -m fuzz $(PYTEST_ARGS)

## make requirements: regenerate requirements.txt from setup.cfg's install_requires (never edit it by hand)
requirements: install-dev
	$(BIN)/pip-compile --quiet --strip-extras --no-emit-index-url --no-emit-find-links --output-file requirements.txt setup.cfg

UPGRADE_VENV := .venv-upgrade

## make upgrade-check: a fresh virtualenv ($(UPGRADE_VENV)) with the newest releases the package index serves within
## setup.cfg's bounds (runtime and test tools; the pins of requirements*.txt are only lower bounds, so nothing is
## downgraded to fit a newer release), prints what differs from the pins,
## then runs the suite in it (PYTEST_ARGS and TEST_WORKERS as for `make test`). When it passes, `make requirements`
## takes the new versions.
upgrade-check:
	rm -rf $(UPGRADE_VENV)
	$(PYTHON) -m venv $(UPGRADE_VENV)
	$(UPGRADE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(UPGRADE_VENV)/bin/pip install --quiet --upgrade --upgrade-strategy eager -e '.[dev]' \
		$$(sed -n 's/^\([A-Za-z0-9_.-]*\)==\(.*\)/\1>=\2/p' requirements-dev.txt)
	$(UPGRADE_VENV)/bin/python deploy/upgrade_report.py requirements.txt requirements-dev.txt
	$(UPGRADE_VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

bench: install-dev
	$(BIN)/python bench/rest_throughput.py

clean:
	rm -rf $(VENV) $(UPGRADE_VENV) .pytest_cache
