# dpca-bench: build, test and reproduce. `make` alone lists the targets.
#
#   make test                      # what README and CI run (OpenBLAS, release build)
#   make reproduce                 # every manifest under experiments/, PROFILE=paper
#   make BLAS=mkl test             # the same on Intel MKL (static, sequential, LP64)

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

CARGO ?= cargo
# openblas (Debian's libopenblas-dev, the default) or mkl (Intel MKL from PyPI's wheels).
BLAS ?= openblas
# Experiment profile for `reproduce`: paper (the papers' sizes) or quick.
PROFILE ?= paper
# Outside the clone so that repeated CI runs on one machine reuse the build.
CARGO_TARGET_DIR ?= $(HOME)/.cache/dpca-bench/target
# Extra arguments: `make test ARGS='manifest::'`, `make bench ARGS='--save-baseline main'`.
ARGS ?=
# Criterion bench modules to run (benches/suite/<name>.rs): all unless named (`make bench
# BENCH=rounds`, or several: BENCH='rounds robust').
BENCH ?=
MKL_VERSION ?= 2026.2.0
MKL_DIR := $(CURDIR)/.deps/mkl
# The `mpi` feature (rsmpi): Open MPI's headers and mpirun, and libclang for its bindgen.
MPI_PACKAGES := libopenmpi-dev openmpi-bin libclang-dev

# Every target builds with the `mpi` feature (deps installs Open MPI): one feature set, so
# test, build, bench and reproduce share one build. Measured: building the MPI test alone with
# other features than the rest rebuilt most dependencies a second time.
ifeq ($(BLAS),openblas)
  TARGET_DIR := $(CARGO_TARGET_DIR)
  FEATURES := --features mpi
  BLAS_ENV :=
else ifeq ($(BLAS),mkl)
  # A target dir of its own, so switching backends does not rebuild everything.
  TARGET_DIR := $(CARGO_TARGET_DIR)-mkl
  FEATURES := --no-default-features --features mkl,mpi
  BLAS_ENV := MKLROOT='$(MKL_DIR)'
else
  $(error BLAS must be openblas or mkl, not '$(BLAS)')
endif

# Every cargo call goes through this: one target dir per backend, MKLROOT only for MKL.
CARGO_RUN := CARGO_TARGET_DIR='$(TARGET_DIR)' $(BLAS_ENV) $(CARGO)
# The one profile we build: release (tests and benches too).
DPCA := $(TARGET_DIR)/release/dpca

# Root installs directly; anyone else through sudo.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: help deps deps-system deps-mkl build test test-cores fetch reproduce quick report verify verify-sample bench fmt fmt-check \
        lint clippy clean-results mkl-check mkl-fresh print-dpca numpy-venv

help: ## list the targets
	@echo "dpca-bench — make [target] [BLAS=openblas|mkl] [PROFILE=paper|quick] [ARGS=...]"
	@echo
	@grep -E '^[a-z][a-z-]*:.*## ' $(firstword $(MAKEFILE_LIST)) | \
	  awk 'BEGIN {FS = ":.*## "} {printf "  %-14s %s\n", $$1, $$2}'
	@echo
	@echo "  BLAS=$(BLAS)  PROFILE=$(PROFILE)"
	@echo "  target dir: $(TARGET_DIR)"
	@echo "  DPCA=$(DPCA)"

deps: deps-system $(if $(filter mkl,$(BLAS)),deps-mkl) ## system packages (+ MKL wheels into .deps/mkl when BLAS=mkl)

deps-system: ## libopenblas-dev, pkg-config, Open MPI (+ libclang for its bindings) and chromium (the HTML report's test) from Debian, when missing
	@need=""; \
	for p in libopenblas-dev $(MPI_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || need="$$need $$p"; \
	done; \
	command -v chromium >/dev/null 2>&1 || need="$$need chromium"; \
	command -v pkg-config >/dev/null 2>&1 || need="$$need pkg-config"; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  $(SUDO) apt-get update -qq; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$need >/dev/null; \
	fi

deps-mkl: ## Intel MKL static libs + headers from PyPI wheels into .deps/mkl
	@scripts/fetch-mkl.sh '$(MKL_DIR)' '$(MKL_VERSION)'

# intel-mkl-src caches a failed MKL lookup (its build script then declares no rerun trigger),
# after which the link fails with undefined dgeqrf_/cblas_dgemm. If the cached lookup did not
# find our MKLROOT, drop it so the build script runs again.
mkl-fresh:
ifeq ($(BLAS),mkl)
	@out=$$(ls -t '$(TARGET_DIR)'/release/build/intel-mkl-src-*/output 2>/dev/null | head -n 1 || true); \
	if [ -n "$$out" ] && ! grep -qF 'cargo:rustc-link-search=$(MKL_DIR)/lib' "$$out"; then \
	  echo "intel-mkl-src has a stale MKL lookup: cleaning it"; \
	  $(CARGO_RUN) clean --release -p intel-mkl-src; \
	fi
endif

build: deps mkl-fresh ## cargo build --release (binary: make print-dpca)
	$(CARGO_RUN) build --release $(FEATURES) $(ARGS)

test: deps mkl-fresh numpy-venv ## cargo test --release (all tests, the MPI backend's included, the NumPy twins of the benched rounds), then test-cores
	$(CARGO_RUN) test --release $(FEATURES) $(ARGS)
	@$(if $(ARGS),,$(MAKE) test-cores)

# The tests whose bits must not depend on BLAS's kernels (a client's or rank's share of the data
# equals the whole data's columns, the low-rank product, the robust generator), once per
# OpenBLAS core type this CPU runs: Haswell and Zen (AVX2), SkylakeX where it has AVX-512.
# `dpca` pins Haswell itself (src/linalg/blas_pin.rs); the test binaries run what they are told.
CORE_TESTS_LIB := robust:: low_rank
test-cores: ## the bit-identity tests (shares, robust generator) under OPENBLAS_CORETYPE=Haswell, Zen and SkylakeX
ifeq ($(BLAS),openblas)
	@cores="Haswell Zen"; grep -qw avx512f /proc/cpuinfo && cores="$$cores SkylakeX"; \
	for core in $$cores; do \
	  echo "== OPENBLAS_CORETYPE=$$core"; \
	  OPENBLAS_CORETYPE=$$core $(CARGO_RUN) test --release $(FEATURES) -q --lib -- $(CORE_TESTS_LIB); \
	  OPENBLAS_CORETYPE=$$core $(CARGO_RUN) test --release $(FEATURES) -q --test lib -- share::; \
	done
else
	@echo "test-cores: OpenBLAS core types only (BLAS=$(BLAS)): skipped"
endif

# Real datasets the manifests use; one that cannot be fetched here is reported and skipped.
DATASETS ?= mnist fashion-mnist cifar-10 cifar-100 wdbc

fetch: build ## fetch and verify every dataset that can be fetched (DATASETS=...)
	@for d in $(DATASETS); do $(DPCA) data fetch $$d || echo "($$d not fetched: its manifests will be skipped)"; done

reproduce: build fetch ## run every manifest under experiments/ with PROFILE (default paper), then the pages and scorecard
	$(DPCA) reproduce --profile $(PROFILE) $(ARGS)
	$(DPCA) report

quick: ## reproduce with PROFILE=quick (minutes on 2 cores)
	@$(MAKE) reproduce PROFILE=quick

report: build ## results/index.html, scorecard.csv, a page per paper and per results folder (open it from the file system)
	$(DPCA) report $(ARGS)

verify: build fetch ## re-run the experiments with committed quick results and compare (ARGS='--threads 1')
	$(DPCA) verify $(ARGS)

# A fixed sample of committed quick results, at least one per problem family and none needing a
# dataset: FAPS (subspace; fig1a's FAPS stalls, so its round count moves with any last bit),
# DCF-PCA (robust), DSSAL1 and FSSPCA (sparse), CEDRE (eigvec). About a minute on 2 cores.
VERIFY_SAMPLE := experiments/faps/table1.toml experiments/faps/fig1a.toml \
  experiments/dcfpca/fig1_n1000.toml experiments/dssal1/sweep_n.toml \
  experiments/fspca/fig2.toml experiments/cedre/fig3a.toml
verify-sample: build ## re-run a fixed sample of committed quick results (every family) and compare: CI runs it after the tests
	$(DPCA) verify $(VERIFY_SAMPLE) $(ARGS)

# NumPy for the rounds bench's comparison: from PyPI into a git-ignored venv.
VENV := $(CURDIR)/.venv

numpy-venv: ## NumPy from PyPI into .venv/ (for the rounds bench's NumPy comparison)
	@if ! '$(VENV)/bin/python' -c 'import numpy' >/dev/null 2>&1; then \
	  python3 -c 'import ensurepip' >/dev/null 2>&1 || { \
	    $(SUDO) apt-get update -qq; \
	    $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >/dev/null; }; \
	  python3 -m venv '$(VENV)' && '$(VENV)/bin/pip' install -q numpy; \
	fi

bench: deps mkl-fresh numpy-venv ## criterion benches (BENCH=rounds for one)
	DPCA_BENCH_PYTHON='$(VENV)/bin/python' DPCA_BENCH='$(BENCH)' \
	  $(CARGO_RUN) bench $(FEATURES) --bench suite $(if $(ARGS),-- $(ARGS))

fmt: ## cargo fmt (rewrite)
	$(CARGO) fmt --all

fmt-check: ## cargo fmt --check
	$(CARGO) fmt --all -- --check

clippy: deps mkl-fresh ## cargo clippy on all targets, warnings denied
	$(CARGO_RUN) clippy --release $(FEATURES) --all-targets -- -D warnings

lint: fmt-check ## fmt --check, then clippy when it is installed
	@if $(CARGO) clippy --version >/dev/null 2>&1; then $(MAKE) clippy; \
	else echo "clippy not installed: skipped (rustup component add clippy)"; fi

clean-results: ## delete results/ files git does not track (committed results stay)
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  git clean -fdx -- results/; \
	else rm -rf results; fi

mkl-check: ## build and run the tests on Intel MKL (BLAS=mkl)
	@$(MAKE) BLAS=mkl test

print-dpca: ## print the path of the dpca binary for BLAS
	@echo '$(DPCA)'
