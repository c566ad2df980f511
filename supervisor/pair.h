/*
 * pair.h - `tabvisor pair`: pair the browser extension with the relay this
 * tabvisor's settings name.
 */
#ifndef TABVISOR_PAIR_H
#define TABVISOR_PAIR_H

/* Run `tabvisor pair [--new] [options]` (argv[0] is "pair"): read the
 * settings as a server run would (flags, TABVISOR_*, --config), then
 * replace this process with `tabvisor-relay pair` for the same relay port
 * and secret file. Returns only on failure: the exit status (2 for a bad
 * setting, 1 when the relay binary cannot run), or 0 after --help. */
int pair_main(int argc, char **argv);

#endif
