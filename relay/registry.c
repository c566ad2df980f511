/* registry.c - see registry.h. Tabs are a flat array: a relay holds at most a
 * few hundred, and a scan is simpler than any index. */
#include "registry.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "errbuf.h"

void reg_init(struct registry *r)
{
    memset(r, 0, sizeof(*r));
    r->next_serial = 1;
}

void reg_free(struct registry *r)
{
    free(r->tabs);
    memset(r, 0, sizeof(*r));
}

/* Session ids are the worker's: printable ASCII without spaces, 1..64 bytes. */
static bool id_ok(const char *id)
{
    size_t n = strnlen(id, REG_SESSION_ID + 1);
    if (n == 0 || n > REG_SESSION_ID)
        return false;
    for (size_t i = 0; i < n; i++)
        if (id[i] <= ' ' || id[i] > '~')
            return false;
    return true;
}

/* A proof is 16..REG_PROOF lowercase hex digits. */
static bool proof_ok(const char *p)
{
    size_t n = p ? strlen(p) : 0;
    if (n < 16 || n > REG_PROOF)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            return false;
    return true;
}

/* Compare two NUL-terminated proofs without leaking where they differ. */
static bool same_proof(const char *a, const char *b)
{
    size_t n = strlen(a);
    if (n != strlen(b))
        return false;
    unsigned char d = 0;
    for (size_t i = 0; i < n; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int reg_session_open(struct registry *r, const char *id, const char *proof, uint32_t pipe,
                     bool *resumed, char *err, size_t errlen)
{
    *resumed = false;
    if (!id_ok(id)) {
        errbuf_set(err, errlen, "session id must be 1..%d printable characters", REG_SESSION_ID);
        return -1;
    }
    if (!proof_ok(proof)) {
        errbuf_set(err, errlen, "proof must be 16..%d lowercase hex digits", REG_PROOF);
        return -1;
    }
    if (pipe == 0 || reg_session_by_pipe(r, pipe) >= 0) {
        errbuf_set(err, errlen, "this connection already has a session");
        return -1;
    }
    int free_idx = -1;
    for (int i = 0; i < REG_MAX_SESSIONS; i++) {
        struct reg_session *s = &r->sessions[i];
        if (!s->used) {
            if (free_idx < 0)
                free_idx = i;
            continue;
        }
        if (strcmp(s->id, id) != 0)
            continue;
        if (s->pipe != 0) {
            errbuf_set(err, errlen, "session '%s' is held by another worker", id);
            return -1;
        }
        if (s->proof[0] && !same_proof(s->proof, proof)) {
            errbuf_set(err, errlen, "session '%s' was opened by another worker (wrong proof)", id);
            return -1;
        }
        snprintf(s->proof, sizeof s->proof, "%s", proof);
        s->pipe = pipe;
        s->orphan_until = 0;
        *resumed = true;
        return i;
    }
    if (free_idx < 0) {
        errbuf_set(err, errlen, "too many sessions (%d)", REG_MAX_SESSIONS);
        return -1;
    }
    struct reg_session *s = &r->sessions[free_idx];
    memset(s, 0, sizeof(*s));
    s->used = true;
    strcpy(s->id, id);
    snprintf(s->proof, sizeof s->proof, "%s", proof);
    s->serial = r->next_serial++;
    s->pipe = pipe;
    return free_idx;
}

int reg_session_claim(struct registry *r, const char *id, int64_t until_ms)
{
    if (!id_ok(id))
        return -1;
    int idx = reg_session_by_id(r, id);
    if (idx >= 0)
        return idx;
    for (int i = 0; i < REG_MAX_SESSIONS; i++) {
        struct reg_session *s = &r->sessions[i];
        if (s->used)
            continue;
        memset(s, 0, sizeof(*s));
        s->used = true;
        strcpy(s->id, id);
        s->serial = r->next_serial++;
        s->orphan_until = until_ms > 0 ? until_ms : 1;
        return i;
    }
    return -1;
}

int reg_session_by_pipe(const struct registry *r, uint32_t pipe)
{
    if (pipe == 0)
        return -1;
    for (int i = 0; i < REG_MAX_SESSIONS; i++)
        if (r->sessions[i].used && r->sessions[i].pipe == pipe)
            return i;
    return -1;
}

int reg_session_by_id(const struct registry *r, const char *id)
{
    for (int i = 0; i < REG_MAX_SESSIONS; i++)
        if (r->sessions[i].used && strcmp(r->sessions[i].id, id) == 0)
            return i;
    return -1;
}

int reg_session_by_serial(const struct registry *r, uint64_t serial)
{
    for (int i = 0; i < REG_MAX_SESSIONS; i++)
        if (r->sessions[i].used && r->sessions[i].serial == serial)
            return i;
    return -1;
}

void reg_session_orphan(struct registry *r, int idx, int64_t until_ms)
{
    if (idx < 0 || idx >= REG_MAX_SESSIONS || !r->sessions[idx].used)
        return;
    r->sessions[idx].pipe = 0;
    r->sessions[idx].orphan_until = until_ms > 0 ? until_ms : 1;
}

void reg_session_free(struct registry *r, int idx)
{
    if (idx < 0 || idx >= REG_MAX_SESSIONS || !r->sessions[idx].used)
        return;
    size_t w = 0;
    for (size_t i = 0; i < r->ntabs; i++)
        if (r->tabs[i].owner != idx)
            r->tabs[w++] = r->tabs[i];
    r->ntabs = w;
    memset(&r->sessions[idx], 0, sizeof(r->sessions[idx]));
}

size_t reg_session_count(const struct registry *r)
{
    size_t n = 0;
    for (int i = 0; i < REG_MAX_SESSIONS; i++)
        n += r->sessions[i].used;
    return n;
}

size_t reg_session_tabs(struct registry *r, int idx, struct reg_tab **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < r->ntabs; i++) {
        if (r->tabs[i].owner != idx)
            continue;
        if (n < max)
            out[n] = &r->tabs[i];
        n++;
    }
    return n;
}

struct reg_tab *reg_tab_get(struct registry *r, int64_t tab_id)
{
    for (size_t i = 0; i < r->ntabs; i++)
        if (r->tabs[i].id == tab_id)
            return &r->tabs[i];
    return NULL;
}

struct reg_tab *reg_tab_owned(struct registry *r, int idx, int64_t tab_id)
{
    struct reg_tab *t = reg_tab_get(r, tab_id);
    return t && idx >= 0 && t->owner == idx ? t : NULL;
}

int reg_tab_add(struct registry *r, int64_t tab_id, int idx, bool created)
{
    if (idx < 0 || idx >= REG_MAX_SESSIONS || !r->sessions[idx].used || tab_id <= 0)
        return -1;
    struct reg_tab *t = reg_tab_get(r, tab_id);
    if (t)
        return t->owner == idx ? 0 : -1;
    if (r->ntabs == r->cap) {
        if (r->cap >= REG_MAX_TABS)
            return -1;
        size_t cap = r->cap ? r->cap * 2 : 16;
        if (cap > REG_MAX_TABS)
            cap = REG_MAX_TABS;
        struct reg_tab *nt = realloc(r->tabs, cap * sizeof(*nt));
        if (!nt)
            return -1;
        r->tabs = nt;
        r->cap = cap;
    }
    r->tabs[r->ntabs++] = (struct reg_tab){.id = tab_id, .owner = idx, .created = created};
    return 0;
}

int reg_tab_opened_by(struct registry *r, int64_t tab_id, int64_t opener)
{
    struct reg_tab *o = reg_tab_get(r, opener);
    if (!o)
        return -1;
    int owner = o->owner;
    return reg_tab_add(r, tab_id, owner, true) == 0 ? owner : -1;
}

int reg_tab_remove(struct registry *r, int64_t tab_id)
{
    for (size_t i = 0; i < r->ntabs; i++) {
        if (r->tabs[i].id != tab_id)
            continue;
        int owner = r->tabs[i].owner;
        r->tabs[i] = r->tabs[--r->ntabs];
        return owner;
    }
    return -1;
}

size_t reg_tab_count(const struct registry *r)
{
    return r->ntabs;
}

size_t reg_expired(const struct registry *r, int64_t now_ms, int *out, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < REG_MAX_SESSIONS && n < max; i++) {
        const struct reg_session *s = &r->sessions[i];
        if (s->used && s->pipe == 0 && s->orphan_until && s->orphan_until <= now_ms)
            out[n++] = i;
    }
    return n;
}
