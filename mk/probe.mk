# WellBehaved.Probe's turn tracer (issue 19): an erl_tracer module whose
# NIF library (c_src/probe/turn_tracer_nif.c) logs when each traced process
# is scheduled in and out, with the thread's CPU clock, into a pure-C turn
# log (c_src/probe/turn_log.c); the CPU time of the VM's threads off its
# normal schedulers (c_src/probe/thread_cpu.c); and the sanitized unit tests
# of both.

PROBE_CORE_SRC := c_src/probe/turn_log.c c_src/probe/thread_cpu.c
PROBE_CORE_HDR := c_src/probe/turn_log.h c_src/probe/thread_cpu.h
TURN_TRACER_SO := $(PRIV_DIR)/wb_turn_tracer.so
PROBE_TEST := c_src/build/test_turn_log
THREAD_CPU_TEST := c_src/build/test_thread_cpu

NATIVE_TARGETS += $(TURN_TRACER_SO)
C_TEST_TARGETS += $(PROBE_TEST) $(THREAD_CPU_TEST)

$(TURN_TRACER_SO): c_src/probe/turn_tracer_nif.c $(PROBE_CORE_SRC) $(PROBE_CORE_HDR)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(NIF_CFLAGS) -shared -o $@ c_src/probe/turn_tracer_nif.c $(PROBE_CORE_SRC)

$(PROBE_TEST): c_src/probe/test_turn_log.c c_src/test/check.h $(PROBE_CORE_SRC) $(PROBE_CORE_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/probe/test_turn_log.c c_src/probe/turn_log.c

$(THREAD_CPU_TEST): c_src/probe/test_thread_cpu.c c_src/test/check.h c_src/probe/thread_cpu.c c_src/probe/thread_cpu.h
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -pthread -o $@ c_src/probe/test_thread_cpu.c c_src/probe/thread_cpu.c
