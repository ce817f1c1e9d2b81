# Object files for the C test programs and fuzz targets: each source is
# compiled once per set of flags and linked by every program that needs
# it, so `make -j` builds them side by side. A set is a directory under
# c_src/build/obj/; $(call objs,SET,SOURCES) names the objects of SOURCES
# in SET. Each object's header dependencies come from the compiler (-MMD).
#
#   san            the sanitizers (SAN_CFLAGS)
#   san_server     san, built as an external server (WB_EXTERNAL_SERVER)
#   san_scalar     san, the Levenshtein kernel without SIMD
#   san_avx512     san, the lane kernels' AVX-512 code emulated
#   fuzz           libFuzzer's instrumentation and sanitizers (clang)
#   fuzz_server    fuzz, built as an external server

OBJ_DIR := c_src/build/obj
objs = $(patsubst %.c,$(OBJ_DIR)/$(1)/%.o,$(2))

# OBJ_FLAGS_san: mk/common.mk (the lab builds the same objects)
OBJ_FLAGS_san_server = $(OBJ_FLAGS_san) -DWB_EXTERNAL_SERVER
OBJ_FLAGS_san_scalar = $(OBJ_FLAGS_san) -DWB_LEV_NO_SIMD
OBJ_FLAGS_san_avx512 = $(OBJ_FLAGS_san) -Wno-psabi -DWB_LANES_EMULATE_AVX512
OBJ_FLAGS_fuzz = $(FUZZ_CFLAGS) $(OBJ_INCLUDE)
OBJ_FLAGS_fuzz_server = $(OBJ_FLAGS_fuzz) -DWB_EXTERNAL_SERVER

OBJ_SETS := san san_server san_scalar san_avx512
FUZZ_OBJ_SETS := fuzz fuzz_server

# obj-rule(set, compiler, order-only prerequisites)
define obj-rule
$(OBJ_DIR)/$(1)/%.o: %.c | $(3)
	@mkdir -p $$(@D)
	$(2) $$(OBJ_FLAGS_$(1)) -MMD -MP -c -o $$@ $$<
endef
$(foreach set,$(OBJ_SETS),$(eval $(call obj-rule,$(set),$$(CC))))
$(foreach set,$(FUZZ_OBJ_SETS),$(eval $(call obj-rule,$(set),$$(FUZZ_CC),fuzz-deps)))

-include $(wildcard $(OBJ_DIR)/*/c_src/*/*.d)

# The native outputs' objects, in the app's build directory beside its
# priv/ (a dependency's or a release's own): $(call native_objs,SET,SOURCES)
#
#   nif     the NIF library's flags (NIF_CFLAGS)
#   server  an external server's own files (WB_EXTERNAL_SERVER); the cores
#           it links are the NIF library's objects
NATIVE_OBJ_DIR := $(MIX_APP_PATH)/obj
native_objs = $(patsubst %.c,$(NATIVE_OBJ_DIR)/$(1)/%.o,$(2))
OBJ_FLAGS_nif = $(NIF_CFLAGS) -Ic_src/include
OBJ_FLAGS_server = $(CFLAGS_COMMON) -O2 $(EXTERNAL_SERVER_CFLAGS)

# native-obj-rule(set)
define native-obj-rule
$(NATIVE_OBJ_DIR)/$(1)/%.o: %.c
	@mkdir -p $$(@D)
	$$(CC) $$(OBJ_FLAGS_$(1)) -MMD -MP -c -o $$@ $$<
endef
$(foreach set,nif server,$(eval $(call native-obj-rule,$(set))))

-include $(wildcard $(NATIVE_OBJ_DIR)/*/c_src/*/*.d)
