# Set-up is idempotent: the venv is rebuilt only when a pyproject changes.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.mxnext-installed
PLUGINS := $(sort $(wildcard plugins/*))
PROJECTS := pyproject.toml $(wildcard plugins/*/pyproject.toml) packaging/mxnext/pyproject.toml

.PHONY: setup test test-quick demo bench gluon-tests clean

$(PY):
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 10), "mxnext needs Python 3.10+"'
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(PY) $(PROJECTS)
	@rm -rf mxnext.egg-info  # left by the core/ layout; `python -m` would read it from the root
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,examples,onnx,ecosystem]" $(foreach p,$(PLUGINS),-e "./$(p)[test]") ./packaging/mxnext
	@touch $(STAMP)

setup: $(STAMP)

# One pytest worker per core; worksteal keeps both busy behind the few long engine and CLI tests.
# Then the same suites again under the engine check (docs/internals.md, "Engine check").
TESTS := tests $(foreach p,$(PLUGINS),$(p)/tests)
test: setup
	$(PY) -m pytest -q -n auto --dist worksteal $(TESTS)
	MXNEXT_ENGINE_CHECK=1 $(PY) -m pytest -q -n auto --dist worksteal $(TESTS)

# The suite without its slowest files (real training runs, CLI subprocesses that pip-install,
# MPI jobs, DataLoader worker processes, docs, ONNX exports): for a quick check while working.
QUICK_SKIP := tests/test_cli.py tests/test_examples.py tests/test_docs.py \
	tests/test_async_results.py tests/gluon/test_mxnet_examples.py \
	tests/gluon/test_data_workers_orphaned.py tests/gluon/test_trainer_dist.py \
	tests/gluon/test_model_zoo.py tests/test_amp.py tests/test_mxnet_train.py tests/test_onnx_export.py
test-quick: setup
	$(PY) -m pytest -q -n auto --dist worksteal $(foreach f,$(QUICK_SKIP),--ignore=$(f)) \
		tests $(foreach p,$(filter-out plugins/kvstore-mpi,$(PLUGINS)),$(p)/tests)

demo: setup
	$(PY) examples/train_lenet_digits.py

bench: setup
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/engine.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/ndarray.py
	$(PY) bench/plugins_import.py
	$(PY) bench/kvstore.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/gluon.py

# MXNet 1.9's own Gluon tests, scored against MXNet 1.9.1's result (slow; not part of test).
gluon-tests: setup
	$(PY) tools/gluon-tests/run.py $(PY)

clean:
	rm -rf $(VENV)
