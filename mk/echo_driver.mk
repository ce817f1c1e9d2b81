# Port driver for WellBehaved.Echo.Driver (:driver_call, :driver_control,
# :driver_outputv): priv/wb_echo_drv.so, loaded with :erl_ddll.
ECHO_DRV_SO := priv/wb_echo_drv.so
NATIVE_TARGETS += $(ECHO_DRV_SO)

$(ECHO_DRV_SO): c_src/echo_driver/wb_echo_drv.c
	@mkdir -p priv
	$(CC) $(CFLAGS_COMMON) -O2 -fPIC -I$(ERTS_INCLUDE) -shared -o $@ $<
