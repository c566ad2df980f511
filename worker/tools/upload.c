/*
 * upload.c - browser_file_upload: files from the server's output dir into a
 * page's <input type=file>, and the file chooser as a modal state; and
 * browser_drop: files or typed data dropped onto an element.
 *
 * Like Playwright's tool, the usual form answers a file chooser: the worker
 * intercepts choosers (Page.setInterceptFileChooserDialog), so a click on a
 * file input opens none on the machine but leaves one pending here, shown
 * in responses under "### Modal state". tabvisor also takes a `target`: the
 * <input type=file> itself, chooser or not.
 *
 * The browser never opens the agent's paths. The worker reads each file
 * with output_read (inside the output dir, no symlink followed at the
 * moment of use) and hands the bytes to the page, which builds File objects
 * and sets them on the input (a DataTransfer's FileList), then fires input
 * and change as a real choice does. DOM.setFileInputFiles would give the
 * browser a path to open later, when the file might have been swapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "uploads.h"
#include "worker.h"

/* Sets files (an array of {name, type, data base64}) on el, an
 * <input type=file>; errors as the engine makes them. */
static const char SET_FILES_JS[] =
    "function (el, files) {\n"
    "  el = el || this;\n"
    "  const fail = (code, message, retry) => ({error: {code, message, retry}});\n"
    "  if (!el || el.localName !== 'input' || el.type !== 'file')\n"
    "    return fail('INVALID_PARAMETERS', 'the element is <' + (el && el.localName) +\n"
    "        (el && el.type ? ' type=' + el.type : '') + '>, not an <input type=file>', false);\n"
    "  if (el.disabled) return fail('ELEMENT_NOT_CLICKABLE', 'the file input is disabled', "
    "true);\n"
    "  if (files.length > 1 && !el.multiple) return fail('INVALID_PARAMETERS',\n"
    "      'the file input takes one file, not ' + files.length, false);\n"
    "  const dt = new DataTransfer();\n"
    "  for (const f of files) {\n"
    "    const bin = atob(f.data), bytes = new Uint8Array(bin.length);\n"
    "    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);\n"
    "    dt.items.add(new File([bytes], f.name, {type: f.type}));\n"
    "  }\n"
    "  el.files = dt.files;\n"
    "  el.dispatchEvent(new Event('input', {bubbles: true, composed: true}));\n"
    "  el.dispatchEvent(new Event('change', {bubbles: true}));\n"
    "  return {files: Array.from(el.files, (f) => f.name)};\n"
    "}";

void upload_attach(struct session *w, const char *session, enum attach_kind kind)
{
    (void)kind; /* a chooser may open in a page or in any of its frames */
    json_t *p = json_pack("{s:b}", "enabled", 1);
    cdp_send(w->cdp, session && *session ? session : w->page->cdp_session,
             "Page.setInterceptFileChooserDialog", p);
    json_decref(p);
}

void upload_on_event(struct session *w, const char *session, const char *method, json_t *params)
{
    if (strcmp(method, "Page.fileChooserOpened") == 0) {
        json_t *node = json_object_get(params, "backendNodeId");
        if (!json_is_integer(node))
            return; /* a chooser without an input (showOpenFilePicker): nothing to fill */
        w->chooser.open = true;
        w->chooser.backend_node = json_integer_value(node);
        const char *mode = json_string_value(json_object_get(params, "mode"));
        w->chooser.multiple = mode && strcmp(mode, "selectMultiple") == 0;
        snprintf(w->chooser.session, sizeof w->chooser.session, "%s", session ? session : "");
    } else if (strcmp(method, "Page.frameNavigated") == 0 &&
               !json_object_get(json_object_get(params, "frame"), "parentId") &&
               (!session || !*session || strcmp(session, w->page->cdp_session) == 0)) {
        w->chooser.open = false; /* its input went with the document */
    } else if (strcmp(method, "Inspector.targetCrashed") == 0) {
        w->chooser.open = false;
    }
}

void chooser_note(struct session *w, json_t *content, json_t *structured)
{
    if (!w->chooser.open)
        return;
    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text",
                                             "### Modal state\n- [File chooser]: can be handled by "
                                             "browser_file_upload"));
    if (!json_object_get(structured, "modalState"))
        json_object_set_new(
            structured, "modalState",
            json_pack("{s:s, s:b}", "type", "fileChooser", "multiple", w->chooser.multiple));
}

/* The MIME type a browser gives a file of this name ("" when unknown). */
static const char *mime_of(const char *name)
{
    static const char *const types[][2] = {
        {".txt", "text/plain"},        {".html", "text/html"},   {".htm", "text/html"},
        {".css", "text/css"},          {".csv", "text/csv"},     {".js", "text/javascript"},
        {".json", "application/json"}, {".xml", "text/xml"},     {".pdf", "application/pdf"},
        {".zip", "application/zip"},   {".png", "image/png"},    {".jpg", "image/jpeg"},
        {".jpeg", "image/jpeg"},       {".gif", "image/gif"},    {".webp", "image/webp"},
        {".svg", "image/svg+xml"},     {".md", "text/markdown"}, {".yaml", "application/yaml"},
    };
    const char *dot = strrchr(name, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcasecmp(dot, types[i][0]) == 0)
            return types[i][1];
    return "";
}

json_t *load_files(struct session *w, json_t *paths)
{
    if (json_array_size(paths) > UPLOAD_MAX_FILES) {
        fail_call(w, TV_INVALID_PARAMETERS, NULL, "%zu files; at most %d", json_array_size(paths),
                  UPLOAD_MAX_FILES);
        return NULL;
    }
    json_t *files = json_array();
    /* Files the supervisor read from the client's roots or --upload-dir
     * (supervisor/upload_roots.c): their bytes come with the call. */
    json_t *given = json_object_get(w->call.args, UPLOAD_FILES_ARG);
    size_t total = 0, i;
    json_t *v;
    json_array_foreach(paths, i, v)
    {
        const char *path = json_string_value(v);
        json_t *f = path ? json_object_get(given, path) : NULL;
        if (f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            json_array_append_new(files, json_pack("{s:s, s:s, s:O}", "name", name ? name : "file",
                                                   "type", mime_of(name ? name : ""), "data",
                                                   json_object_get(f, "data")));
            total += json_string_length(json_object_get(f, "data")) / 4 * 3;
            continue;
        }
        char *data = NULL;
        size_t len = 0;
        char abs[PATH_MAX];
        if (!path ||
            output_read(w, path, UPLOAD_MAX_BYTES - total, &data, &len, abs, sizeof abs) < 0) {
            if (!path)
                fail_call(w, TV_INVALID_PARAMETERS, NULL, "paths[%zu] is not a string", i);
            json_decref(files);
            return NULL;
        }
        total += len;
        char *b64 = base64_encode(data, len);
        free(data);
        const char *slash = strrchr(abs, '/');
        const char *name = slash ? slash + 1 : abs;
        json_array_append_new(files, json_pack("{s:s, s:s, s:s}", "name", name, "type",
                                               mime_of(name), "data", b64 ? b64 : ""));
        free(b64);
    }
    return files;
}

/* Set files on the chooser's input: resolve its node on the session that
 * opened it, then run SET_FILES_JS on it in the page's world. */
static json_t *fill_chooser(struct session *w, json_t *files)
{
    const char *s = w->chooser.session;
    json_t *r = NULL;
    if (session_call(w, s, "DOM.resolveNode",
                     json_pack("{s:I}", "backendNodeId", (json_int_t)w->chooser.backend_node),
                     &r) < 0) {
        w->chooser.open = false;
        fail_call(w, TV_STALE_REF, "Click the file input again to open a new chooser.",
                  "the file chooser's input is gone");
        return NULL;
    }
    const char *obj = json_string_value(json_object_get(json_object_get(r, "object"), "objectId"));
    json_t *p = json_pack("{s:s, s:s, s:[{s:s}, {s:O}], s:b, s:b}", "functionDeclaration",
                          SET_FILES_JS, "objectId", obj ? obj : "", "arguments", "objectId",
                          obj ? obj : "", "value", files, "returnByValue", 1, "awaitPromise", 1);
    json_decref(r);
    r = NULL;
    if (session_call(w, s, "Runtime.callFunctionOn", p, &r) < 0)
        return NULL;
    json_t *ex = json_object_get(r, "exceptionDetails");
    if (ex) {
        fail_call(w, TV_BROWSER_ERROR, NULL, "setting the files failed: %.300s",
                  exception_text(ex) ?: "exception");
        json_decref(r);
        return NULL;
    }
    json_t *v = json_incref(json_object_get(json_object_get(r, "result"), "value"));
    json_decref(r);
    json_t *err = json_object_get(v, "error");
    if (err) {
        page_error(w, err, NULL);
        json_decref(v);
        return NULL;
    }
    return v;
}

json_t *tool_file_upload(struct session *w, json_t *args)
{
    const char *target = arg_str(args, "target", NULL);
    json_t *paths = json_object_get(args, "paths");
    if (!target && !w->chooser.open)
        return fail_call(w, TV_INVALID_PARAMETERS,
                         "Click the file input (or its button) first so the page opens a file "
                         "chooser, or pass target: the <input type=file>.",
                         "no file chooser is open"),
               tool_fail(w);
    if (!paths) {
        if (target)
            return fail_call(w, TV_INVALID_PARAMETERS, NULL,
                             "give paths: the files to set on the input"),
                   tool_fail(w);
        /* No answer is the cancel: the chooser was intercepted, never shown. */
        w->chooser.open = false;
        return page_action_result(w, "Cancelled the file chooser", NULL);
    }
    json_t *files = load_files(w, paths);
    if (!files)
        return tool_fail(w);
    nav_reset(w);
    json_t *v = target
                    ? until_element(w, target, SET_FILES_JS, files, arg_str(args, "element", NULL))
                    : fill_chooser(w, files);
    json_decref(files);
    if (!v || settle(w) < 0) {
        json_decref(v);
        return tool_fail(w);
    }
    if (!target)
        w->chooser.open = false;
    char *names = json_dumps(json_object_get(v, "files"), JSON_COMPACT);
    char line[1200];
    snprintf(line, sizeof line, "Uploaded %.1000s", names ? names : "[]");
    free(names);
    json_t *out = json_pack("{s:O}", "files", json_object_get(v, "files"));
    json_decref(v);
    return page_action_result(w, line, out);
}

/* Drops {data: {mime: string}, files: [{name, type, data}]} on el: the
 * dragenter, dragover, drop sequence a drag from outside the page makes, at
 * the element's centre, with one DataTransfer. The events are synthetic
 * (isTrusted false): CDP's trusted drag would make the browser open the
 * files by path (see above). */
static const char DROP_JS[] =
    "(el, arg) => {\n"
    "  const fail = (code, message, retry) => ({error: {code, message, retry}});\n"
    "  el.scrollIntoView({block: 'center', inline: 'center'});\n"
    "  const r = el.getBoundingClientRect();\n"
    "  if (!(r.width > 0 && r.height > 0)) return fail('ELEMENT_NOT_VISIBLE', 'the drop target "
    "is not visible', true);\n"
    "  const dt = new DataTransfer();\n"
    "  for (const [type, value] of Object.entries(arg.data || {})) dt.setData(type, value);\n"
    "  for (const f of arg.files) {\n"
    "    const bin = atob(f.data), bytes = new Uint8Array(bin.length);\n"
    "    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);\n"
    "    dt.items.add(new File([bytes], f.name, {type: f.type}));\n"
    "  }\n"
    "  const opts = {bubbles: true, cancelable: true, composed: true, dataTransfer: dt,\n"
    "      clientX: r.left + r.width / 2, clientY: r.top + r.height / 2};\n"
    "  el.dispatchEvent(new DragEvent('dragenter', opts));\n"
    "  const over = new DragEvent('dragover', opts);\n"
    "  el.dispatchEvent(over);\n"
    "  const drop = new DragEvent('drop', opts);\n"
    "  el.dispatchEvent(drop);\n"
    "  return {accepted: over.defaultPrevented, handled: drop.defaultPrevented,\n"
    "      types: Array.from(dt.types), files: arg.files.map((f) => f.name)};\n"
    "}";

json_t *tool_drop(struct session *w, json_t *args)
{
    json_t *paths = json_object_get(args, "paths");
    json_t *data = json_object_get(args, "data");
    if (!json_array_size(paths) && !json_object_size(data))
        return fail_call(w, TV_INVALID_PARAMETERS, NULL,
                         "give paths (files in the output dir) or data ({mime: text}) to drop"),
               tool_fail(w);
    const char *k;
    json_t *v;
    json_object_foreach(data, k, v)
    {
        if (!json_is_string(v))
            return fail_call(w, TV_INVALID_PARAMETERS, NULL, "data[\"%.100s\"] is not a string", k),
                   tool_fail(w);
    }
    json_t *files = paths ? load_files(w, paths) : json_array();
    if (!files)
        return tool_fail(w);
    json_t *arg = json_pack("{s:o, s:O?}", "files", files, "data", data);
    nav_reset(w);
    json_t *res =
        until_element(w, arg_str(args, "target", ""), DROP_JS, arg, arg_str(args, "element", NULL));
    json_decref(arg);
    if (!res || settle(w) < 0) {
        json_decref(res);
        return tool_fail(w);
    }
    bool handled = json_is_true(json_object_get(res, "handled"));
    char *types = json_dumps(json_object_get(res, "types"), JSON_COMPACT);
    char line[1200];
    snprintf(line, sizeof line, "Dropped %.900s onto %.200s%s", types ? types : "[]",
             arg_str(args, "target", ""),
             handled ? "" : " (no drop handler took it: the page did not cancel the drop event)");
    free(types);
    json_t *out = json_pack("{s:O, s:O, s:b}", "types", json_object_get(res, "types"), "files",
                            json_object_get(res, "files"), "handled", handled);
    json_decref(res);
    return page_action_result(w, line, out);
}
