# The external server (issue 4): wb_external in priv/, a program serving the
# Levenshtein core and echo over a Unix domain socket, started and pooled by
# WellBehaved.External; and the sanitized unit test of its framing and dispatch.

EXTERNAL_SRC := c_src/external/wb_external.c c_src/levenshtein/levenshtein.c
EXTERNAL_HDR := c_src/external/wb_external.h c_src/levenshtein/levenshtein.h
EXTERNAL_BIN := $(PRIV_DIR)/wb_external
EXTERNAL_TEST := c_src/build/test_external

NATIVE_TARGETS += $(EXTERNAL_BIN)
C_TEST_TARGETS += $(EXTERNAL_TEST)

$(EXTERNAL_BIN): c_src/external/wb_external_main.c $(EXTERNAL_SRC) $(EXTERNAL_HDR)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(CFLAGS_COMMON) -O2 $(EI_CFLAGS) -o $@ c_src/external/wb_external_main.c $(EXTERNAL_SRC) $(EI_LIBS)

$(EXTERNAL_TEST): c_src/test/test_external.c c_src/test/check.h c_src/test/reference.h $(EXTERNAL_SRC) $(EXTERNAL_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) $(EI_CFLAGS) -o $@ c_src/test/test_external.c $(EXTERNAL_SRC) $(EI_LIBS)
