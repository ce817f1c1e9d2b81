# The external server (issue 4): wb_external in priv/, the built-in server
# program, started and pooled by WellBehaved.External: the library's own job
# types (c_src/nif/levenshtein_job.c, fuzzy_score_job.c) built as an SDK server of job types
# is built (WB_EXTERNAL_SERVER, linked with wb_ext_server.c, wb_ext_jobs.c,
# wb_ext_nif.c and wb_ext_terms.c instead of the runtime, see
# WellBehaved.SDK.external_sources/0), plus
# wb_ext_library.c for what the NIF library's load gives them; and the
# sanitized unit tests of its framing and dispatch (test_external, over the
# library's jobs) and of the server of SDK job types (test_ext_jobs).

EXTERNAL_COMMON_SRC := c_src/external/wb_external.c
# what a server of job types links instead of the runtime (SDK_SRC)
EXTERNAL_JOBS_SRC := $(EXTERNAL_COMMON_SRC) $(addprefix c_src/external/,wb_ext_server.c wb_ext_jobs.c \
	wb_ext_nif.c wb_ext_terms.c)
# the library's job types in a server
EXTERNAL_LIB_SRC := $(EXTERNAL_JOBS_SRC) c_src/external/wb_ext_library.c c_src/nif/levenshtein_job.c \
	c_src/nif/fuzzy_score_job.c c_src/nif/fuzzy_editops_job.c c_src/text/utf8.c \
	$(filter-out c_src/fuzzy/extract%,$(FUZZY_SRC))
EXTERNAL_HDR := c_src/external/wb_external.h c_src/external/wb_ext_terms.h c_src/text/utf8.h \
	c_src/metric/levenshtein_word.h c_src/probe/cpu_clock.h c_src/nif/jobs.h $(FUZZY_HDR)
EXTERNAL_SERVER_CFLAGS := -DWB_EXTERNAL_SERVER -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS)
EXTERNAL_BIN := $(PRIV_DIR)/wb_external
EXTERNAL_TEST := c_src/build/test_external
EXTERNAL_JOBS_TEST := c_src/build/test_ext_jobs

NATIVE_TARGETS += $(EXTERNAL_BIN)
C_TEST_TARGETS += $(EXTERNAL_TEST) $(EXTERNAL_JOBS_TEST)

# the server's own files built as a server, the cores the NIF library's
# objects (mk/objects.mk)
EXTERNAL_SERVER_FILES := $(filter c_src/external/% c_src/nif/%,$(EXTERNAL_LIB_SRC))
EXTERNAL_OBJ = $(call native_objs,server,c_src/external/wb_external_main.c $(EXTERNAL_SERVER_FILES)) \
	$(call native_objs,nif,$(filter-out $(EXTERNAL_SERVER_FILES),$(EXTERNAL_LIB_SRC)))
$(EXTERNAL_BIN): $(EXTERNAL_OBJ)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(CFLAGS_COMMON) -O2 -o $@ $(EXTERNAL_OBJ) $(EI_LIBS)

# objects shared with the other C tests (mk/objects.mk)
SAN_EXTERNAL := $(call objs,san_server,$(EXTERNAL_SERVER_FILES)) \
	$(call objs,san,$(filter-out $(EXTERNAL_SERVER_FILES),$(EXTERNAL_LIB_SRC)))
$(EXTERNAL_TEST): c_src/test/test_external.c c_src/test/external_fuzzy_score.h \
	c_src/test/external_frames.h c_src/test/check.h c_src/test/reference.h $(EXTERNAL_HDR) \
	$(SDK_HDR) $(SAN_EXTERNAL)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) $(EXTERNAL_SERVER_CFLAGS) -o $@ c_src/test/test_external.c $(SAN_EXTERNAL) $(EI_LIBS) -lm

# job types run as a server runs them
SAN_EXT_JOBS := $(call objs,san,$(EXTERNAL_JOBS_SRC))
$(EXTERNAL_JOBS_TEST): c_src/test/test_ext_jobs.c c_src/test/check.h c_src/test/mirror_job.h $(EXTERNAL_HDR) $(SDK_HDR) $(SAN_EXT_JOBS)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS) -o $@ c_src/test/test_ext_jobs.c $(SAN_EXT_JOBS) $(EI_LIBS)
