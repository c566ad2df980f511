/* emulate.c - browser_emulate_media: CSS media type and media features by
 * Emulation.setEmulatedMedia. The command replaces every override at once,
 * while the tool changes only the arguments given (null clears one), so the
 * overrides in force are kept here. One worker serves one page, so one set. */
#include <stdio.h>
#include <string.h>

#include "worker.h"

static const struct {
    const char *arg;     /* tool argument */
    const char *feature; /* CSS media feature; NULL for the media type */
} media_args[] = {
    {"colorScheme", "prefers-color-scheme"},
    {"reducedMotion", "prefers-reduced-motion"},
    {"forcedColors", "forced-colors"},
    {"contrast", "prefers-contrast"},
    {"media", NULL},
};
#define N_MEDIA (sizeof media_args / sizeof media_args[0])

/* Current overrides ("" = none); values come from the catalog's enums. */
static char emulated[N_MEDIA][16];

json_t *tool_emulate_media(struct session *w, json_t *args)
{
    char next[N_MEDIA][16];
    memcpy(next, emulated, sizeof next);
    for (size_t i = 0; i < N_MEDIA; i++) {
        json_t *v = json_object_get(args, media_args[i].arg);
        if (json_is_null(v))
            next[i][0] = 0;
        else if (json_is_string(v))
            snprintf(next[i], sizeof next[i], "%s", json_string_value(v));
    }
    json_t *features = json_array();
    const char *media = "";
    for (size_t i = 0; i < N_MEDIA; i++) {
        if (!media_args[i].feature)
            media = next[i];
        else
            json_array_append_new(
                features, json_pack("{s:s, s:s}", "name", media_args[i].feature, "value", next[i]));
    }
    if (page_call(w, "Emulation.setEmulatedMedia",
                  json_pack("{s:s, s:o}", "media", media, "features", features), NULL) < 0)
        return tool_fail(w);
    memcpy(emulated, next, sizeof emulated);
    page_refresh_info(w);
    json_t *now = json_object();
    char line[300] = "Media emulation:";
    for (size_t i = 0; i < N_MEDIA; i++) {
        if (!emulated[i][0])
            continue;
        json_object_set_new(now, media_args[i].arg, json_string(emulated[i]));
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, " %s=%s", media_args[i].arg, emulated[i]);
    }
    if (!json_object_size(now))
        snprintf(line, sizeof line, "Media emulation: none (the browser's defaults)");
    json_t *out = json_pack("{s:o}", "emulated", now);
    add_page(w, out);
    return tool_ok(w, line, out);
}

json_t *emulate_media_state(void)
{
    json_t *now = json_object();
    for (size_t i = 0; i < N_MEDIA; i++)
        if (emulated[i][0])
            json_object_set_new(now, media_args[i].arg, json_string(emulated[i]));
    return now;
}
