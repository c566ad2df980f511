/*
 * pair.c - `tabvisor pair` (pair.h). The relay owns the pairing secret, so
 * the work is `tabvisor-relay pair`'s: it makes the secret once (0600) and
 * prints the extension's pairing page with the secret in the URL fragment.
 * It prints rather than opens the page on purpose: a browser started with
 * that URL would show the secret to `ps` in its command line. This command
 * only saves the user from repeating --relay-port and --relay-secret-file
 * (or their TABVISOR_* variables and config keys) for the relay binary,
 * whose own flags are named differently.
 */
#include "pair.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static const char PAIR_USAGE[] =
    "usage: tabvisor pair [--new] [--relay-port N] [--relay-secret-file F] [--relay-bin PATH]\n"
    "                     [--config FILE]\n"
    "Prints a one-time code and the page of the tabvisor extension that pairs it with the\n"
    "relay (it runs `tabvisor-relay pair` for that relay): open the page in the Chrome that has\n"
    "the extension and type the code within 10 minutes. Give the relay the server will use:\n"
    "the same flags, TABVISOR_* variables or config keys as the server's.\n"
    "\n"
    "  --new                  a new secret (paired extensions must pair again)\n"
    "  --relay-port N         the relay's port on 127.0.0.1 (default 47653)\n"
    "                         TABVISOR_RELAY_PORT, key relayPort\n"
    "  --relay-secret-file F  the pairing secret (default $XDG_CONFIG_HOME/tabvisor/relay.secret,\n"
    "                         else ~/.config/tabvisor/relay.secret)\n"
    "                         TABVISOR_RELAY_SECRET_FILE, key relaySecretFile\n"
    "  --relay-bin PATH       tabvisor-relay (default: beside this binary)\n"
    "                         TABVISOR_RELAY_BIN, key relayBin\n"
    "  --config FILE          read these from a JSON file (TABVISOR_CONFIG)\n"
    "\n"
    "The server's other options are accepted and have no effect here.\n";

int pair_main(int argc, char **argv)
{
    /* --new (a fresh secret) is the relay's own flag; the rest are ours. */
    bool fresh = false;
    char *args[argc + 1];
    int n = 0;
    args[n++] = "tabvisor pair"; /* getopt's name in its messages */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(PAIR_USAGE, stdout);
            return 0;
        }
        if (strcmp(argv[i], "--new") == 0)
            fresh = true;
        else
            args[n++] = argv[i];
    }
    args[n] = NULL;
    static struct config c;
    int r = config_parse(&c, n, args);
    if (r != 0)
        return r > 0 ? 0 : 2;
    char port[16];
    snprintf(port, sizeof port, "%d", c.relay_port);
    char *relay_argv[8] = {c.relay_bin, "pair", "--relay-port", port};
    int k = 4;
    if (c.relay_secret_file[0]) {
        relay_argv[k++] = "--secret-file";
        relay_argv[k++] = c.relay_secret_file;
    }
    if (fresh)
        relay_argv[k++] = "--new";
    relay_argv[k] = NULL;
    execv(c.relay_bin, relay_argv);
    fprintf(stderr, "tabvisor pair: cannot run %s: %s\n", c.relay_bin, strerror(errno));
    return 1;
}
