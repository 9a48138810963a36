# Two commands from a fresh clone:
#
#   make demo    build .venv when it is missing, then run the three scenarios
#   make test    build .venv when it is missing, then --test and --test-models
#
# `demo` is the first target, so a bare `make` runs the demo: the shortest path for someone
# who has just cloned the repository. `make help` lists the rest.
#
# The environment is .venv in this folder (it may also be a link to an existing environment).
# It counts as ready while its stamp, $(STAMP), is newer than requirements.txt: a changed
# requirements.txt installs again into the same .venv; nothing else rebuilds it. To build it
# with another Python: `make clean`, then `PYTHON=python3.11 make demo`.
#
# torch comes first, as the CPU build: from the PyTorch CPU index when pip can use it (a
# plain `pip install torch` on Linux takes a multi-GB CUDA build), else from whatever pip's own
# configuration offers (a local wheel folder, a mirror, PyPI). One line says which it was.
# On macOS and Windows PyPI's torch is a CPU build already (with Metal on Apple Silicon): when the
# CPU index has no wheel for the platform, the fallback takes that one.
#
# Portable to GNU make 3.81 (what macOS ships): no .ONESHELL, no $(file), no != assignments.

PYTHON ?= python3
VENV ?= .venv
VENV_PY = $(VENV)/bin/python
STAMP = $(VENV)/.requirements-installed
DEMO_ARGS ?=
PIPFLAGS ?= --quiet
TORCH_CPU_INDEX = https://download.pytorch.org/whl/cpu
# The torch release pinned in requirements.txt (torch==X.Y.Z), so the two never disagree.
TORCH_VERSION := $(shell sed -n 's/^torch==\([0-9][0-9a-z.+]*\).*/\1/p' requirements.txt)

SHELL = /bin/sh
.DELETE_ON_ERROR:
.PHONY: demo test clean help

demo: $(STAMP)
	$(VENV_PY) rag_conflict_demo.py $(DEMO_ARGS)

test: $(STAMP)
	$(VENV_PY) rag_conflict_demo.py --test
	$(VENV_PY) rag_conflict_demo.py --test-models

clean:  # where .venv is a link to another environment, only the link goes
	rm -rf $(VENV)

help:
	@echo "make demo    the three scenarios, NAIVE vs RESOLVED (the default target)"
	@echo "             e.g. make demo DEMO_ARGS='--no-color --quiet'"
	@echo "make test    --test, then --test-models; ends with 'N passed, N failed'"
	@echo "make clean   remove $(VENV)"
	@echo "Both demo and test first build $(VENV) when it is missing: torch $(TORCH_VERSION) (CPU build),"
	@echo "then requirements.txt. PYTHON=python3.11 make demo picks the Python (default: python3);"
	@echo "PIPFLAGS= shows pip's own output."

# The virtual environment itself. A failed `venv` (on Debian, without the python3-venv package)
# leaves .venv/bin/python behind without pip: remove it, so that the next run tries again.
$(VENV_PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || { \
	    echo "make: '$(PYTHON)' is missing or older than Python 3.10 (torch $(TORCH_VERSION) needs 3.10+);" \
	         "name another one, e.g. PYTHON=python3.11 make demo" >&2; exit 1; }
	@echo "==> creating $(VENV) with `$(PYTHON) --version 2>&1`"
	@$(PYTHON) -m venv $(VENV) || { rm -f $(VENV_PY); exit 1; }
	@$(VENV_PY) -m pip install $(PIPFLAGS) --upgrade pip

# torch first, then requirements.txt (whose torch==$(TORCH_VERSION) the first step already satisfies).
# The first attempt names the CPU index with a short timeout and no retries, so an index that
# cannot be reached fails in about a second. pip still consults its configured find-links and
# extra indexes beside it, so success does not prove the wheel came from the CPU index: pip's
# --report says where torch came from, and pip's --log whether the CPU index answered.
$(STAMP): requirements.txt | $(VENV_PY)
	@test -n "$(TORCH_VERSION)" || { echo "make: no 'torch==X.Y.Z' line in requirements.txt" >&2; exit 1; }
	@echo "==> torch $(TORCH_VERSION), CPU build (up to 200 MB to download)"
	@rm -f $(VENV)/torch-install.*; \
	report=$(VENV)/torch-install.json; log=$(VENV)/torch-install.log; out=$(VENV)/torch-install.out; \
	if $(VENV_PY) -m pip install --quiet "torch==$(TORCH_VERSION)" --index-url $(TORCH_CPU_INDEX) \
	        --timeout 10 --retries 0 --report $$report --log $$log >$$out 2>&1; then \
	    fallback=no; \
	else \
	    fallback=yes; \
	    $(VENV_PY) -m pip install --quiet "torch==$(TORCH_VERSION)" --report $$report --log $$log >>$$out 2>&1 || { \
	        cat $$out >&2; echo "make: torch $(TORCH_VERSION) could not be installed (pip's log: $$log)" >&2; exit 1; }; \
	fi; \
	where='import json, sys, urllib.parse as p; r = json.load(open(sys.argv[1])).get("install", []); u = [p.unquote(i["download_info"]["url"]) for i in r if i["metadata"]["name"].lower() == "torch"]; print(sum(i["metadata"]["name"].lower().startswith("nvidia") for i in r), u[0].replace("file://", "", 1) if u else "-")'; \
	set -- `$(VENV_PY) -c "$$where" $$report 2>/dev/null`; cuda=$${1:-0}; if [ $$# -gt 0 ]; then shift; fi; url="$${*:-unknown}"; \
	if grep -q "Could not fetch URL $(TORCH_CPU_INDEX)/torch/" $$log; then \
	    why="the PyTorch CPU index could not be reached"; \
	elif [ $$fallback = yes ]; then \
	    why="the PyTorch CPU index gave no torch $(TORCH_VERSION) that installs here"; \
	else \
	    why="pip preferred it to the PyTorch CPU index"; \
	fi; \
	if [ "$$cuda" != 0 ]; then why="$$why; it brought $$cuda NVIDIA CUDA packages"; fi; \
	case "$$url" in \
	    -) echo "torch: $(TORCH_VERSION) already installed in $(VENV)";; \
	    https://download*.pytorch.org/*) echo "torch: CPU build from the PyTorch CPU index";; \
	    *) echo "torch: from pip's configured sources, $$url ($$why)";; \
	esac
	@echo "==> requirements.txt"
	@$(VENV_PY) -m pip install $(PIPFLAGS) -r requirements.txt
	@touch $@
