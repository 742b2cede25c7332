# climb-vllm — see README.md. Every target installs what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch is installed before the package so that pip never resolves a CUDA build on a CPU
# machine; an already installed torch is kept. Override TORCH for another build.
TORCH ?= torch==2.13.0
DEMO_MODEL ?= outputs/demo-model
DEMO_LIMIT ?= 2000
MODEL ?=
ARGS ?=

.PHONY: install demo test lint bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	test -f $(DEMO_MODEL)/config.json || $(VENV)/bin/climb-vllm demo-model $(DEMO_MODEL)
	$(VENV)/bin/climb-vllm eval intrinsic --model $(DEMO_MODEL) --limit $(DEMO_LIMIT) \
		--out outputs/demo/intrinsic $(ARGS)

test: install lint
	$(PY) -m pytest -q $(ARGS)

lint: install
	$(VENV)/bin/ruff check climb_vllm tests
	$(VENV)/bin/mypy

bench: install
	$(VENV)/bin/climb-vllm bench $(ARGS)

clean:
	rm -rf $(VENV) outputs/demo outputs/demo-model
