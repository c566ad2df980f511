/*
 * nng_close_hang.c - a test shim, LD_PRELOADed into the relay by e2e.relay:
 * its nng_close never returns, as nng 1.5.2's can when a pipe goes away
 * during the close. The relay must still stop on SIGTERM (worker_side.c).
 */
#include <unistd.h>

#include <nng/nng.h>

int nng_close(nng_socket s)
{
    (void)s;
    for (;;)
        pause();
}
