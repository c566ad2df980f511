/*
 * tool_ids.h - every tool's id: one line per tool, the single list that the
 * catalog, the supervisor and the worker's dispatch table are checked against.
 *
 *   S(name)      a tool the supervisor answers (session management)
 *   W(name, fn)  a tool a worker runs with handler fn
 *
 * The enum constant is TOOL_<name> and the catalog entry says TOOL(name),
 * which sets both its id and its name (#name), so a tool's name is written
 * once. What the compiler enforces:
 *   - a catalog entry for a tool not listed here does not compile
 *     (TOOL_<name> is undeclared);
 *   - a listed worker tool without its handler does not link (worker.h
 *     declares every fn from this list, worker/tools/registry.c indexes
 *     them by id with designated initialisers);
 * and proto/catalog.c's catalog_check() (run by the unit tests and at
 * start-up) that every listed tool has exactly one catalog entry.
 * Ids are positions in this list: within one build only, never on the wire
 * (MSG_CALL names the tool).
 */
#ifndef TABVISOR_TOOL_IDS_H
#define TABVISOR_TOOL_IDS_H

#define TOOL_LIST(S, W)                                                                            \
    S(browser_session_create)                                                                      \
    S(browser_session_close)                                                                       \
    S(browser_session_list)                                                                        \
    W(browser_navigate, tool_navigate)                                                             \
    W(browser_snapshot, tool_snapshot)                                                             \
    W(browser_find, tool_find)                                                                     \
    W(browser_click, tool_click)                                                                   \
    W(browser_type, tool_type)                                                                     \
    W(browser_evaluate, tool_evaluate)                                                             \
    W(browser_take_screenshot, tool_screenshot)                                                    \
    W(browser_handle_dialog, tool_handle_dialog)                                                   \
    W(browser_navigate_back, tool_navigate_back)                                                   \
    W(browser_navigate_forward, tool_navigate_forward)                                             \
    W(browser_reload, tool_reload)                                                                 \
    W(browser_press_key, tool_press_key)                                                           \
    W(browser_hover, tool_hover)                                                                   \
    W(browser_drag, tool_drag)                                                                     \
    W(browser_select_option, tool_select_option)                                                   \
    W(browser_fill_form, tool_fill_form)                                                           \
    W(browser_wait_for, tool_wait_for)                                                             \
    W(browser_resize, tool_resize)                                                                 \
    W(browser_console_messages, tool_console_messages)                                             \
    W(browser_network_requests, tool_network_requests)                                             \
    W(browser_network_request, tool_network_request)                                               \
    W(browser_emulate_media, tool_emulate_media)                                                   \
    W(browser_mouse_move_xy, tool_mouse_move_xy)                                                   \
    W(browser_mouse_click_xy, tool_mouse_click_xy)                                                 \
    W(browser_mouse_drag_xy, tool_mouse_drag_xy)                                                   \
    W(browser_mouse_down, tool_mouse_down)                                                         \
    W(browser_mouse_up, tool_mouse_up)                                                             \
    W(browser_mouse_wheel, tool_mouse_wheel)                                                       \
    W(browser_pdf_save, tool_pdf_save)                                                             \
    W(browser_verify_element_visible, tool_verify_element_visible)                                 \
    W(browser_verify_text_visible, tool_verify_text_visible)                                       \
    W(browser_verify_list_visible, tool_verify_list_visible)                                       \
    W(browser_verify_value, tool_verify_value)                                                     \
    W(browser_generate_locator, tool_generate_locator)                                             \
    W(browser_cdp, tool_cdp)                                                                       \
    W(browser_get_content, tool_get_content)                                                       \
    W(browser_file_upload, tool_file_upload)                                                       \
    W(browser_drop, tool_drop)                                                                     \
    W(browser_cookie_list, tool_cookie_list)                                                       \
    W(browser_cookie_get, tool_cookie_get)                                                         \
    W(browser_cookie_set, tool_cookie_set)                                                         \
    W(browser_cookie_delete, tool_cookie_delete)                                                   \
    W(browser_cookie_clear, tool_cookie_clear)                                                     \
    W(browser_localstorage_list, tool_localstorage_list)                                           \
    W(browser_localstorage_get, tool_localstorage_get)                                             \
    W(browser_localstorage_set, tool_localstorage_set)                                             \
    W(browser_localstorage_delete, tool_localstorage_delete)                                       \
    W(browser_localstorage_clear, tool_localstorage_clear)                                         \
    W(browser_sessionstorage_list, tool_sessionstorage_list)                                       \
    W(browser_sessionstorage_get, tool_sessionstorage_get)                                         \
    W(browser_sessionstorage_set, tool_sessionstorage_set)                                         \
    W(browser_sessionstorage_delete, tool_sessionstorage_delete)                                   \
    W(browser_sessionstorage_clear, tool_sessionstorage_clear)                                     \
    W(browser_storage_state, tool_storage_state)                                                   \
    W(browser_set_storage_state, tool_set_storage_state)                                           \
    W(browser_route, tool_route)                                                                   \
    W(browser_unroute, tool_unroute)                                                               \
    W(browser_route_list, tool_route_list)                                                         \
    W(browser_network_state_set, tool_network_state_set)                                           \
    W(browser_set_extra_http_headers, tool_set_extra_http_headers)                                 \
    W(browser_tabs, tool_tabs)                                                                     \
    W(browser_close, tool_close)                                                                   \
    W(browser_downloads, tool_downloads)

enum tool_id {
    TOOL_NONE, /* a catalog entry that forgot TOOL(...): catalog_check() fails */
#define TOOL_ID_S(name) TOOL_##name,
#define TOOL_ID_W(name, fn) TOOL_##name,
    TOOL_LIST(TOOL_ID_S, TOOL_ID_W)
#undef TOOL_ID_S
#undef TOOL_ID_W
        TOOL_COUNT
};

/* In a catalog entry: {TOOL(browser_click), .title = ...}. */
#define TOOL(tool) .id = TOOL_##tool, .name = #tool

#endif
