# WellBehaved.Probe's turn tracer (issue 19): an erl_tracer module whose
# NIF library (c_src/probe/turn_tracer_nif.c) logs when each traced process
# is scheduled in and out, with the thread's CPU clock, into a pure-C turn
# log (c_src/probe/turn_log.c); and the sanitized unit test of that log.

PROBE_CORE_SRC := c_src/probe/turn_log.c
PROBE_CORE_HDR := c_src/probe/turn_log.h
TURN_TRACER_SO := $(PRIV_DIR)/wb_turn_tracer.so
PROBE_TEST := c_src/build/test_turn_log

NATIVE_TARGETS += $(TURN_TRACER_SO)
C_TEST_TARGETS += $(PROBE_TEST)

$(TURN_TRACER_SO): c_src/probe/turn_tracer_nif.c $(PROBE_CORE_SRC) $(PROBE_CORE_HDR)
	@mkdir -p $(PRIV_DIR)
	$(CC) $(NIF_CFLAGS) -shared -o $@ c_src/probe/turn_tracer_nif.c $(PROBE_CORE_SRC)

$(PROBE_TEST): c_src/probe/test_turn_log.c c_src/test/check.h $(PROBE_CORE_SRC) $(PROBE_CORE_HDR)
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -o $@ c_src/probe/test_turn_log.c $(PROBE_CORE_SRC)
