# The :cnode echo method: a C node written with ei (c_src/cnode/wb_cnode.c),
# started as a port program by WellBehaved.Echo.CNode. Its message handling
# is unit tested by the same source built with -DWB_CNODE_TEST (sanitized).

CNODE_BIN := priv/wb_cnode
CNODE_TEST := c_src/build/test_wb_cnode

NATIVE_TARGETS += $(CNODE_BIN)
C_TEST_TARGETS += $(CNODE_TEST)

$(CNODE_BIN): c_src/cnode/wb_cnode.c
	@mkdir -p priv
	$(CC) $(CFLAGS_COMMON) -O2 $(EI_CFLAGS) -o $@ $< $(EI_LIBS)

$(CNODE_TEST): c_src/cnode/wb_cnode.c c_src/test/check.h
	@mkdir -p c_src/build
	$(CC) $(SAN_CFLAGS) -DWB_CNODE_TEST $(EI_CFLAGS) -o $@ $< $(EI_LIBS)
