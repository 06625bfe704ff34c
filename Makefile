# recall — the commands a developer runs. `make install` then `recall "<error text>"`; `make test`.
PYTHON ?= python3
# `make install PYTHON=…` installs with that Python; otherwise the newest Python 3.11+ on PATH is taken
PYTHON_ARG = $(if $(filter command line environment,$(origin PYTHON)),--python "$(PYTHON)")
# make dev/test/lint/bench: this Python, or a .venv in the checkout when this Python refuses pip (PEP 668)
DEV_PYTHON = $(shell $(PYTHON) -c 'import os, sys, sysconfig; m = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"); print(".venv/bin/python" if os.path.exists(m) and sys.prefix == sys.base_prefix else sys.executable)')

.PHONY: install uninstall dev test lint bench dist clean

install:  ## recall in an environment of its own (uv tool, pipx, or ~/.local/share/recall/venv), `recall` in ~/.local/bin
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make install: $(PYTHON) not found; install Python 3.11+, or name one: make install PYTHON=/path/to/python3" >&2; exit 1; }
	@# -B: the installer runs from the checkout and leaves no __pycache__ in it (-B is not inherited by pip)
	@$(PYTHON) -B -m recall_agent.bootstrap.install install $(PYTHON_ARG) $(if $(BINDIR),--bindir "$(BINDIR)") $(if $(INSTALLER),--method $(INSTALLER))

uninstall:  ## remove what `make install` made (your learnings stay in ~/.local/share/recall)
	@$(PYTHON) -B -m recall_agent.bootstrap.install uninstall

dev:  ## editable install with the test, lint and benchmark tools
	@[ "$(DEV_PYTHON)" != .venv/bin/python ] || [ -x .venv/bin/python ] || $(PYTHON) -m venv .venv
	@# the distribution was named `recall` until issue 24: an install of ours under that name would shadow this one
	@$(DEV_PYTHON) -m pip show recall 2>/dev/null | grep -q '^Summary: Memory and code sense for coding agents' && \
		$(DEV_PYTHON) -m pip uninstall --yes --quiet recall || true
	$(DEV_PYTHON) -m pip install --quiet -e '.[dev]'
	@# byte-compile now: where PYTHONDONTWRITEBYTECODE is set, every run would compile recall's sources again
	$(DEV_PYTHON) -m compileall -q recall_agent
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

test: dev  ## run the whole test suite (fails when no test ran: pytest exit 5 is non-zero)
	$(DEV_PYTHON) -m pytest -q

lint: dev
	$(DEV_PYTHON) -m ruff check recall_agent tests bench
	$(DEV_PYTHON) -m ruff format --check recall_agent tests bench

bench: dev  ## run every benchmark in bench/ (prints tables, writes bench/results/*.json)
	@for script in bench/bench_*.py; do echo "== $$script"; $(DEV_PYTHON) $$script || exit 1; done

dist: dev  ## the wheel and the sdist, in dist/
	$(DEV_PYTHON) -m build

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
