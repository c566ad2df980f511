/*
 * errors.h - the stable error codes of DESIGN.md section 5 and the shape of a
 * failed tool result.
 */
#ifndef TABVISOR_ERRORS_H
#define TABVISOR_ERRORS_H

#include <jansson.h>

enum tv_err {
    TV_OK = 0,
    TV_INVALID_PARAMETERS,
    TV_SESSION_NOT_FOUND,
    TV_SESSION_EXPIRED,
    TV_SESSION_CRASHED,
    TV_MAX_SESSIONS_REACHED,
    TV_NAVIGATION_FAILED,
    TV_TIMEOUT,
    TV_CANCELLED,
    TV_ELEMENT_NOT_FOUND,
    TV_ELEMENT_AMBIGUOUS,
    TV_ELEMENT_NOT_VISIBLE,
    TV_ELEMENT_NOT_CLICKABLE,
    TV_ELEMENT_NOT_EDITABLE,
    TV_STALE_REF,
    TV_TAB_NOT_FOUND,
    TV_MODAL_STATE,
    TV_BROWSER_ERROR,
    TV_BROWSER_CRASHED,
    TV_EXTENSION_NOT_CONNECTED,
    TV_NOT_SUPPORTED,
    TV_PATH_NOT_ALLOWED,
    TV_VERIFICATION_FAILED, /* browser_verify_*: the page is not as the agent expected */
    TV_PAGE_CRASHED,        /* the page's renderer died; the session and its context live on */
    TV_ERR_COUNT
};

/* The enum name without "TV_": "INVALID_PARAMETERS" etc.; TV_OK is "OK",
 * a value out of range "UNKNOWN". Never NULL. */
const char *tv_err_code(enum tv_err e);
/* Inverse of tv_err_code; TV_OK for an unknown string. */
enum tv_err tv_err_from_code(const char *code);

/*
 * Build a failed tools/call result (a new reference):
 *   {content:[{type:"text", text:"CODE: message\nHint: hint"}],
 *    structuredContent:{error:{code,message,hint}, sessionId, page},
 *    isError:true}
 * hint, session_id and page (an object {url,title}, borrowed) may be NULL;
 * a NULL one is left out (the "\nHint: " line too), a NULL message is "".
 * Strings that are not valid UTF-8 have their non-ASCII bytes replaced by '?'.
 * Returns NULL only when out of memory.
 */
json_t *tv_error_result(enum tv_err e, const char *message, const char *hint,
                        const char *session_id, json_t *page);
/* The same in either shape a result takes: MCP's (structuredContent), or a
 * worker's MSG_RESULT body (structured; DESIGN.md section 2), which the
 * supervisor turns into MCP's once, stamping the sessionId. */
enum tv_result_shape { TV_RESULT_MCP, TV_RESULT_WIRE };
json_t *tv_error_result_as(enum tv_result_shape shape, enum tv_err e, const char *message,
                           const char *hint, const char *session_id, json_t *page);

#endif
