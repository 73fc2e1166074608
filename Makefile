# Two commands do all the set-up on a fresh machine:
#   make run   install, migrate, load the demo (challenges, red/blue, arena) and serve on :8000
#   make test  install and run the whole test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# What the served site calls itself in mails, printed links and its CSP: the port it serves.
SITE_URL ?= http://$(HOST):$(PORT)

.PHONY: install install-dev run test lint check screenshots cluster cluster-stop cluster-test

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
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py demo
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py demo_redblue
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py arena_demo
	DEBUG=true SITE_URL=$(SITE_URL) $(PY) manage.py runserver $(HOST):$(PORT)

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
