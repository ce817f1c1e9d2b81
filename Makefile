# WellBehaved: `make lab` runs the lab and writes its report; `make test`
# runs every test. Both install what they need from Debian when run as root.

SHELL := /bin/bash
MIX_ENV ?= dev
# a --full run takes about an hour
LAB_TIMEOUT ?= $(if $(findstring --full,$(LAB_ARGS)),10800,900)

ERTS_INCLUDE := $(shell erl -noshell -eval 'io:format("~s/erts-~s/include", [code:root_dir(), erlang:system_info(version)]), halt().' 2>/dev/null)

CC ?= cc
CFLAGS_COMMON := -std=c11 -Wall -Wextra -Werror -pthread
NIF_CFLAGS := $(CFLAGS_COMMON) -O2 -fPIC -I$(ERTS_INCLUDE)
SAN_CFLAGS := $(CFLAGS_COMMON) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

CORE_SRC := c_src/levenshtein/levenshtein.c c_src/spin/spin.c
CORE_HDR := c_src/levenshtein/levenshtein.h c_src/spin/spin.h
NIF_SRC := $(CORE_SRC) c_src/runtime/wb_runtime.c $(wildcard c_src/nif/*.c)
NIF_HDR := $(CORE_HDR) c_src/runtime/wb_runtime.h $(wildcard c_src/nif/*.h)
C_FILES := $(wildcard c_src/*/*.c c_src/*/*.h)

NIF_SO := priv/well_behaved_nif.so

# the ei library (C nodes, external term format outside the VM)
EI_DIR := $(shell erl -noshell -eval 'io:format("~s", [code:lib_dir(erl_interface)]), halt().' 2>/dev/null)
EI_CFLAGS := -I$(EI_DIR)/include -I/usr/lib/erlang/usr/include
EI_LIBS := -L$(EI_DIR)/lib -L/usr/lib/erlang/usr/lib -lei -lpthread

# Parts of the project with native artefacts of their own (port driver,
# port program, C node, external server) describe them in mk/*.mk: each
# adds its files to NATIVE_TARGETS and its C tests to C_TEST_TARGETS.
NATIVE_TARGETS := $(NIF_SO)
C_TEST_TARGETS :=
-include $(wildcard mk/*.mk)
# the fragments define rules; `make` alone still means `make all`
.DEFAULT_GOAL := all
CORE_TEST := c_src/build/test_cores
# the same tests with the SIMD wavefront compiled out (the portable path)
CORE_TEST_SCALAR := c_src/build/test_cores_scalar

.PHONY: all native lab test test-c test-elixir format-check system-deps install-package

all: native

# --- system packages ---------------------------------------------------------
# need(command-or-file, package): installs the package when missing.
define need
	@if ! { command -v $(1) >/dev/null 2>&1 || [ -e "$(1)" ]; }; then \
	  $(MAKE) --no-print-directory install-package PACKAGE=$(2) FOR="$(1)"; \
	fi
endef

# need_app(otp-application, package): installs the package when the VM
# cannot find the application.
define need_app
	@if [ "$$(erl -noshell -eval 'io:format("~p", [code:lib_dir($(1))]), halt().')" = "{error,bad_name}" ]; then \
	  $(MAKE) --no-print-directory install-package PACKAGE=$(2) FOR="OTP application $(1)"; \
	fi
endef

install-package:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing Debian package $(PACKAGE) (for $(FOR))"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(PACKAGE)) >/dev/null \
	    || { echo "error: could not install $(PACKAGE); install it and retry" >&2; exit 1; }; \
	else echo "error: $(FOR) is missing: install the Debian package $(PACKAGE) (as root: apt-get install $(PACKAGE))" >&2; exit 1; fi

system-deps:
	$(call need,$(ERTS_INCLUDE)/erl_nif.h,erlang-dev)
	$(call need,$(CC),gcc)
	$(call need,clang-format,clang-format)
	$(call need,timeout,coreutils)
	$(call need,wrk,wrk)
	$(call need,gnuplot,gnuplot-nox)
	$(call need_app,runtime_tools,erlang-runtime-tools)
	$(call need_app,inets,erlang-inets)
	$(call need_app,crypto,erlang-crypto)
	@[ -e "$(ERTS_INCLUDE)/erl_nif.h" ] || { echo "error: erl_nif.h not found under $(ERTS_INCLUDE)" >&2; exit 1; }

# --- native code ---------------------------------------------------------------
native: $(NATIVE_TARGETS)

$(NIF_SO): $(NIF_SRC) $(NIF_HDR)
	@mkdir -p priv
	$(CC) $(NIF_CFLAGS) -shared -o $@ $(NIF_SRC)

$(CORE_TEST): c_src/test/test_cores.c c_src/test/check.h c_src/test/reference.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/test/test_cores.c $(CORE_SRC)

$(CORE_TEST_SCALAR): c_src/test/test_cores.c c_src/test/check.h c_src/test/reference.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -DWB_LEV_NO_SIMD -o $@ c_src/test/test_cores.c $(CORE_SRC)

# --- the two commands ------------------------------------------------------------
test: system-deps format-check test-c fuzz-smoke test-elixir

format-check:
	mix format --check-formatted
	clang-format --dry-run --Werror $(C_FILES)

# each test binary is bounded: a test that hangs fails instead of holding CI
C_TEST_TIMEOUT ?= 600
test-c: $(CORE_TEST) $(CORE_TEST_SCALAR) $(C_TEST_TARGETS)
	@for t in $(CORE_TEST) $(CORE_TEST_SCALAR) $(C_TEST_TARGETS); do echo "$$t"; \
	  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  timeout --signal=KILL $(C_TEST_TIMEOUT) $$t || exit 1; done

test-elixir: native
	mix test

# The lab runs in its own VM; SIGKILL bounds it, since a VM hogged by normal
# NIFs does not act on SIGTERM.
lab: system-deps native
	MIX_ENV=$(MIX_ENV) mix compile
	MIX_ENV=$(MIX_ENV) timeout --signal=KILL $(LAB_TIMEOUT) mix well_behaved.lab $(LAB_ARGS)
