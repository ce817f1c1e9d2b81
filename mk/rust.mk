# The SDK's Rust crate (rust/well_behaved): its own tests, and a crate of
# test jobs built on it as a user's crate is (rust/test_jobs), loaded by
# the library's ExUnit tests (test/rust_jobs_test.exs) with its server
# program for schedule: :external. Cargo builds offline (the crates have
# no dependencies), with the C compiler and Erlang headers make uses.

CARGO ?= cargo
RUST_TEST_DIR := c_src/build/rust
RUST_TEST_NIFS := $(RUST_TEST_DIR)/rust_jobs_nif.so $(RUST_TEST_DIR)/rust_jobs_server
RUST_CRATES := rust/well_behaved rust/test_jobs examples/hash_sort/native/hash_sort
CARGO_ENV = CC="$(CC)" ERTS_INCLUDE_DIR="$(ERTS_INCLUDE_DIR)" CARGO_NET_OFFLINE=true

.PHONY: rust-test-nifs test-rust rust-format-check

# cargo decides what to rebuild; the copies keep the file when it is the same
rust-test-nifs: native-deps
	@mkdir -p $(RUST_TEST_DIR)
	$(CARGO_ENV) CARGO_TARGET_DIR=$(abspath $(RUST_TEST_DIR)/target) $(CARGO) build --offline --release \
	  --quiet --manifest-path rust/test_jobs/Cargo.toml
	@cmp -s $(RUST_TEST_DIR)/target/release/libwb_test_jobs.so $(RUST_TEST_DIR)/rust_jobs_nif.so || \
	  cp $(RUST_TEST_DIR)/target/release/libwb_test_jobs.so $(RUST_TEST_DIR)/rust_jobs_nif.so
	@cmp -s $(RUST_TEST_DIR)/target/release/rust_jobs_server $(RUST_TEST_DIR)/rust_jobs_server || \
	  cp $(RUST_TEST_DIR)/target/release/rust_jobs_server $(RUST_TEST_DIR)/rust_jobs_server

# the term wrappers against the server's erl_nif (rust/well_behaved/src/tests.rs),
# then the crates built by the oldest Rust they promise
test-rust: native-deps
	$(CARGO_ENV) CARGO_TARGET_DIR=$(abspath $(RUST_TEST_DIR)/target) timeout --signal=KILL 600 \
	  $(CARGO) test --offline --quiet --manifest-path rust/well_behaved/Cargo.toml
	$(CARGO_ENV) timeout --signal=KILL 600 scripts/check_rust_oldest.sh

# rustfmt with the repository's rustfmt.toml; skipped, said so, without it
rust-format-check:
	@if $(CARGO) fmt --version >/dev/null 2>&1; then \
	  for c in $(RUST_CRATES); do $(CARGO) fmt --check --manifest-path $$c/Cargo.toml || exit 1; done; \
	else echo "rustfmt is not installed: the Rust sources' formatting is not checked"; fi
