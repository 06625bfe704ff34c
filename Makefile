# recall — the commands a developer runs. `make install` then `recall "<error text>"`; `make test`.
PYTHON ?= python3
PIP := $(PYTHON) -m pip

.PHONY: install dev test lint bench clean

install:  ## install recall and put the `recall` command on PATH
	$(PIP) install --quiet -e .
	@# byte-compile now: where PYTHONDONTWRITEBYTECODE is set, every run would compile recall's sources again
	$(PYTHON) -m compileall -q recall_agent
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true
	@command -v recall >/dev/null 2>&1 && echo "recall installed: $$(command -v recall)" || \
		echo "recall installed; add $$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_path("scripts"))') to PATH"

dev:  ## install recall with the test, lint and benchmark tools
	$(PIP) install --quiet -e '.[dev]'
	$(PYTHON) -m compileall -q recall_agent
	@command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

test: dev  ## run the whole test suite (fails when no test ran: pytest exit 5 is non-zero)
	$(PYTHON) -m pytest -q

lint: dev
	$(PYTHON) -m ruff check recall_agent tests bench
	$(PYTHON) -m ruff format --check recall_agent tests bench

bench: dev  ## run every benchmark in bench/ (prints tables, writes bench/results/*.json)
	@for script in bench/bench_*.py; do echo "== $$script"; $(PYTHON) $$script || exit 1; done

clean:
	rm -rf build dist *.egg-info .pytest_cache .ruff_cache
