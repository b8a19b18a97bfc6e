/*  ufo_cmd_record.c - `ufo record --app NAME "WHAT I AM SHOWING" [--broker EP] [--config F]
    [--json]`: records a person doing a task in an application on the desktop (X RECORD for
    clicks and keys, AT-SPI to name the control under each click and the focused control for
    typing) until Ctrl-C (SIGINT or SIGTERM), then saves it on the broker as a demonstration
    (docs/KNOWLEDGE.md): the task and its steps by control name and action, in the
    original's action names (click_input, keyboard_input with pywinauto key syntax). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_xrecord.h"
#include <poll.h>
#include "ufo_cli.h"
#include "ufo_cli_session.h"

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

typedef struct {
    ufo_desktop_t *desk;
    const char *app;
    ufo_value_t *steps;         //  the demonstration's steps
    ufo_buf_t keys;             //  keys typed since the last step (pywinauto syntax)
    int64_t last_xid;           //  the app window of the last click
} s_rec_t;

//  Whether rectangle r ([left, top, right, bottom]) holds (x, y); *area_p gets its area.
static bool
s_holds (const ufo_value_t *r, int64_t x, int64_t y, int64_t *area_p)
{
    int64_t l = ufo_value_int (ufo_value_list_at (r, 0)), t = ufo_value_int (ufo_value_list_at (r, 1));
    int64_t rr = ufo_value_int (ufo_value_list_at (r, 2)), b = ufo_value_int (ufo_value_list_at (r, 3));
    *area_p = (rr - l) * (b - t);
    return x >= l && x < rr && y >= t && y < b;
}

//  The application's window that holds point (x, y) (the smallest one), else its first window.
static int64_t
s_window_at (s_rec_t *self, int64_t x, int64_t y, bool *inside_p)
{
    ufo_value_t *wins = ufo_desktop_windows (self->desk, NULL);
    int64_t best = 0, first = 0, best_area = INT64_MAX;
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (strcmp (ufo_value_map_str (w, "name", ""), self->app) != 0)
            continue;
        int64_t xid = ufo_value_map_int (w, "xid", 0);
        if (!first)
            first = xid;
        int64_t area;
        if (s_holds (ufo_value_map_get (w, "rect"), x, y, &area) && area < best_area) {
            best = xid;
            best_area = area;
        }
    }
    ufo_value_destroy (&wins);
    *inside_p = best != 0;
    return best ? best : first;
}

static ufo_value_t *
s_controls (s_rec_t *self, int64_t xid)
{
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (self->desk, xid, NULL);
    ufo_value_t *snap = ufo_desktop_op_run (self->desk, &op);
    ufo_value_t *controls = ufo_value_dup (ufo_value_map_get (snap, "controls"));
    ufo_value_destroy (&snap);
    return controls;
}

static void
s_step (s_rec_t *self, const ufo_value_t *control, const char *action, ufo_value_t **args_p)
{
    ufo_value_t *step = ufo_value_new_map ();
    ufo_value_map_set_str (step, "control", ufo_value_map_str (control, "control_text", ""));
    ufo_value_map_set_str (step, "control_type", ufo_value_map_str (control, "control_type", ""));
    ufo_value_map_set_str (step, "action", action);
    ufo_value_map_set (step, "args", args_p);
    fprintf (stderr, "  step %zu: %s on %s \"%s\"\n", ufo_value_size (self->steps) + 1, action,
             ufo_value_map_str (step, "control_type", ""), ufo_value_map_str (step, "control", ""));
    ufo_value_list_push (self->steps, &step);
}

//  The keys typed so far become one keyboard_input step on the focused control.
static void
s_flush_keys (s_rec_t *self)
{
    if (self->keys.len == 0)
        return;
    bool inside;
    int64_t xid = self->last_xid ? self->last_xid : s_window_at (self, -1, -1, &inside);
    ufo_value_t *controls = xid ? s_controls (self, xid) : NULL;
    const ufo_value_t *focused = NULL;
    for (size_t i = 0; i < ufo_value_size (controls) && !focused; i++) {
        const ufo_value_t *states = ufo_value_map_get (ufo_value_list_at (controls, i), "states");
        for (size_t k = 0; k < ufo_value_size (states); k++)
            if (strcmp (ufo_value_str (ufo_value_list_at (states, k)) ?: "", "focused") == 0)
                focused = ufo_value_list_at (controls, i);
    }
    ufo_value_t *args = ufo_value_new_map ();
    ufo_value_map_set_str (args, "keys", self->keys.data);
    s_step (self, focused, "keyboard_input", &args);
    ufo_value_destroy (&controls);
    ufo_buf_reset (&self->keys);
}

static void
s_click (s_rec_t *self, const ufo_value_t *event)
{
    s_flush_keys (self);
    int64_t x = ufo_value_map_int (event, "x", 0), y = ufo_value_map_int (event, "y", 0);
    bool inside = false;
    int64_t xid = s_window_at (self, x, y, &inside);
    if (!inside)
        return;                 //  a click elsewhere on the desktop is not part of the task
    self->last_xid = xid;
    ufo_value_t *controls = s_controls (self, xid);
    const ufo_value_t *hit = NULL;
    int64_t hit_area = INT64_MAX;
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        int64_t area;
        if (s_holds (ufo_value_map_get (c, "control_rect"), x, y, &area) && area < hit_area) {
            hit = c;
            hit_area = area;
        }
    }
    ufo_value_t *args = ufo_value_new_map ();
    int64_t button = ufo_value_map_int (event, "button", 1);
    ufo_value_map_set_str (args, "button", button == 3 ? "right" : button == 2 ? "middle" : "left");
    ufo_value_map_set_bool (args, "double", false);
    if (hit)
        s_step (self, hit, "click_input", &args);
    else
        ufo_value_destroy (&args);      //  no control there (a window border): nothing to name
    ufo_value_destroy (&controls);
}

//  A key event in pywinauto's type_keys syntax (what keyboard_input takes).
static void
s_key (s_rec_t *self, const ufo_value_t *event)
{
    const char *text = ufo_value_map_str (event, "text", NULL);
    if (text) {
        if (strlen (text) == 1 && strchr ("^%+#~(){}[]", text [0]))
            ufo_buf_printf (&self->keys, "{%s}", text);
        else
            ufo_buf_puts (&self->keys, text);
        return;
    }
    static const char *const names [][2] = {
        { "Return", "{ENTER}" }, { "KP_Enter", "{ENTER}" }, { "Tab", "{TAB}" },
        { "BackSpace", "{BACKSPACE}" }, { "Escape", "{ESC}" }, { "Delete", "{DELETE}" },
        { "Home", "{HOME}" }, { "End", "{END}" }, { "Left", "{LEFT}" }, { "Right", "{RIGHT}" },
        { "Up", "{UP}" }, { "Down", "{DOWN}" }, { "Prior", "{PGUP}" }, { "Next", "{PGDN}" },
        { "Insert", "{INSERT}" }, { "space", " " } };
    const char *key = ufo_value_map_str (event, "key", "");
    const char *written = NULL;
    char buf [32];
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names) && !written; i++)
        if (strcmp (key, names [i][0]) == 0)
            written = names [i][1];
    if (!written && key [0] == 'F' && isdigit ((unsigned char) key [1])) {
        snprintf (buf, sizeof buf, "{%s}", key);
        written = buf;
    }
    if (!written && strlen (key) == 1 && isalnum ((unsigned char) key [0])) {
        buf [0] = (char) tolower ((unsigned char) key [0]);
        buf [1] = 0;
        written = buf;
    }
    if (!written)
        return;                 //  a key without a name in the syntax
    if (ufo_value_map_bool (event, "ctrl", false))
        ufo_buf_putc (&self->keys, '^');
    if (ufo_value_map_bool (event, "alt", false))
        ufo_buf_putc (&self->keys, '%');
    ufo_buf_puts (&self->keys, written);
}

//  Records the input events the X RECORD connection has queued: clicks and keys.
static void
s_drain (s_rec_t *self, ufo_xrecord_t *xr)
{
    ufo_value_t *event;
    while ((event = ufo_xrecord_next (xr))) {
        if (strcmp (ufo_value_map_str (event, "type", ""), "click") == 0)
            s_click (self, event);
        else
            s_key (self, event);
        ufo_value_destroy (&event);
    }
}

static void
s_help (void)
{
    ufo_cli_usage (stdout, "record");
    printf ("\nRecords what you do in the application's windows until Ctrl-C, then saves it on\n"
            "the broker as a demonstration (RAG_DEMONSTRATION shows it to the AppAgent).\n"
            "Options:\n"
            "  --app NAME      the application (its windows' AT-SPI application name)\n"
            "  --broker EP     broker command endpoint (default: the one `ufo up` started)\n"
            "  --config FILE   configuration\n"
            "  --json          print the saved demonstration as JSON\n"
            "Exit status: 0 saved, 1 failed, 2 bad usage.\n");
}

int
ufo_cmd_record (int argc, char **argv)
{
    const char *app = NULL, *task = NULL, *broker = NULL, *config_path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            s_help ();
            return UFO_CLI_OK;
        }
        const char **slot = strcmp (arg, "--app") == 0 ? &app : strcmp (arg, "--broker") == 0 ? &broker
                          : strcmp (arg, "--config") == 0 ? &config_path : NULL;
        if (strcmp (arg, "--json") == 0)
            json = true;
        else
        if (slot) {
            if (i + 1 >= argc) {
                fprintf (stderr, "ufo record: %s needs a value\n", arg);
                return UFO_CLI_USAGE;
            }
            *slot = argv [++i];
        }
        else
        if (arg [0] == '-' || task) {
            fprintf (stderr, "ufo record: unexpected argument %s\n", arg);
            return UFO_CLI_USAGE;
        }
        else
            task = arg;
    }
    if (!app || !*app || !task || !*task) {
        ufo_cli_usage (stderr, "record");
        return UFO_CLI_USAGE;
    }
    ufo_error_t err = {0};
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo record: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_config_apply_log (config);
    char endpoint [512], log_root [PATH_MAX];
    ufo_bb_client_t *bb = NULL;
    s_rec_t rec = { .app = app, .steps = ufo_value_new_list () };
    ufo_xrecord_t *xr = NULL;
    int rc = UFO_CLI_FAIL;
    if (ufo_cli_broker (broker, config, endpoint, sizeof endpoint, log_root, sizeof log_root, &err) != 0
    ||  ufo_security_init (config, "client", &err) < 0
    ||  !(bb = ufo_bb_client_new (endpoint, NULL, &err))
    ||  !(rec.desk = ufo_desktop_new (NULL, &err))
    ||  !(xr = ufo_xrecord_new (NULL, &err))) {
        fprintf (stderr, "ufo record: %s\n", err.message);
        goto done;
    }
    ufo_bb_client_set_timeout (bb, 5000);
    bool inside;
    if (!s_window_at (&rec, -1, -1, &inside)) {
        fprintf (stderr, "ufo record: no window of '%s' on the desktop (start it first)\n", app);
        goto done;
    }
    signal (SIGINT, s_on_signal);
    signal (SIGTERM, s_on_signal);
    fprintf (stderr, "recording %s: \"%s\" - do the task, then press Ctrl-C\n", app, task);
    while (!s_stop) {
        struct pollfd fds [2] = { { .fd = ufo_xrecord_fd (xr), .events = POLLIN },
                                  { .fd = ufo_desktop_fd (rec.desk), .events = POLLIN } };
        poll (fds, fds [1].fd >= 0 ? 2 : 1, 100);
        ufo_desktop_pump (rec.desk);
        s_drain (&rec, xr);
    }
    s_drain (&rec, xr);                 //  the input up to the signal
    s_flush_keys (&rec);
    if (ufo_value_size (rec.steps) == 0) {
        fprintf (stderr, "ufo record: nothing was done in %s; no demonstration saved\n", app);
        goto done;
    }
    ufo_value_t *record = ufo_value_new_map ();
    ufo_value_map_set_str (record, "request", task);
    ufo_value_t *apps = ufo_value_new_list ();
    ufo_value_list_push_str (apps, app);
    ufo_value_map_set (record, "applications", &apps);
    ufo_value_t *subtask = ufo_value_new_map ();
    ufo_value_map_set_str (subtask, "subtask", task);
    ufo_value_map_set_str (subtask, "application", app);
    ufo_value_map_set (subtask, "steps", &rec.steps);
    ufo_value_t *subtasks = ufo_value_new_list ();
    ufo_value_list_push (subtasks, &subtask);
    ufo_value_map_set (record, "subtasks", &subtasks);
    ufo_value_map_set_str (record, "source", "recorded");
    char hostname [256] = "";
    gethostname (hostname, sizeof hostname - 1);
    ufo_value_map_set_str (record, "device", hostname);
    ufo_value_t *shown = ufo_value_dup (record);
    char id [64] = "";
    if (ufo_experience_save (bb, "demonstration", &record, id, &err) < 0)
        fprintf (stderr, "ufo record: not saved: %s\n", err.message);
    else {
        ufo_value_map_set_str (shown, "id", id);
        if (json) {
            char *text = ufo_json_dump (shown, UFO_JSON_COMPACT, NULL);
            printf ("%s\n", text);
            free (text);
        }
        else
            printf ("demonstration %s saved: %zu step(s)\n", id,
                    ufo_value_size (ufo_value_path (shown, "subtasks.0.steps")));
        rc = UFO_CLI_OK;
    }
    ufo_value_destroy (&shown);
done:
    ufo_value_destroy (&rec.steps);
    ufo_buf_free (&rec.keys);
    ufo_xrecord_destroy (&xr);
    ufo_desktop_destroy (&rec.desk);
    ufo_bb_client_destroy (&bb);
    ufo_config_destroy (&config);
    return rc;
}
