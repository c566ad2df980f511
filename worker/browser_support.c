/*
 * browser_support.c - which tools Firefox cannot run, and why: the one
 * table behind the README's "tools by browser" (issue 23).
 *
 * Most tools run on Firefox unchanged: their CDP is mapped to WebDriver
 * BiDi in one place (cdp/bidi_map.h), and a command it cannot map fails
 * the call with NOT_SUPPORTED naming the command. The tools below would
 * instead seem to work and do nothing (their set-up is sent without
 * waiting for its answer, or BiDi has nothing to map it to), or could do
 * harm (a local file path to the browser), so they are refused before
 * they start.
 */
#include <string.h>

#include "worker.h"

static const struct {
    const char *tool, *why;
} firefox_refuses[] = {
    {"browser_emulate_media", "media emulation has no WebDriver BiDi counterpart in Firefox ESR"},
    {"browser_cdp", "Firefox does not speak CDP"},
    {"browser_drop", "BiDi has no drag-and-drop of data or files"},
};

const char *firefox_refusal(const char *tool)
{
    for (size_t i = 0; i < sizeof firefox_refuses / sizeof firefox_refuses[0]; i++)
        if (strcmp(firefox_refuses[i].tool, tool) == 0)
            return firefox_refuses[i].why;
    return NULL;
}
