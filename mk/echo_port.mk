# Port program for WellBehaved.Echo.PortProgram: priv/wb_echo_port echoes
# {packet, 4} frames from stdin to stdout. The same source built with
# -DWB_ECHO_PORT_TEST is the sanitized unit test of its frame loop.
ECHO_PORT_BIN := priv/wb_echo_port
ECHO_PORT_TEST := c_src/build/test_echo_port
NATIVE_TARGETS += $(ECHO_PORT_BIN)
C_TEST_TARGETS += $(ECHO_PORT_TEST)

$(ECHO_PORT_BIN): c_src/echo_port/wb_echo_port.c
	@mkdir -p priv
	$(CC) $(CFLAGS_COMMON) -O2 -o $@ $<

$(ECHO_PORT_TEST): c_src/echo_port/wb_echo_port.c c_src/test/check.h
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -DWB_ECHO_PORT_TEST -o $@ $<
