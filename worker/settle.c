/*
 * settle.c - after an action, wait only as long as the page is still
 * reacting to it (DESIGN.md section 3: settle, not sleep).
 */
#include "worker.h"

int settle(struct wctx *w)
{
    /* One animation frame plus a task lets handlers the input triggered run
     * and paint; a navigation they started is then visible as nav_started. */
    json_t *v;
    if (util_eval(w, "new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)))", &v) == 0)
        json_decref(v);
    else if (w->err == TV_TIMEOUT || w->err == TV_CANCELLED || w->err == TV_BROWSER_CRASHED)
        return -1;
    return nav_wait(w, "domcontentloaded", 10000);
}
