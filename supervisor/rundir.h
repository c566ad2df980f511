/* rundir.h - the private runtime directory: base/run-PID, mode 0700. */
#ifndef TABVISOR_RUNDIR_H
#define TABVISOR_RUNDIR_H

#include <stddef.h>

/* Create (or check) base as a 0700 directory we own, sweep what dead runs
 * left there (directories of runs whose supervisor is gone, and a browser
 * such a run left alive), then create base/run-PID into out. 0 or -1. */
int rundir_create(const char *base, char *out, size_t len);
/* Remove a run directory recursively. */
void rundir_remove(const char *dir);

#endif
