/*
 * wb_external SOCKET_PATH [--remove-dir]: the built-in external server
 * (WellBehaved.External): echo and the Levenshtein core over a Unix domain
 * socket (see wb_external.h and wb_ext_server.c).
 */
#include "../levenshtein/levenshtein.h"
#include "wb_external.h"

int main(int argc, char **argv) {
    wb_lev_choose_path(); /* before any request, as the NIF library at load */
    wb_ext_use(wb_ext_levenshtein);
    return wb_ext_server_main("wb_external", argc, argv);
}
