# WellBehaved: `make lab` runs the lab (lab/, its own Mix project) and
# writes its report; `make test` runs every test, the library's and the
# lab's. Both install what they need from Debian when run as root.
#
# `make native` (what `mix compile` runs) builds the NIF library and the
# external server into the app's priv/ (see mk/common.mk).

APP := well_behaved
include mk/common.mk mk/objects.mk

# the metrics, a file each with its forms (c_src/metric/kernels.h)
METRIC_SRC := c_src/metric/pattern.c c_src/metric/indel_lcs.c c_src/metric/levenshtein.c \
	c_src/metric/levenshtein_weighted.c c_src/metric/levenshtein_text.c \
	c_src/metric/levenshtein_short.c c_src/metric/osa.c c_src/metric/damerau.c \
	c_src/metric/hamming.c c_src/metric/affix.c c_src/metric/jaro.c c_src/metric/editops.c \
	c_src/metric/editops_pass.c
METRIC_HDR := c_src/text/sized_alloc.h c_src/metric/kernels.h c_src/metric/common.h c_src/metric/levenshtein_word.h \
	c_src/metric/levenshtein_block.h c_src/metric/levenshtein_text.h \
	c_src/metric/osa_word.h c_src/metric/jaro_word.h c_src/metric/editops.h
FUZZY_SRC := c_src/fuzzy/fuzzy.c c_src/fuzzy/parts.c c_src/fuzzy/tokens.c c_src/fuzzy/quick.c $(METRIC_SRC)
FUZZY_HDR := c_src/fuzzy/fuzzy.h c_src/fuzzy/parts.h $(METRIC_HDR) c_src/fuzzy/scores.h c_src/fuzzy/tokens.h
# the extract engine: one query against many candidates, over the scorers
FUZZY_SRC += c_src/fuzzy/extract.c c_src/fuzzy/extract_bars.c c_src/fuzzy/extract_cells.c \
	c_src/fuzzy/extract_align.c
FUZZY_HDR += c_src/fuzzy/extract.h c_src/fuzzy/extract_keep.h
# an index's candidates with their tokens sorted
FUZZY_SRC += c_src/fuzzy/sorted_set.c
FUZZY_HDR += c_src/fuzzy/sorted_set.h
# the search core: its steps, its sets, a search's set-up, the lane kernels
# (a file per instruction set), the batches an index makes once
CORE_SRC := c_src/text/utf8.c $(addprefix c_src/search/,search.c search_set.c search_init.c \
	lanes.c lanes_base.c lanes_avx2.c lanes_avx512.c lanes_index.c) $(FUZZY_SRC)
CORE_HDR := $(FUZZY_HDR) c_src/text/utf8.h c_src/search/search.h c_src/search/lanes.h \
	c_src/search/lanes_body.h c_src/search/lanes_run.h c_src/search/lanes_load.h \
	c_src/search/lanes_widths.h c_src/search/lanes_bits.h c_src/search/lanes_kernels.h
# the runtime, a file per job (WellBehaved.SDK.sources/0 lists the same)
SDK_SRC := $(addprefix c_src/runtime/,wb_runtime.c wb_run.c wb_cost.c wb_pool.c wb_release.c \
	wb_config.c)
SDK_HDR := c_src/include/wb_runtime.h c_src/include/wb_output.h c_src/runtime/wb_job_check.h \
	c_src/runtime/wb_runtime_internal.h
NIF_SRC := $(CORE_SRC) $(SDK_SRC) $(wildcard c_src/nif/*.c)
NIF_HDR := $(CORE_HDR) $(SDK_HDR) $(wildcard c_src/nif/*.h)
C_FILES := $(wildcard c_src/*/*.c c_src/*/*.h c_src/*/*.cpp)

NIF_SO := $(PRIV_DIR)/well_behaved_nif.so

# Parts with native artefacts of their own describe them in mk/: each adds
# its files to NATIVE_TARGETS and its C tests to C_TEST_TARGETS.
NATIVE_TARGETS := $(NIF_SO)
C_TEST_TARGETS := c_src/build/test_search c_src/build/test_fuzzy
C_TEST_TARGETS += c_src/build/test_extract c_src/build/test_editops
# the lane kernels' AVX-512 code emulated (test_search_avx512) where the CPU
# has no AVX-512; where it has, test_search runs the real code.
# AVX512_EMULATED=yes builds and runs it anyway.
CPU_AVX512 := $(shell for f in avx512f avx512bw avx512vl; do \
  grep -qw $$f /proc/cpuinfo 2>/dev/null || exit 0; done; echo yes)
AVX512_EMULATED ?= $(if $(CPU_AVX512),no,yes)
ifeq ($(AVX512_EMULATED),yes)
C_TEST_TARGETS += c_src/build/test_search_avx512
endif
C_TEST_BUILDS :=
include mk/external.mk mk/file.mk mk/sdk.mk mk/probe.mk mk/rust.mk mk/text.mk
FUZZ_NAMES := levenshtein line_reader external search ext_jobs fuzzy
FUZZ_NAMES += extract text editops
include mk/fuzz.mk
# the fragments define rules; `make` alone still means `make all`
.DEFAULT_GOAL := all
CORE_TEST := c_src/build/test_cores
# the same tests with the SIMD wavefront compiled out (the portable path)
CORE_TEST_SCALAR := c_src/build/test_cores_scalar

.PHONY: all native lab test test-c test-elixir test-first-build test-lab test-example test-example-rust format-check system-deps clean

all: native

# --- system packages ---------------------------------------------------------
system-deps:
	$(call need,$(ERTS_INCLUDE_DIR)/erl_nif.h,erlang-dev)
	$(call need,$(CC),gcc)
	$(call need,c++,g++)
	$(call need,clang-format,clang-format)
	$(call need,timeout,coreutils)
	@# the Rust crates and the :well_behaved_cargo compiler's tests
	$(call need,$(CARGO),cargo)
	$(call need_app,crypto,erlang-crypto)
	@# the test gate's compiler cache (scripts/with_compiler_cache.sh): it
	@# goes on without one
	@command -v ccache >/dev/null || $(MAKE) --no-print-directory install-package PACKAGE=ccache \
	  FOR=ccache 2>/dev/null || echo "ccache is not installed: make test builds every copy in full"
	@[ -e "$(ERTS_INCLUDE_DIR)/erl_nif.h" ] || { echo "error: erl_nif.h not found under $(ERTS_INCLUDE_DIR)" >&2; exit 1; }

# --- native code ---------------------------------------------------------------
# JOBS compilers at a time, each source once (mk/objects.mk)
native: native-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(NATIVE_TARGETS)

NIF_OBJ = $(call native_objs,nif,$(NIF_SRC))
$(NIF_SO): $(NIF_OBJ)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(NIF_CFLAGS) -shared -o $@ $(NIF_OBJ)

# the C test programs link objects shared with each other (mk/objects.mk)
SAN_CORE := $(call objs,san,$(CORE_SRC))
TEST_CORES_HDR := c_src/test/check.h c_src/test/reference.h
TEST_SEARCH_HDR := c_src/test/lanes_like.h c_src/test/check.h c_src/test/reference.h \
	c_src/test/fuzzy_reference.h c_src/test/search_operations.h
TEST_FUZZY_HDR := c_src/test/fuzzy_free_later.h c_src/test/fuzzy_sorted_set.h \
	c_src/test/fuzzy_affix_scores.h c_src/test/fuzzy_alignment.h \
	c_src/test/fuzzy_whitespace_parity.h c_src/test/fuzzy_long_affix.h \
	c_src/test/fuzzy_long_needle.h c_src/test/check.h c_src/test/fuzzy_kernel_steps.h \
	c_src/test/fuzzy_reference.h c_src/test/fuzzy_short_form.h c_src/test/fuzzy_short_edits.h \
	c_src/test/fuzzy_wide_weights.h c_src/test/reference.h c_src/test/fuzzy_random_pairs.h \
	c_src/test/fuzzy_damerau_cuts.h c_src/test/fuzzy_setup_steps.h
TEST_EXTRACT_HDR := c_src/test/check.h c_src/test/extract_check.h c_src/test/extract_tokens.h \
	c_src/test/extract_unequal.h \
	c_src/test/out_of_memory.h c_src/test/fail_alloc.h

$(CORE_TEST): c_src/test/test_cores.c $(TEST_CORES_HDR) $(CORE_HDR) $(SAN_CORE)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/test_cores.c $(SAN_CORE)

# the same tests with the SIMD wavefront compiled out (the portable path)
SCALAR_LEV := c_src/metric/levenshtein.c
SAN_CORE_SCALAR := $(call objs,san,$(filter-out $(SCALAR_LEV),$(CORE_SRC))) \
	$(call objs,san_scalar,$(SCALAR_LEV))
$(CORE_TEST_SCALAR): c_src/test/test_cores.c $(TEST_CORES_HDR) $(CORE_HDR) $(SAN_CORE_SCALAR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -DWB_LEV_NO_SIMD -o $@ c_src/test/test_cores.c $(SAN_CORE_SCALAR)

c_src/build/test_search: c_src/test/test_search.c $(TEST_SEARCH_HDR) $(CORE_HDR) $(SAN_CORE)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/test_search.c $(SAN_CORE)

# the lane kernels' AVX-512 code, built for the baseline instruction set,
# run on any CPU (this one may have no AVX-512); the other kernels' objects
# are the sanitized build's
AVX512_LANES := c_src/search/lanes.c c_src/search/lanes_avx512.c
SAN_CORE_AVX512 := $(call objs,san,$(filter-out $(AVX512_LANES),$(CORE_SRC))) \
	$(call objs,san_avx512,$(AVX512_LANES))
c_src/build/test_search_avx512: c_src/test/test_search.c $(TEST_SEARCH_HDR) $(CORE_HDR) $(SAN_CORE_AVX512)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -Wno-psabi -DWB_LANES_EMULATE_AVX512 -o $@ c_src/test/test_search.c $(SAN_CORE_AVX512)

c_src/build/test_fuzzy: c_src/test/test_fuzzy.c $(TEST_FUZZY_HDR) $(CORE_HDR) $(SAN_CORE)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/test_fuzzy.c $(SAN_CORE)

# every allocation through the failing allocator of fail_alloc.h
# (out_of_memory.h), by the linker: the objects are the other tests'
FAIL_ALLOC_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=aligned_alloc
c_src/build/test_extract: c_src/test/test_extract.c c_src/test/fail_alloc.c $(TEST_EXTRACT_HDR) $(CORE_HDR) $(SAN_CORE)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) $(FAIL_ALLOC_LDFLAGS) -o $@ c_src/test/test_extract.c c_src/test/fail_alloc.c $(SAN_CORE)

# the edit scripts against the textbook traceback, every allocation
# failing in turn too (the failing allocator, as test_extract's)
EDITOPS_CORE := c_src/metric/editops.c c_src/metric/editops_pass.c c_src/metric/pattern.c
c_src/build/test_editops: c_src/test/test_editops.c c_src/test/editops_reference.h c_src/test/check.h \
  c_src/test/fail_alloc.c c_src/test/fail_alloc.h $(METRIC_HDR) $(call objs,san,$(EDITOPS_CORE))
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) $(FAIL_ALLOC_LDFLAGS) -o $@ c_src/test/test_editops.c c_src/test/fail_alloc.c \
	  $(call objs,san,$(EDITOPS_CORE))

# the fuzzy scorers' reference as a program, for the Elixir tests
# (test/support/fuzzy_reference.exs): the C tests' reference, not the core
FUZZY_REFERENCE := c_src/build/fuzzy_reference
$(FUZZY_REFERENCE): c_src/test/fuzzy_reference_main.c c_src/test/fuzzy_reference.h $(FUZZY_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/fuzzy_reference_main.c

# the fuzz targets link objects shared with each other (mk/objects.mk)
FUZZ_CORE := $(call objs,fuzz,$(CORE_SRC))
c_src/build/fuzz_levenshtein: c_src/fuzz/fuzz_levenshtein.c c_src/fuzz/fuzz.h c_src/test/reference.h $(CORE_HDR) $(FUZZ_CORE) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_levenshtein.c $(FUZZ_CORE)

c_src/build/fuzz_search: c_src/fuzz/fuzz_search.c c_src/fuzz/fuzz.h c_src/test/fuzzy_reference.h c_src/test/reference.h $(CORE_HDR) $(FUZZ_CORE) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_search.c $(FUZZ_CORE)

c_src/build/fuzz_fuzzy: c_src/fuzz/fuzz_fuzzy.c c_src/fuzz/fuzz.h c_src/test/fuzzy_reference.h c_src/test/reference.h $(CORE_HDR) $(FUZZ_CORE) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_fuzzy.c $(FUZZ_CORE)

c_src/build/fuzz_extract: c_src/fuzz/fuzz_extract.c c_src/fuzz/fuzz.h c_src/test/extract_check.h $(CORE_HDR) $(FUZZ_CORE) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_extract.c $(FUZZ_CORE)

c_src/build/fuzz_editops: c_src/fuzz/fuzz_editops.c c_src/fuzz/fuzz.h c_src/test/editops_reference.h $(METRIC_HDR) $(call objs,fuzz,$(EDITOPS_CORE) c_src/text/utf8.c) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_editops.c $(call objs,fuzz,$(EDITOPS_CORE) c_src/text/utf8.c)

FUZZ_LINE_READER := $(call objs,fuzz,$(FILE_CORE_SRC))
c_src/build/fuzz_line_reader: c_src/fuzz/fuzz_line_reader.c c_src/fuzz/fuzz.h $(FILE_CORE_HDR) $(FUZZ_LINE_READER) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ c_src/fuzz/fuzz_line_reader.c $(FUZZ_LINE_READER)

FUZZ_EXT_JOBS := $(call objs,fuzz,$(EXTERNAL_JOBS_SRC))
c_src/build/fuzz_ext_jobs: c_src/fuzz/fuzz_ext_jobs.c c_src/fuzz/fuzz.h c_src/test/mirror_job.h $(EXTERNAL_HDR) $(SDK_HDR) $(FUZZ_EXT_JOBS) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS) -o $@ c_src/fuzz/fuzz_ext_jobs.c $(FUZZ_EXT_JOBS) $(EI_LIBS)

# the server's own files built as a server, the cores shared
FUZZ_EXTERNAL := $(call objs,fuzz_server,$(EXTERNAL_SERVER_FILES)) \
	$(call objs,fuzz,$(filter-out $(EXTERNAL_SERVER_FILES),$(EXTERNAL_LIB_SRC)))
c_src/build/fuzz_external: c_src/fuzz/fuzz_external.c c_src/fuzz/fuzz.h $(EXTERNAL_HDR) $(SDK_HDR) $(FUZZ_EXTERNAL) | fuzz-deps
	@mkdir -p c_src/build
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(EXTERNAL_SERVER_CFLAGS) -o $@ c_src/fuzz/fuzz_external.c $(FUZZ_EXTERNAL) $(EI_LIBS)

clean:
	rm -rf c_src/build _build/*/lib/$(APP)/priv

# --- the two commands ------------------------------------------------------------
# the library's tests, a new user's first build, the example project's
# and the lab's, in three lanes at once of about the same length (the C
# checks; the ExUnit suite and the example; a new user's first build and
# the lab): each part runs whatever the ones before it in its lane gave,
# and a summary at the end names every part that failed
# (scripts/run_parts.sh; make exits non-zero if any did).
# TEST_LANES=sequential runs them one after another. The checks of how
# long a step holds its scheduler share the CPUs with compilers then,
# and run a scenario again before they fail (test/support/holds.exs).
# The parts build the same native sources in several copies of the tree
# (each first build, the example's and the lab's copies of the library):
# a compiler cache of this run alone compiles each once
# (scripts/with_compiler_cache.sh). The packages come first: without them
# no part can run.
TEST_PARTS := format-check test-c test-rust fuzz-smoke test-elixir test-first-build test-example test-example-rust test-lab
TEST_LANES ?= parallel
ifeq ($(TEST_LANES),sequential)
TEST_ARGS := $(TEST_PARTS)
else
TEST_ARGS := "format-check test-rust test-c fuzz-smoke" "test-elixir test-example" "test-first-build test-example-rust test-lab"
endif
test: system-deps
	@MAKE="$(MAKE)" scripts/with_compiler_cache.sh scripts/run_parts.sh $(TEST_ARGS)

format-check:
	mix format --check-formatted
	clang-format --dry-run --Werror $(C_FILES) rust/well_behaved/c/*.c
	@$(MAKE) --no-print-directory rust-format-check

# built JOBS at a time (the objects they share once), then run side by side
# (the longest first)
C_TESTS_LONG := c_src/build/test_fuzzy c_src/build/test_extract
C_TESTS := $(C_TESTS_LONG) $(CORE_TEST) $(CORE_TEST_SCALAR) $(filter-out $(C_TESTS_LONG),$(C_TEST_TARGETS))
test-c:
	@$(MAKE) --no-print-directory -j$(JOBS) $(C_TESTS) $(C_TEST_BUILDS)
	$(call run-c-tests,$(C_TESTS))

# the code, its native outputs (make native), the SDK's test libraries and
# the fuzzy tests' reference program built first (the tests' support
# builds them too, run alone); then the suite bounded in time, as
# TEST_PARTITIONS VMs side by side (one per CPU by default), each with a
# share of the test files, or in one VM with TEST_PARTITIONS=1
TEST_ELIXIR_SECONDS ?= 2400
TEST_PARTITIONS ?= $(JOBS)
test-elixir: $(FUZZY_REFERENCE)
	MIX_ENV=test mix compile
	@# no dependency cycle between the library's modules (checked on the
	@# build just made: a check of its own would compile a dev build)
	MIX_ENV=test mix xref graph --format cycles --fail-above 0
	@MIX_ENV=test $(MAKE) --no-print-directory sdk-test-nifs rust-test-nifs
	scripts/run_mix_test_partitions.sh $(TEST_ELIXIR_SECONDS) $(TEST_PARTITIONS)

# mix compile once then mix run, from a copy of the tree and as a git
# dependency of a new app
test-first-build:
	scripts/check_first_build.sh

test-example:
	$(MAKE) --no-print-directory -C examples/checksum test

test-example-rust:
	$(MAKE) --no-print-directory -C examples/hash_sort test

test-lab:
	$(MAKE) --no-print-directory -C lab test

# The lab runs in its own VM, bounded by SIGKILL (see lab/Makefile).
lab:
	$(MAKE) --no-print-directory -C lab lab
