# The runtime as an SDK for other NIF libraries (c_src/include/wb_runtime.h,
# c_src/runtime/*.c), checked as a user builds it:
#
#   - the public header compiles as C++ (c_src/test/sdk_header_test.cpp);
#   - test NIF libraries with their own job types, loaded by the library's
#     ExUnit tests (test/sdk_job_types_test.exs): one whose job type leaves
#     every optional callback NULL, and one whose job type lacks a required
#     callback, which the runtime must refuse at load;
#   - the server program of the first one's job types (schedule: :external),
#     built from the same source as a user's is (WB_EXTERNAL_SERVER);
#   - the first one again, whose :threaded calls all take their answer in
#     the call, and once more, whose calls all give up waiting at once
#     (test/threaded_short_jobs_answer_in_the_call_test.exs);
#   - the first one again as a library of its own, whose runtime counters
#     only test/runtime_counters_test.exs moves (SDKCounted);
#   - a library written against the 0.1 header, and a build of it whose
#     job types the runtime refuses (test/sdk_versions_test.exs);
#   - a library declared with WB_NIF_INIT_WITH and its hooks
#     (test/sdk_init_hooks_test.exs).

SDK_TEST_DIR := c_src/build/sdk
SDK_HEADER_TEST := $(SDK_TEST_DIR)/sdk_header_test.o
# the same, as a server program's sources see it (schedule: :external)
SDK_HEADER_SERVER_TEST := $(SDK_TEST_DIR)/sdk_header_server_test.o
SDK_TEST_NIFS := $(SDK_TEST_DIR)/sdk_jobs_nif.so $(SDK_TEST_DIR)/sdk_refused_nif.so \
	$(SDK_TEST_DIR)/sdk_awaiting_nif.so $(SDK_TEST_DIR)/sdk_impatient_nif.so \
	$(SDK_TEST_DIR)/sdk_jobs_server $(SDK_TEST_DIR)/sdk_v0_nif.so $(SDK_TEST_DIR)/sdk_v0_refused_nif.so \
	$(SDK_TEST_DIR)/sdk_hooks_nif.so $(SDK_TEST_DIR)/sdk_counted_nif.so
CXX ?= c++

C_TEST_BUILDS += $(SDK_HEADER_TEST) $(SDK_HEADER_SERVER_TEST)

# JOBS at a time; the runtime's objects are the NIF library's
# (mk/objects.mk), but for wb_pool.c where a test define changes it
.PHONY: sdk-test-nifs
sdk-test-nifs: native-deps
	@$(MAKE) --no-print-directory -j$(JOBS) $(SDK_TEST_NIFS)

SDK_OBJ = $(call native_objs,nif,$(SDK_SRC))
SDK_POOL := c_src/runtime/wb_pool.c
SDK_OBJ_BUT_POOL = $(call native_objs,nif,$(filter-out $(SDK_POOL),$(SDK_SRC)))

$(SDK_HEADER_TEST): c_src/test/sdk_header_test.cpp $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -fPIC -I$(ERTS_INCLUDE_DIR) -Ic_src/include -c -o $@ $<

$(SDK_HEADER_SERVER_TEST): c_src/test/sdk_header_test.cpp $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CXX) -std=c++11 -Wall -Wextra -Werror -pedantic -DWB_EXTERNAL_SERVER -I$(ERTS_INCLUDE_DIR) -Ic_src/include -c -o $@ $<

$(SDK_TEST_DIR)/sdk_jobs_nif.so: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -Ic_src/include -shared -o $@ c_src/test/sdk_jobs_nif.c $(SDK_OBJ)

$(SDK_TEST_DIR)/sdk_refused_nif.so: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -DWB_TEST_REFUSED -Ic_src/include -shared -o $@ c_src/test/sdk_jobs_nif.c $(SDK_OBJ)

$(SDK_TEST_DIR)/sdk_counted_nif.so: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -DWB_TEST_COUNTED -Ic_src/include -shared -o $@ c_src/test/sdk_jobs_nif.c $(SDK_OBJ)

# every :threaded call waits for its answer in the call (up to 5 s)
$(SDK_TEST_DIR)/sdk_awaiting_nif.so: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(SDK_OBJ_BUT_POOL) $(SDK_POOL) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -DWB_TEST_AWAITING -DWB_TEST_THREADED_AWAIT_NS=5000000000 -Ic_src/include -shared -o $@ c_src/test/sdk_jobs_nif.c $(SDK_OBJ_BUT_POOL) $(SDK_POOL)

# every :threaded call starts waiting and gives up at once (1 ns)
$(SDK_TEST_DIR)/sdk_impatient_nif.so: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(SDK_OBJ_BUT_POOL) $(SDK_POOL) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -DWB_TEST_IMPATIENT -DWB_TEST_THREADED_AWAIT_NS=1 -Ic_src/include -shared -o $@ c_src/test/sdk_jobs_nif.c $(SDK_OBJ_BUT_POOL) $(SDK_POOL)

$(SDK_TEST_DIR)/sdk_jobs_server: c_src/test/sdk_jobs_nif.c c_src/test/rle_job.h $(EXTERNAL_JOBS_SRC) $(EXTERNAL_HDR) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(CFLAGS_COMMON) -O2 -DWB_EXTERNAL_SERVER -I$(ERTS_INCLUDE_DIR) -Ic_src/include $(EI_CFLAGS) -o $@ c_src/test/sdk_jobs_nif.c $(EXTERNAL_JOBS_SRC) $(EI_LIBS)

$(SDK_TEST_DIR)/sdk_v0_nif.so: c_src/test/sdk_v0_job.c $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -Ic_src/include -shared -o $@ c_src/test/sdk_v0_job.c $(SDK_OBJ)

$(SDK_TEST_DIR)/sdk_v0_refused_nif.so: c_src/test/sdk_v0_job.c $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -DWB_TEST_REFUSED -Ic_src/include -shared -o $@ c_src/test/sdk_v0_job.c $(SDK_OBJ)

$(SDK_TEST_DIR)/sdk_hooks_nif.so: c_src/test/sdk_hooks_nif.c $(SDK_OBJ) $(SDK_HDR)
	@mkdir -p $(SDK_TEST_DIR)
	$(CC) $(NIF_CFLAGS) -Ic_src/include -shared -o $@ c_src/test/sdk_hooks_nif.c $(SDK_OBJ)
