/*
 * fuzz_relay_extmsg.c - the relay's parser of the extension's frames
 * (relay/extmsg.c) on arbitrary bytes: never a crash, a leak or a read
 * outside the input, and whatever it accepts keeps the promises of its
 * field tables (the fields a reader takes without checking are there and of
 * their type).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ext_msg m;
    char err[200];
    if (extmsg_parse((const char *)data, size, &m, err, sizeof(err)) != 0) {
        if (m.root || !err[0])
            abort(); /* refused: nothing kept, and a reason given */
        return 0;
    }
    if (!json_is_object(m.root))
        abort();
    switch (m.kind) {
    case EXT_AUTH:
    case EXT_PAIR:
        if (!m.nonce || !m.mac || strlen(m.nonce) > 64 || strlen(m.mac) > 64)
            abort();
        break;
    case EXT_RES:
        if (m.id > UINT32_MAX || (!m.ok && !m.error))
            abort();
        if (m.error && (!json_is_string(json_object_get(m.error, "code")) ||
                        !json_is_string(json_object_get(m.error, "message"))))
            abort();
        break;
    case EXT_EVENT_CDP:
        if (!m.method || m.tab_id < 0 || m.tab_id > INT32_MAX)
            abort();
        if (m.params && !json_is_object(m.params))
            abort();
        break;
    case EXT_EVENT_DETACHED:
        if (!m.reason)
            abort();
        /* fallthrough */
    case EXT_EVENT_REMOVED:
    case EXT_EVENT_REVOKED:
        if (m.tab_id < 0 || m.tab_id > INT32_MAX)
            abort();
        break;
    case EXT_EVENT_OPENED_BY:
        if (m.tab_id < 0 || m.opener < 0 || m.opener > INT32_MAX)
            abort();
        break;
    case EXT_EVENT_STATE: {
        size_t i;
        json_t *v;
        json_array_foreach(m.present, i, v) if (!json_is_integer(v) || json_integer_value(v) < 0)
            abort();
        break;
    }
    case EXT_EVENT_GRANTED:
        if (!m.session || strlen(m.session) > 64 || m.tab_id < 0 || m.tab_id > INT32_MAX)
            abort();
        break;
    case EXT_HEARTBEAT:
        break;
    }
    extmsg_clear(&m);
    return 0;
}
