/* registry.c - worker-side dispatch: a tool's id -> its handler.
 *
 * The table is made from the one tool list (proto/tool_ids.h) with
 * designated initialisers, so it cannot miss a worker tool or name a handler
 * that does not exist; a unit test checks supervisor tools have none. */
#include "catalog.h"
#include "worker.h"

static const tool_fn handlers[TOOL_COUNT] = {
#define HANDLER_S(name)
#define HANDLER_W(name, fn) [TOOL_##name] = fn,
    TOOL_LIST(HANDLER_S, HANDLER_W)
#undef HANDLER_S
#undef HANDLER_W
};

tool_fn tools_find(const char *name)
{
    const struct tool_def *t = catalog_find(name);
    return t && t->id > TOOL_NONE && t->id < TOOL_COUNT ? handlers[t->id] : NULL;
}
