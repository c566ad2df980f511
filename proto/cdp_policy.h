/*
 * cdp_policy.h - which CDP methods may pass which layer: the one table.
 *
 * A CDP command crosses up to four gates on its way to a browser, and each
 * reads this table instead of keeping a list of its own:
 *
 *   CDP_LAYER_TOOL       the worker, for a client's browser_cdp (and then the
 *                        operator's --cdp-allow list, which can only narrow it)
 *   CDP_LAYER_BRIDGE     the supervisor's bridge to the shared browser, for a
 *                        worker's command on one of its own page sessions
 *   CDP_LAYER_RELAY      the relay (and the worker's relay transport before
 *                        it), for a worker's command on a tab it owns in the
 *                        user's own browser
 *   CDP_LAYER_EXTENSION  the extension's cdp verb (extension/cdp_policy.js is
 *                        generated from this table at build time)
 *
 * A worker may be taken over by a hostile page and a client may be hostile
 * (docs/confinement.md), so a layer never trusts the one before it. What
 * hands the browser a local path, or reaches past one session's context
 * (the browser, every profile's cookies, other targets), passes no layer,
 * whatever --cdp-allow says.
 *
 * Ownership: the table and the strings it returns are static.
 */
#ifndef TABVISOR_CDP_POLICY_H
#define TABVISOR_CDP_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

enum cdp_layer {
    CDP_LAYER_TOOL = 1u << 0,
    CDP_LAYER_BRIDGE = 1u << 1,
    CDP_LAYER_RELAY = 1u << 2,
    CDP_LAYER_EXTENSION = 1u << 3,
};
#define CDP_LAYERS_ALL (CDP_LAYER_TOOL | CDP_LAYER_BRIDGE | CDP_LAYER_RELAY | CDP_LAYER_EXTENSION)
#define CDP_LAYERS_NONE 0u
#define CDP_LAYER_COUNT 4

struct cdp_rule {
    /* "Domain.method", "Domain.*" (every method of the domain) or
     * "*.method" (that method of every domain). The most specific wins. */
    const char *method;
    unsigned pass; /* the layers that pass it */
    /* A member of params that is a URL the layer's URL policy must allow
     * (url_policy.h), wherever the command passes. */
    const char *url_param;
    /* A member of params (dotted path) that must be absent or empty where
     * a layer in bar_layers passes the command. */
    const char *bar_param;
    unsigned bar_layers;
    const char *why; /* why the layers that refuse it (or bar the param) do */
};

extern const struct cdp_rule cdp_policy_table[];
extern const size_t cdp_policy_count;

/* The rule that governs method (len bytes), or NULL: no rule, every layer
 * passes it. */
const struct cdp_rule *cdp_policy_rule(const char *method, size_t len);

/* The url_policy.h allow bits of a layer. */
unsigned cdp_policy_url_allow(unsigned layer);

/* Whether deciding method at layer needs its params (a URL or a barred
 * member): the bridge parses a command only then. */
bool cdp_policy_needs_params(unsigned layer, const char *method, size_t len);

/* NULL when layer passes method (len bytes) with params (NULL: none), else
 * a static sentence saying why not. Not "Domain.method": refused. */
const char *cdp_policy_check(unsigned layer, const char *method, size_t len, const json_t *params);

/* A method the row governs, into out: its own name, or one made up for a
 * pattern ("Domain.*" -> "Domain.madeUp", "*.disable" -> "Made.disable").
 * For walking the table against a layer (tests, the extension's vectors). */
void cdp_policy_sample_method(const struct cdp_rule *rule, char *out, size_t cap);

/* The layer's name as the table's comments and messages give it. */
const char *cdp_layer_name(unsigned layer);

#endif
