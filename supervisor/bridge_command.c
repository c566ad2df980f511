/* bridge_command.c - see bridge_command.h. */
#include "bridge_command.h"

#include "json_util.h"
#include "memtrim.h"

json_t *bridge_command_parse(const char *msg, size_t len, size_t flags, const char **why)
{
    if (len > MEMTRIM_KEEP_BYTES)
        memtrim_released(len);
    if (!json_text_values_within(msg, len, BRIDGE_MAX_COMMAND_VALUES)) {
        *why = "tabvisor: the command holds more JSON values than any command of a worker needs";
        return NULL;
    }
    json_t *m = json_loadb(msg, len, flags, NULL);
    if (!m)
        *why = "tabvisor: the command is not strict JSON (a duplicate key?)";
    return m;
}
