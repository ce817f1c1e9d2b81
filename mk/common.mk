# Definitions shared by the library's Makefile and the lab's (lab/Makefile):
# where the native outputs go, compiler flags, the Erlang headers, and the
# rules that install missing Debian packages.
#
# Native outputs go to the priv/ of the app being built, where the VM looks
# for them: Mix passes MIX_APP_PATH (its build path for this app, as it does
# for a dependency or a release); run by hand, it is this project's own.

SHELL := /bin/bash
# the repository's root (this file is in its mk/)
WB_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
# how many compilers, test programs and fuzz targets run at once
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
MIX_ENV ?= dev
MIX_APP_PATH ?= $(CURDIR)/_build/$(MIX_ENV)/lib/$(APP)
PRIV_DIR := $(MIX_APP_PATH)/priv

ERTS_INCLUDE_DIR ?= $(shell erl -noshell -eval 'io:format("~s/erts-~s/include", [code:root_dir(), erlang:system_info(version)]), halt().' 2>/dev/null)

CC ?= cc
CFLAGS_COMMON := -std=c11 -Wall -Wextra -Werror -pthread
# a NIF library exports only its nif_init: the runtime's symbols stay its own
NIF_CFLAGS := $(CFLAGS_COMMON) -O2 -fPIC -fvisibility=hidden -I$(ERTS_INCLUDE_DIR)
# the sanitized tests: reports name files and lines; without variable
# tracking (where a variable lives, for a debugger) the lane kernels'
# templates build in two thirds of the time
SAN_CFLAGS := $(CFLAGS_COMMON) -O1 -g -fno-var-tracking -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# the ei library (C nodes, external term format outside the VM)
EI_DIR := $(shell erl -noshell -eval 'io:format("~s", [code:lib_dir(erl_interface)]), halt().' 2>/dev/null)
EI_CFLAGS := -I$(EI_DIR)/include -I/usr/lib/erlang/usr/include
EI_LIBS := -L$(EI_DIR)/lib -L/usr/lib/erlang/usr/lib -lei -lpthread
# a sanitized object of the library's C, compiled in the library's tree
# (its objects, mk/objects.mk, and the lab's test of the fuzzy core)
OBJ_INCLUDE = -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS)
OBJ_FLAGS_san = $(SAN_CFLAGS) $(OBJ_INCLUDE)

# each C test binary is bounded: a test that hangs fails instead of holding CI
C_TEST_TIMEOUT ?= 600

.PHONY: native-deps install-package

# What building the native code needs; an error names the missing package
# (never installed from here: a dependency's build should not touch the
# system).
native-deps:
	@command -v $(CC) >/dev/null 2>&1 || { echo "error: no C compiler ($(CC)): install gcc (Debian: apt-get install gcc)" >&2; exit 1; }
	@[ -n "$(ERTS_INCLUDE_DIR)" ] || { echo "error: erl was not found: install Erlang/OTP" >&2; exit 1; }
	@[ -e "$(ERTS_INCLUDE_DIR)/erl_nif.h" ] || { echo "error: erl_nif.h is not in $(ERTS_INCLUDE_DIR): install the Erlang headers (Debian: apt-get install erlang-dev)" >&2; exit 1; }

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

# run-c-tests(binaries): JOBS at a time, each under the sanitizers,
# bounded in time (scripts/run_c_tests.sh)
define run-c-tests
	@JOBS=$(JOBS) C_TEST_TIMEOUT=$(C_TEST_TIMEOUT) $(WB_ROOT)/scripts/run_c_tests.sh $(1)
endef
