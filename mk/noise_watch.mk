# The lab's noise sampler (c_src/noise_watch/): reads the machine's and the
# measured VM's CPU counters together, from outside the VM.

NOISE_WATCH := priv/wb_noise_watch
NATIVE_TARGETS += $(NOISE_WATCH)

$(NOISE_WATCH): c_src/noise_watch/wb_noise_watch.c
	@mkdir -p priv
	$(CC) $(CFLAGS_COMMON) -O2 -o $@ c_src/noise_watch/wb_noise_watch.c
