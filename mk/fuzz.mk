# Fuzzing with libFuzzer (clang): the C code that parses or computes on
# untrusted input. Each target in c_src/fuzz/ checks its code against a
# plain reference, under AddressSanitizer and UBSan. The including Makefile
# (the library's, the lab's) names its targets in FUZZ_NAMES and has a rule
# building c_src/build/fuzz_<name> for each.
#
#   make fuzz                 each target for FUZZ_SECONDS (60), new inputs
#                             kept in c_src/build/fuzz/<target>/
#   make fuzz-smoke           each target for FUZZ_SMOKE_SECONDS (3) from the
#                             checked-in corpus c_src/fuzz/corpus/<target>/
#                             (part of `make test`)
#
# A failing input is written to c_src/build/fuzz/crash-<target>-*; once
# fixed, copy it into c_src/fuzz/corpus/<target>/ so every run replays it.

FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 3
FUZZ_BINS = $(addprefix c_src/build/fuzz_,$(FUZZ_NAMES))
FUZZ_CC ?= $(shell for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do \
  command -v $$c >/dev/null 2>&1 && { echo $$c; break; }; done)
FUZZ_CFLAGS := -I$(dir $(lastword $(MAKEFILE_LIST)))../c_src/fuzz -std=c11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
# every target runs single-threaded, bounded in time and memory; inputs up
# to 4 KiB (the reference distance is quadratic)
FUZZ_RUN_FLAGS := -max_len=4096 -timeout=20 -rss_limit_mb=2048 -print_final_stats=0

.PHONY: fuzz fuzz-smoke fuzz-smoke-bins fuzz-deps

# clang, and its fuzzer runtime (a separate Debian package since clang 14)
fuzz-deps:
	@c="$(FUZZ_CC)"; if [ -z "$$c" ]; then \
	  $(MAKE) --no-print-directory install-package PACKAGE=clang FOR=clang; fi
	@c="$(FUZZ_CC)"; [ -n "$$c" ] || c=clang; \
	rt="$$($$c -print-resource-dir)/lib/linux/libclang_rt.fuzzer-x86_64.a"; \
	if [ ! -e "$$rt" ]; then v=$$($$c -dumpversion | cut -d. -f1); \
	  $(MAKE) --no-print-directory install-package PACKAGE=libclang-rt-$$v-dev FOR="$$rt"; fi

fuzz: $(FUZZ_BINS)
	@for t in $(FUZZ_NAMES); do mkdir -p c_src/build/fuzz/$$t c_src/fuzz/corpus/$$t; \
	  echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
	  timeout --signal=KILL $$(( $(FUZZ_SECONDS) + 60 )) c_src/build/fuzz_$$t $(FUZZ_RUN_FLAGS) \
	    -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=c_src/build/fuzz/crash-$$t- \
	    c_src/build/fuzz/$$t c_src/fuzz/corpus/$$t 2>&1 | grep -E "DONE|ERROR|SUMMARY|check failed|Test unit written" ; \
	  [ "$${PIPESTATUS[0]}" = 0 ] || exit 1; done

# from the checked-in corpus; new inputs go to a scratch directory. The
# targets are built JOBS at a time first, then run JOBS at a time (each
# single-threaded).
FUZZ_SMOKE_RUNS := $(addprefix fuzz-smoke-run-,$(FUZZ_NAMES))
.PHONY: $(FUZZ_SMOKE_RUNS)
fuzz-smoke: fuzz-smoke-bins
	@$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_SMOKE_RUNS)
fuzz-smoke-bins:
	@$(MAKE) --no-print-directory -j$(JOBS) $(FUZZ_BINS)
$(FUZZ_SMOKE_RUNS): fuzz-smoke-run-%: c_src/build/fuzz_%
	@t=$*; scratch=$$(mktemp -d); \
	  echo "fuzz $$t: $(FUZZ_SMOKE_SECONDS) s from c_src/fuzz/corpus/$$t"; \
	  timeout --signal=KILL $$(( $(FUZZ_SMOKE_SECONDS) + 60 )) c_src/build/fuzz_$$t $(FUZZ_RUN_FLAGS) \
	    -max_total_time=$(FUZZ_SMOKE_SECONDS) -artifact_prefix=c_src/build/crash-$$t- \
	    $$scratch c_src/fuzz/corpus/$$t > $$scratch.log 2>&1; rc=$$?; \
	  if [ $$rc != 0 ]; then echo "fuzz $$t FAILED:"; \
	    grep -E "ERROR|SUMMARY|check failed|Test unit written|distance" $$scratch.log; fi; \
	  rm -rf $$scratch $$scratch.log; [ $$rc = 0 ]
