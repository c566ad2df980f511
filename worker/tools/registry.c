/* registry.c - worker-side dispatch: catalog name -> handler. A unit test
 * checks that every TOOL_WORKER entry of the catalog has one. */
#include <string.h>

#include "worker.h"

static const struct {
    const char *name;
    tool_fn fn;
} handlers[] = {
    {"browser_navigate", tool_navigate},
    {"browser_snapshot", tool_snapshot},
    {"browser_click", tool_click},
    {"browser_type", tool_type},
    {"browser_evaluate", tool_evaluate},
    {"browser_take_screenshot", tool_screenshot},
    {"browser_find", tool_find},
    {"browser_handle_dialog", tool_handle_dialog},
    {"browser_navigate_back", tool_navigate_back},
    {"browser_navigate_forward", tool_navigate_forward},
    {"browser_reload", tool_reload},
    {"browser_press_key", tool_press_key},
    {"browser_hover", tool_hover},
    {"browser_drag", tool_drag},
    {"browser_select_option", tool_select_option},
    {"browser_fill_form", tool_fill_form},
    {"browser_wait_for", tool_wait_for},
    {"browser_resize", tool_resize},
    {"browser_console_messages", tool_console_messages},
    {"browser_network_requests", tool_network_requests},
    {"browser_network_request", tool_network_request},
    {"browser_emulate_media", tool_emulate_media},
    {"browser_mouse_move_xy", tool_mouse_move_xy},
    {"browser_mouse_click_xy", tool_mouse_click_xy},
    {"browser_mouse_drag_xy", tool_mouse_drag_xy},
    {"browser_mouse_down", tool_mouse_down},
    {"browser_mouse_up", tool_mouse_up},
    {"browser_mouse_wheel", tool_mouse_wheel},
    {"browser_pdf_save", tool_pdf_save},
    {"browser_verify_element_visible", tool_verify_element_visible},
    {"browser_verify_text_visible", tool_verify_text_visible},
    {"browser_verify_list_visible", tool_verify_list_visible},
    {"browser_verify_value", tool_verify_value},
    {"browser_generate_locator", tool_generate_locator},
    {"browser_cdp", tool_cdp},
    {"browser_get_content", tool_get_content},
    {"browser_file_upload", tool_file_upload},
    {"browser_drop", tool_drop},
    {"browser_cookie_list", tool_cookie_list},
    {"browser_cookie_get", tool_cookie_get},
    {"browser_cookie_set", tool_cookie_set},
    {"browser_cookie_delete", tool_cookie_delete},
    {"browser_cookie_clear", tool_cookie_clear},
    {"browser_localstorage_list", tool_localstorage_list},
    {"browser_localstorage_get", tool_localstorage_get},
    {"browser_localstorage_set", tool_localstorage_set},
    {"browser_localstorage_delete", tool_localstorage_delete},
    {"browser_localstorage_clear", tool_localstorage_clear},
    {"browser_sessionstorage_list", tool_sessionstorage_list},
    {"browser_sessionstorage_get", tool_sessionstorage_get},
    {"browser_sessionstorage_set", tool_sessionstorage_set},
    {"browser_sessionstorage_delete", tool_sessionstorage_delete},
    {"browser_sessionstorage_clear", tool_sessionstorage_clear},
    {"browser_storage_state", tool_storage_state},
    {"browser_route", tool_route},
    {"browser_unroute", tool_unroute},
    {"browser_route_list", tool_route_list},
    {"browser_network_state_set", tool_network_state_set},
    {"browser_set_extra_http_headers", tool_set_extra_http_headers},
    {"browser_set_storage_state", tool_set_storage_state},
    {"browser_tabs", tool_tabs},
    {"browser_close", tool_close},
};

tool_fn tools_find(const char *name)
{
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (strcmp(handlers[i].name, name) == 0)
            return handlers[i].fn;
    return NULL;
}
