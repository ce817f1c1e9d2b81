# The external server (issue 4): wb_external in priv/, a program serving the
# Levenshtein core and echo over a Unix domain socket, started and pooled by
# WellBehaved.External; and the sanitized unit tests of its framing and
# dispatch, and of the server of SDK job types (wb_ext_jobs.c: the sources
# WellBehaved.SDK.external_sources/0 gives a user's server program).

EXTERNAL_COMMON_SRC := c_src/external/wb_external.c
EXTERNAL_SRC := $(EXTERNAL_COMMON_SRC) c_src/external/wb_ext_levenshtein.c c_src/levenshtein/levenshtein.c \
	c_src/text/utf8.c
EXTERNAL_HDR := c_src/external/wb_external.h c_src/levenshtein/levenshtein.h c_src/text/utf8.h \
	c_src/metric/levenshtein_word.h
# what a server of job types links instead of wb_runtime.c
EXTERNAL_JOBS_SRC := $(EXTERNAL_COMMON_SRC) c_src/external/wb_ext_server.c c_src/external/wb_ext_jobs.c
EXTERNAL_BIN := $(PRIV_DIR)/wb_external
EXTERNAL_TEST := c_src/build/test_external
EXTERNAL_JOBS_TEST := c_src/build/test_ext_jobs

NATIVE_TARGETS += $(EXTERNAL_BIN)
C_TEST_TARGETS += $(EXTERNAL_TEST) $(EXTERNAL_JOBS_TEST)

$(EXTERNAL_BIN): c_src/external/wb_external_main.c c_src/external/wb_ext_server.c $(EXTERNAL_SRC) $(EXTERNAL_HDR)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(CFLAGS_COMMON) -O2 $(EI_CFLAGS) -o $@ c_src/external/wb_external_main.c c_src/external/wb_ext_server.c $(EXTERNAL_SRC) $(EI_LIBS)

$(EXTERNAL_TEST): c_src/test/test_external.c c_src/test/check.h c_src/test/reference.h $(EXTERNAL_SRC) $(EXTERNAL_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) $(EI_CFLAGS) -o $@ c_src/test/test_external.c $(EXTERNAL_SRC) $(EI_LIBS)

# job types run as a server runs them
$(EXTERNAL_JOBS_TEST): c_src/test/test_ext_jobs.c c_src/test/check.h c_src/test/mirror_job.h $(EXTERNAL_JOBS_SRC) $(EXTERNAL_HDR) $(SDK_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS) -o $@ c_src/test/test_ext_jobs.c $(EXTERNAL_JOBS_SRC) $(EI_LIBS)
