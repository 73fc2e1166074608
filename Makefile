# Two commands do all the set-up on a fresh machine:
#   make run   install, migrate, load the demo and serve on http://127.0.0.1:8000
#   make test  install and run the whole test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install run test lint check

$(VENV)/.installed: requirements.txt plugins/example-plugin/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -e plugins/example-plugin
	touch $@

install: $(VENV)/.installed

run: install
	DEBUG=true $(PY) manage.py migrate --no-input
	DEBUG=true $(PY) manage.py demo
	DEBUG=true $(PY) manage.py runserver $(HOST):$(PORT)

test: install
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check: install
	TESTING=true $(PY) manage.py check
	TESTING=true $(PY) manage.py makemigrations --check --dry-run
