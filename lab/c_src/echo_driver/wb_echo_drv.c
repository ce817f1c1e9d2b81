/*
 * wb_echo_drv: a port driver (erl_driver) that echoes what it is given, by
 * three routes:
 *
 *   erlang:port_call(Port, 1, Term)       call callback: the term arrives in
 *                                         external format and goes back as is
 *   erlang:port_control(Port, 1, Binary)  control callback: the bytes go back
 *                                         as a binary
 *   erlang:port_command(Port, IoData)     outputv callback: the bytes go back
 *                                         as {Port, {data, Binary}} to the
 *                                         port's connected process (the port
 *                                         must be opened in binary mode)
 *
 * The driver keeps no state besides its port, so it asks for port-level
 * locking (ERL_DRV_FLAG_USE_PORT_LOCKING): different ports run in parallel on
 * different schedulers.
 *
 * Return buffers: call and control get a buffer of rlen bytes in *rbuf.
 * A reply that does not fit goes in memory the runtime frees after the
 * callback: driver_alloc for call, driver_alloc_binary for control (the
 * port is in PORT_CONTROL_FLAG_BINARY mode, so the binary is handed to the
 * caller without a further copy).
 */
#include <string.h>

#include <erl_driver.h>

#define WB_ECHO_OP 1
/* any negative return makes port_call/3 and port_control/3 raise badarg */
#define WB_ECHO_BADARG ((ErlDrvSSizeT)-1)

static ErlDrvData echo_start(ErlDrvPort port, char *command) {
    (void)command;
    set_port_control_flags(port, PORT_CONTROL_FLAG_BINARY);
    return (ErlDrvData)port;
}

static void echo_stop(ErlDrvData data) {
    (void)data;
}

/* Bytes into *rbuf if they fit in rlen, else into a driver_alloc'd buffer. */
static ErlDrvSSizeT echo_call(ErlDrvData data, unsigned int command, char *buf, ErlDrvSizeT len,
                              char **rbuf, ErlDrvSizeT rlen, unsigned int *flags) {
    (void)data;
    (void)flags;
    if (command != WB_ECHO_OP) return WB_ECHO_BADARG;
    char *out = *rbuf;
    if (len > rlen) {
        out = driver_alloc(len);
        if (out == NULL) return WB_ECHO_BADARG;
        *rbuf = out;
    }
    memcpy(out, buf, len);
    return (ErlDrvSSizeT)len;
}

/* Bytes into *rbuf if they fit in rlen, else into a new driver binary. */
static ErlDrvSSizeT echo_control(ErlDrvData data, unsigned int command, char *buf, ErlDrvSizeT len,
                                 char **rbuf, ErlDrvSizeT rlen) {
    (void)data;
    if (command != WB_ECHO_OP) return WB_ECHO_BADARG;
    if (len <= rlen) {
        memcpy(*rbuf, buf, len);
        return (ErlDrvSSizeT)len;
    }
    ErlDrvBinary *bin = driver_alloc_binary(len);
    if (bin == NULL) return WB_ECHO_BADARG;
    memcpy(bin->orig_bytes, buf, len);
    *rbuf = (char *)bin;
    return (ErlDrvSSizeT)len;
}

/*
 * The data goes back as one binary: driver_outputv would hand a vector of
 * several pieces back as an (improper) list of binaries. A single piece
 * (the common case: Port.command(port, binary)) is passed back by
 * reference, without a copy; several pieces are joined into a new binary.
 */
static void echo_outputv(ErlDrvData data, ErlIOVec *ev) {
    ErlDrvPort port = (ErlDrvPort)data;
    int piece = -1;
    for (int i = 0; i < ev->vsize; i++) {
        if (ev->iov[i].iov_len == 0) continue;
        piece = piece == -1 ? i : -2;
    }
    if (piece == -1) {
        driver_output(port, "", 0);
        return;
    }
    if (piece >= 0 && ev->binv[piece] != NULL) {
        ErlDrvBinary *bin = ev->binv[piece];
        ErlDrvSizeT offset = (ErlDrvSizeT)((char *)ev->iov[piece].iov_base - bin->orig_bytes);
        driver_output_binary(port, NULL, 0, bin, offset, ev->iov[piece].iov_len);
        return;
    }
    ErlDrvBinary *joined = driver_alloc_binary(ev->size);
    if (joined == NULL) {
        driver_failure_atom(port, "enomem");
        return;
    }
    driver_vec_to_buf(ev, joined->orig_bytes, ev->size);
    driver_output_binary(port, NULL, 0, joined, 0, ev->size);
    driver_free_binary(joined);
}

static ErlDrvEntry echo_driver_entry = {
    .init = NULL,
    .start = echo_start,
    .stop = echo_stop,
    .output = NULL,
    .ready_input = NULL,
    .ready_output = NULL,
    .driver_name = "wb_echo_drv",
    .finish = NULL,
    .handle = NULL,
    .control = echo_control,
    .timeout = NULL,
    .outputv = echo_outputv,
    .ready_async = NULL,
    .flush = NULL,
    .call = echo_call,
    .unused_event_callback = NULL,
    .extended_marker = ERL_DRV_EXTENDED_MARKER,
    .major_version = ERL_DRV_EXTENDED_MAJOR_VERSION,
    .minor_version = ERL_DRV_EXTENDED_MINOR_VERSION,
    .driver_flags = ERL_DRV_FLAG_USE_PORT_LOCKING,
    .handle2 = NULL,
    .process_exit = NULL,
    .stop_select = NULL,
    .emergency_close = NULL,
};

DRIVER_INIT(wb_echo_drv) {
    return &echo_driver_entry;
}
