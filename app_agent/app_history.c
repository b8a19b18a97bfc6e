/*  app_history.c - the AppAgent's step history lines (see app_history.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "app_history.h"

#define S_ARGS_MAX      120     //  bytes of the arguments' JSON
#define S_RESULT_MAX    120     //  bytes of an action's result text
#define S_ERROR_MAX     240     //  bytes of an error (what the model must correct)
#define S_NAME_MAX      60      //  bytes of a control's name

//  Appends s cut to max bytes (on a character boundary, "..." when cut), on one line.
static void
s_put_cut (ufo_buf_t *buf, const char *s, size_t max)
{
    size_t len = strlen (s);
    size_t cut = ufo_utf8_prefix (s, len, max);
    for (size_t i = 0; i < cut; i++) {
        char c = s [i];
        ufo_buf_putc (buf, c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    }
    if (cut < len)
        ufo_buf_append (buf, "...", 3);
}

static void
s_line (ufo_buf_t *buf, const ufo_value_t *item, bool detailed)
{
    const ufo_value_t *action = ufo_value_map_get (item, "Action");
    const char *function = ufo_value_map_str (action, "function", "");
    ufo_buf_printf (buf, "Step %" PRId64 ": ", ufo_value_map_int (item, "Step", 0));
    if (!*function)
        ufo_buf_printf (buf, "no action");
    else {
        ufo_buf_printf (buf, "%s", function);
        const char *label = ufo_value_map_str (action, "control_label", "");
        if (*label) {
            ufo_buf_printf (buf, " on %s \"", ufo_value_map_str (action, "control_type", ""));
            s_put_cut (buf, ufo_value_map_str (action, "control_text", ""), S_NAME_MAX);
            ufo_buf_printf (buf, "\" (label %s)", label);
        }
        const ufo_value_t *args = ufo_value_map_get (action, "args");
        if (detailed && ufo_value_size (args) > 0) {
            char *json = ufo_json_dump (args, UFO_JSON_PY, NULL);
            ufo_buf_printf (buf, " ");
            s_put_cut (buf, json, S_ARGS_MAX);
            free (json);
        }
    }
    const char *confirm = ufo_value_map_str (item, "UserConfirm", "");
    if (*confirm)
        ufo_buf_printf (buf, " (user confirmation: %s)", confirm);
    const ufo_value_t *outcome = ufo_value_map_get (item, "Outcome");
    if (ufo_value_type (outcome) == UFO_TMAP) {
        if (ufo_value_map_bool (outcome, "success", false)) {
            const char *text = ufo_value_map_str (outcome, "text", "");
            ufo_buf_printf (buf, " -> done");
            if (detailed && *text) {
                ufo_buf_printf (buf, ": ");
                s_put_cut (buf, text, S_RESULT_MAX);
            }
        }
        else {
            ufo_buf_printf (buf, " -> FAILED: ");
            s_put_cut (buf, ufo_value_map_str (outcome, "error", "(no reason given)"),
                       detailed ? S_ERROR_MAX : S_ERROR_MAX / 3);
        }
    }
    const char *status = ufo_value_map_str (item, "Status", "");
    if (*status)
        ufo_buf_printf (buf, " [%s]", status);
}

ufo_value_t *
app_history_lines (const ufo_value_t *memory, size_t max_steps, size_t detailed)
{
    ufo_value_t *lines = ufo_value_new_list ();
    size_t total = 0;
    for (size_t i = 0; i < ufo_value_size (memory); i++)
        total += ufo_value_type (ufo_value_list_at (memory, i)) == UFO_TMAP;
    if (max_steps == 0 || total == 0)
        return lines;
    size_t shown = total <= max_steps ? total : max_steps - 1;
    if (shown < total)
        ufo_value_list_push (lines, &(ufo_value_t *) {
            ufo_value_new_stringf ("(%zu earlier steps not shown)", total - shown) });
    size_t seen = 0;
    ufo_buf_t buf;
    ufo_buf_init (&buf);
    for (size_t i = 0; i < ufo_value_size (memory); i++) {
        const ufo_value_t *item = ufo_value_list_at (memory, i);
        if (ufo_value_type (item) != UFO_TMAP)
            continue;
        if (seen++ < total - shown)
            continue;
        ufo_buf_reset (&buf);
        s_line (&buf, item, total - seen < detailed);
        ufo_value_list_push_str (lines, buf.data ? buf.data : "");
    }
    ufo_buf_free (&buf);
    return lines;
}
