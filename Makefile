# xcclab: two commands set up a fresh machine (python3 >= 3.9, cargo):
#   make demo   venv + deps + release build of the simulator, then reproduce markmax-s1-dt
#   make test   build, cargo test --workspace, pytest
# Everything installs from PyPI and crates.io only.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
DEMO_OUT ?= results/markmax-s1-dt

.PHONY: venv build demo test test-all lint fmt bench clean generated fuzz

# The venv, with maturin, the runtime deps and the dev tools (pytest, ruff).
$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "polars>=1.0" "matplotlib>=3.6" \
		"numpy>=1.23" "tqdm>=4.60" "duckdb>=1.0" "dask[distributed]>=2024.1" \
		"tomli-w>=1.0" "plotly>=6,<8" "networkx>=3.1,<4" "pytest>=7" "ruff>=0.4" \
		"playwright>=1.40,<2" "jinja2>=3.1,<4"

venv: $(BIN)/maturin

# Release build of crates/xcc-py into python/xcclab/_native*.so and an editable install of the
# package (with the `xcc` script) into the venv; its deps are already there from `make venv`.
# Also the `xcc-emu` binary that `xcc emu` runs (target/release/xcc-emu).
build: venv
	$(BIN)/maturin develop --release
	cargo build --release -p xcc-emu
	@$(PY) -c "import xcclab._native as n; print('xcclab._native', n.version())"

demo: build
	$(BIN)/xcc reproduce markmax-s1-dt --out $(DEMO_OUT)
	@echo
	@echo "report: $(DEMO_OUT)/report.md"
	@echo "see it in a browser: $(BIN)/xcc view $(DEMO_OUT)   (one self-contained HTML page)"

test: build
	cargo test --workspace
	$(PY) -m pytest

# The scenario fuzzer's long run (docs/fuzzing.md): FUZZ_CASES generated scenarios from FUZZ_SEED.
FUZZ_CASES ?= 2000
FUZZ_SEED ?= 0
fuzz: build
	$(PY) -m xcclab.fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --jobs 2

# Also the slow tests (full-length reproduction, benchmark harness).
test-all: build
	cargo test --workspace
	$(PY) -m pytest -m "slow or not slow"

lint: venv
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

fmt: venv
	cargo fmt --all
	$(BIN)/ruff format python tests
	$(BIN)/ruff check --fix python tests

bench: build
	$(BIN)/xcc bench

clean:
	rm -rf $(VENV) target python/xcclab/_native*.so

# Rewrite the tables generated from the registries (README's status, the scenario reference's
# table by name, the Wireshark dissector's headers) after adding an algorithm or a header.
generated: build
	$(PY) -m xcclab.generated
