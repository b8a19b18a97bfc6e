/*  report_fixture.c - a realistic session log directory for the report tests.
    The screenshots are drawn with cairo (which libufo links for the desktop layer). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "report_fixture.h"

#include <cairo.h>

#define S_INJECT "<script>document.body.setAttribute('data-pwned','1')</script>" \
                 "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">"

enum { S_CLEAN, S_ANNOTATED, S_SELECTED };

typedef struct {
    int label;
    const char *type;
    const char *name;
    double x, y, w, h;              //  in window pixels
    double r, g, b;                 //  annotation colour per control type
} s_control_t;

#define S_WIN_W 720
#define S_WIN_H 460

static const s_control_t s_controls [] = {
    { 1, "MenuItem", "File", 8, 34, 40, 22, 0.90, 0.50, 0.10 },
    { 2, "MenuItem", "Edit", 52, 34, 40, 22, 0.90, 0.50, 0.10 },
    { 3, "MenuItem", "Search", 96, 34, 56, 22, 0.90, 0.50, 0.10 },
    { 4, "MenuItem", "View", 156, 34, 44, 22, 0.90, 0.50, 0.10 },
    { 5, "MenuItem", "Document", 204, 34, 76, 22, 0.90, 0.50, 0.10 },
    { 6, "MenuItem", "Help", 284, 34, 42, 22, 0.90, 0.50, 0.10 },
    { 7, "Edit", "Text", 10, 64, 700, 360, 0.10, 0.65, 0.30 },
    { 8, "StatusBar", "Line 1, Column 1", 0, 432, 720, 28, 0.30, 0.45, 0.85 },
};
static const s_control_t s_dialog_controls [] = {
    { 12, "Button", "Replace", 390, 270, 96, 30, 0.80, 0.20, 0.60 },
    { 13, "Button", "Cancel", 500, 270, 80, 30, 0.80, 0.20, 0.60 },
};

static void
s_text (cairo_t *cr, double x, double y, double size, const char *text, bool mono)
{
    cairo_select_font_face (cr, mono ? "monospace" : "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                            CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size (cr, size);
    cairo_move_to (cr, x, y);
    cairo_show_text (cr, text);
}

static void
s_mark (cairo_t *cr, const s_control_t *c, int mode, int selected)
{
    if (mode == S_ANNOTATED) {
        cairo_set_source_rgb (cr, c->r, c->g, c->b);
        cairo_set_line_width (cr, 2);
        cairo_rectangle (cr, c->x, c->y, c->w, c->h);
        cairo_stroke (cr);
        char num [8];
        snprintf (num, sizeof num, "%d", c->label);
        cairo_rectangle (cr, c->x, c->y, 8 + 8 * (double) strlen (num), 16);
        cairo_fill (cr);
        cairo_set_source_rgb (cr, 1, 1, 1);
        s_text (cr, c->x + 4, c->y + 12, 12, num, false);
    }
    else
    if (mode == S_SELECTED && c->label == selected) {
        cairo_set_source_rgba (cr, 0.9, 0.1, 0.1, 0.15);
        cairo_rectangle (cr, c->x, c->y, c->w, c->h);
        cairo_fill (cr);
        cairo_set_source_rgb (cr, 0.9, 0.1, 0.1);
        cairo_set_line_width (cr, 4);
        cairo_rectangle (cr, c->x - 2, c->y - 2, c->w + 4, c->h + 4);
        cairo_stroke (cr);
    }
}

//  A Mousepad-like window with the given text, optionally a "Replace file?" dialog.
static void
s_draw_window (cairo_t *cr, const char *title, const char *const *lines, bool dialog,
               int mode, int selected)
{
    cairo_set_source_rgb (cr, 0.95, 0.95, 0.95);
    cairo_paint (cr);
    cairo_set_source_rgb (cr, 0.18, 0.18, 0.20);
    cairo_rectangle (cr, 0, 0, S_WIN_W, 30);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 1, 1, 1);
    s_text (cr, 260, 20, 14, title, false);
    cairo_set_source_rgb (cr, 0.85, 0.3, 0.3);
    cairo_arc (cr, S_WIN_W - 18, 15, 7, 0, 2 * M_PI);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.91, 0.91, 0.91);
    cairo_rectangle (cr, 0, 30, S_WIN_W, 30);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
    for (size_t i = 0; i < 6; i++)
        s_text (cr, s_controls [i].x + 4, 50, 13, s_controls [i].name, false);
    cairo_set_source_rgb (cr, 1, 1, 1);
    cairo_rectangle (cr, 10, 64, 700, 360);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.75, 0.75, 0.75);
    cairo_set_line_width (cr, 1);
    cairo_rectangle (cr, 10.5, 64.5, 699, 359);
    cairo_stroke (cr);
    cairo_set_source_rgb (cr, 0.12, 0.12, 0.12);
    for (size_t i = 0; lines && lines [i]; i++)
        s_text (cr, 18, 86 + 20 * (double) i, 15, lines [i], true);
    cairo_set_source_rgb (cr, 0.88, 0.88, 0.88);
    cairo_rectangle (cr, 0, 432, S_WIN_W, 28);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.3, 0.3, 0.3);
    s_text (cr, 10, 451, 12, "Line 1, Column 1    UTF-8    Tab size: 4", false);
    if (dialog) {
        cairo_set_source_rgba (cr, 0, 0, 0, 0.25);
        cairo_paint (cr);
        cairo_set_source_rgb (cr, 0.98, 0.98, 0.98);
        cairo_rectangle (cr, 140, 150, 460, 170);
        cairo_fill (cr);
        cairo_set_source_rgb (cr, 0.1, 0.1, 0.1);
        s_text (cr, 160, 190, 16, "A file named \"list.txt\" already exists.", false);
        s_text (cr, 160, 215, 13, "Do you want to replace it?", false);
        for (size_t i = 0; i < 2; i++) {
            const s_control_t *c = &s_dialog_controls [i];
            cairo_set_source_rgb (cr, i == 0 ? 0.85 : 0.9, i == 0 ? 0.3 : 0.9, i == 0 ? 0.3 : 0.9);
            cairo_rectangle (cr, c->x, c->y, c->w, c->h);
            cairo_fill (cr);
            cairo_set_source_rgb (cr, i == 0 ? 1 : 0.1, i == 0 ? 1 : 0.1, i == 0 ? 1 : 0.1);
            s_text (cr, c->x + 14, c->y + 20, 14, c->name, false);
        }
    }
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_controls); i++)
        s_mark (cr, &s_controls [i], mode, selected);
    for (size_t i = 0; dialog && i < UFO_ARRAY_SIZE (s_dialog_controls); i++)
        s_mark (cr, &s_dialog_controls [i], mode, selected);
}

static int
s_save (cairo_surface_t *surface, const char *dir, const char *name)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    int rc = cairo_surface_write_to_png (surface, path) == CAIRO_STATUS_SUCCESS ? 0 : -1;
    cairo_surface_destroy (surface);
    return rc;
}

static int
s_window_png (const char *dir, const char *name, const char *const *lines, bool dialog,
              int mode, int selected)
{
    cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, S_WIN_W, S_WIN_H);
    cairo_t *cr = cairo_create (surface);
    s_draw_window (cr, "list.txt - Mousepad", lines, dialog, mode, selected);
    cairo_destroy (cr);
    return s_save (surface, dir, name);
}

//  The desktop: wallpaper, top panel, and (optionally) the Mousepad window.
static cairo_surface_t *
s_desktop_surface (const char *const *lines, bool with_window)
{
    cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 960, 600);
    cairo_t *cr = cairo_create (surface);
    cairo_pattern_t *sky = cairo_pattern_create_linear (0, 0, 960, 600);
    cairo_pattern_add_color_stop_rgb (sky, 0, 0.16, 0.32, 0.55);
    cairo_pattern_add_color_stop_rgb (sky, 1, 0.45, 0.25, 0.55);
    cairo_set_source (cr, sky);
    cairo_paint (cr);
    cairo_pattern_destroy (sky);
    cairo_set_source_rgb (cr, 0.08, 0.08, 0.1);
    cairo_rectangle (cr, 0, 0, 960, 26);
    cairo_fill (cr);
    cairo_set_source_rgb (cr, 0.95, 0.95, 0.95);
    s_text (cr, 10, 18, 13, "Activities", false);
    s_text (cr, 450, 18, 13, "Sat 06:12", false);
    if (with_window) {
        cairo_save (cr);
        cairo_translate (cr, 140, 70);
        cairo_scale (cr, 0.95, 0.95);
        cairo_rectangle (cr, 0, 0, S_WIN_W, S_WIN_H);
        cairo_clip (cr);
        s_draw_window (cr, "list.txt - Mousepad", lines, false, S_CLEAN, 0);
        cairo_restore (cr);
    }
    else {
        cairo_set_source_rgb (cr, 0.12, 0.12, 0.12);
        cairo_rectangle (cr, 80, 90, 520, 300);
        cairo_fill (cr);
        cairo_set_source_rgb (cr, 0.4, 0.9, 0.4);
        s_text (cr, 96, 120, 14, "$ ufo run --task shopping-list", true);
    }
    cairo_destroy (cr);
    return surface;
}

static cairo_status_t
s_png_to_buf (void *closure, const unsigned char *data, unsigned int length)
{
    ufo_buf_append (closure, data, length);
    return CAIRO_STATUS_SUCCESS;
}

static void
s_base64 (ufo_buf_t *out, const unsigned char *in, size_t len)
{
    static const char a [] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t) in [i] << 16 | (i + 1 < len ? (uint32_t) in [i + 1] << 8 : 0)
                   | (i + 2 < len ? in [i + 2] : 0);
        ufo_buf_putc (out, a [v >> 18]);
        ufo_buf_putc (out, a [(v >> 12) & 63]);
        ufo_buf_putc (out, i + 1 < len ? a [(v >> 6) & 63] : '=');
        ufo_buf_putc (out, i + 2 < len ? a [v & 63] : '=');
    }
}

//  --- log lines ------------------------------------------------------------------------

static ufo_value_t *
s_step (int step, int round, int round_step, bool app, const char *subtask, int sub_index,
        const char *request, const char *status, double total, double cost)
{
    ufo_value_t *s = ufo_value_new_map ();
    ufo_value_map_set_int (s, "Step", step);
    ufo_value_map_set_int (s, "RoundStep", round_step);
    ufo_value_map_set_int (s, "AgentStep", round_step);
    ufo_value_map_set_int (s, "Round", round);
    ufo_value_map_set_str (s, "Subtask", subtask);
    ufo_value_map_set_int (s, "SubtaskIndex", sub_index);
    ufo_value_map_set_str (s, "Agent", app ? "AppAgent" : "HostAgent");
    ufo_value_map_set_str (s, "AgentName", app ? "AppAgent/mousepad" : "HostAgent");
    ufo_value_map_set_str (s, "Application", "mousepad");
    ufo_value_map_set_str (s, "Request", request);
    ufo_value_map_set_str (s, "Status", status);
    ufo_value_map_set_float (s, "Cost", cost);
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", 2400 + 37 * step);
    ufo_value_map_set_int (tokens, "completion", 120 + 9 * step);
    ufo_value_map_set (s, "Tokens", &tokens);
    ufo_value_t *times = ufo_value_new_map ();
    ufo_value_map_set_float (times, "screenshot", 0.12);
    ufo_value_map_set_float (times, "control_info", app ? 0.31 : 0.05);
    ufo_value_map_set_float (times, "llm", total - 0.6);
    ufo_value_map_set_float (times, "action", 0.1);
    ufo_value_map_set_float (times, "total", total);
    ufo_value_map_set (s, "time_cost", &times);
    ufo_value_map_set_str (s, "Timestamp", "2026-11-21T06:12:00Z");
    ufo_value_map_set_str (s, "error", "");
    ufo_value_map_set_str (s, "UserConfirm", "");
    return s;
}

static void
s_action (ufo_value_t *s, const char *fn, ufo_value_t **args_p, const char *label,
          const char *text, const char *type, const char *result, const s_control_t *control)
{
    ufo_value_map_set_str (s, "Function", fn);
    ufo_value_map_set_str (s, "FunctionCall", fn);
    ufo_value_map_set_str (s, "ControlLabel", label);
    ufo_value_map_set_str (s, "ControlText", text);
    ufo_value_t *action = ufo_value_new_map ();
    ufo_value_map_set_str (action, "function", fn);
    ufo_value_map_set_copy (action, "args", *args_p);
    ufo_value_map_set_str (action, "control_label", label);
    ufo_value_map_set_str (action, "control_text", text);
    ufo_value_map_set_str (action, "control_type", type);
    ufo_value_map_set (s, "Action", &action);
    ufo_value_map_set (s, "Args", args_p);
    ufo_value_map_set_str (s, "ActionType", "UIControl");
    ufo_value_t *log = ufo_value_new_map ();
    if (control) {
        ufo_value_map_set_str (log, "label", label);
        ufo_value_map_set_str (log, "type", type);
        ufo_value_map_set_str (log, "name", text);
        ufo_value_t *rect = ufo_value_new_list ();
        ufo_value_list_push_int (rect, (int64_t) control->x);
        ufo_value_list_push_int (rect, (int64_t) control->y);
        ufo_value_list_push_int (rect, (int64_t) (control->x + control->w));
        ufo_value_list_push_int (rect, (int64_t) (control->y + control->h));
        ufo_value_map_set (log, "rect", &rect);
    }
    ufo_value_map_set (s, "ControlLog", &log);
    if (result) {
        ufo_value_t *list = ufo_value_new_list ();
        ufo_value_t *r = ufo_value_new_map ();
        ufo_value_map_set_bool (r, "success", true);
        ufo_value_map_set_str (r, "result", result);
        ufo_value_map_set_str (r, "error", "");
        ufo_value_list_push (list, &r);
        ufo_value_map_set (s, "ActionSuccess", &list);
        ufo_value_map_set_str (s, "Results", result);
    }
}

static void
s_shots (ufo_value_t *s, int step, bool annotated, bool selected)
{
    char name [64];
    snprintf (name, sizeof name, "action_step%d.png", step);
    ufo_value_map_set_str (s, "ScreenshotPath", name);
    snprintf (name, sizeof name, "action_step%d_annotated.png", step);
    ufo_value_map_set_str (s, "AnnotatedScreenshotPath", annotated ? name : "");
    snprintf (name, sizeof name, "action_step%d_selected_controls.png", step);
    ufo_value_map_set_str (s, "SelectedControlScreenshotPath", selected ? name : "");
}

static int
s_write_line (FILE *file, ufo_value_t **value_p)
{
    char *json = ufo_json_dump (*value_p, UFO_JSON_PY, NULL);
    int rc = fprintf (file, "%s\n", json) < 0 ? -1 : 0;
    free (json);
    ufo_value_destroy (value_p);
    return rc;
}

static ufo_value_t *
s_strings (const char *const *items)
{
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; items [i]; i++)
        ufo_value_list_push_str (list, items [i]);
    return list;
}

static int
s_write_json (const char *dir, const char *name, const char *text)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    int rc = fputs (text, file) < 0 ? -1 : 0;
    return fclose (file) == 0 ? rc : -1;
}

//  --- the session ---------------------------------------------------------------------

static const char *s_req0 = "Open Mousepad, write a shopping list (milk, eggs, bread) and save it as list.txt";
static const char *s_req1 = "Count the words in the list and tell me.";
static const char *s_sub0 = "Type the shopping list into Mousepad and save it as list.txt";
static const char *s_sub1 = "Read the text in Mousepad and count its words";

static int
s_images (const char *dir)
{
    static const char *const empty [] = { NULL };
    static const char *const typed [] = { "milk", "eggs", "bread", NULL };
    int rc = 0;
    //  HostAgent desktops: 0 before Mousepad runs, then with its window.
    rc |= s_save (s_desktop_surface (empty, false), dir, "desktop_step0.png");
    rc |= s_save (s_desktop_surface (empty, true), dir, "desktop_step1.png");
    rc |= s_save (s_desktop_surface (typed, true), dir, "desktop_step6.png");
    rc |= s_save (s_desktop_surface (typed, true), dir, "desktop_step7.png");
    rc |= s_save (s_desktop_surface (typed, true), dir, "desktop_step10.png");
    //  AppAgent steps: clean, annotated, selected control.
    struct { int step; const char *const *lines; bool dialog; int selected; bool ann, sel; } app [] = {
        { 2, empty, false, 7, true, true }, { 3, typed, false, 0, true, false },
        { 4, typed, false, 7, true, true }, { 5, typed, true, 12, true, true },
        { 8, typed, false, 7, true, true }, { 9, typed, false, 0, false, false },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (app); i++) {
        char name [64];
        snprintf (name, sizeof name, "action_step%d.png", app [i].step);
        rc |= s_window_png (dir, name, app [i].lines, app [i].dialog, S_CLEAN, 0);
        if (app [i].ann) {
            snprintf (name, sizeof name, "action_step%d_annotated.png", app [i].step);
            rc |= s_window_png (dir, name, app [i].lines, app [i].dialog, S_ANNOTATED, 0);
        }
        if (app [i].sel) {
            snprintf (name, sizeof name, "action_step%d_selected_controls.png", app [i].step);
            rc |= s_window_png (dir, name, app [i].lines, app [i].dialog, S_SELECTED,
                                app [i].selected);
        }
    }
    rc |= s_window_png (dir, "action_round_0_final.png", typed, false, S_CLEAN, 0);
    rc |= s_window_png (dir, "action_round_1_final.png", typed, false, S_CLEAN, 0);
    return rc ? -1 : 0;
}

static int
s_response_log (const char *dir)
{
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/response.log", dir);
    FILE *f = fopen (path, "w");
    if (!f)
        return -1;
    int rc = 0;
    ufo_value_t *s, *args;

    //  Round 0, step 0: the HostAgent launches Mousepad.
    s = s_step (0, 0, 0, false, "", -1, s_req0, "CONTINUE", 3.4, 0.0071);
    ufo_value_map_set_str (s, "Observation", "The desktop shows a terminal; no Mousepad window is open.");
    ufo_value_map_set_str (s, "Thought", "Mousepad is not running, so I launch it first.");
    ufo_value_map_set_str (s, "Bash", "mousepad");
    ufo_value_map_set_str (s, "CurrentSubtask", "Open Mousepad");
    ufo_value_map_set_str (s, "ActionType", "Bash");
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step0.png");
    args = s_strings ((const char *const []) { "Launch Mousepad", s_sub0, NULL });
    ufo_value_map_set (s, "Plan", &args);
    rc |= s_write_line (f, &s);

    //  Step 1: the HostAgent assigns the subtask to Mousepad.
    s = s_step (1, 0, 1, false, "", -1, s_req0, "ASSIGN", 2.9, 0.0068);
    ufo_value_map_set_str (s, "Observation", "Mousepad is open with an empty document, label 1.");
    ufo_value_map_set_str (s, "Thought", "Hand the typing and saving to the Mousepad agent.");
    ufo_value_map_set_str (s, "ControlLabel", "1");
    ufo_value_map_set_str (s, "ControlText", "list.txt - Mousepad");
    ufo_value_map_set_str (s, "CurrentSubtask", s_sub0);
    args = s_strings ((const char *const []) { "Type one item per line", "Save with Ctrl+S", NULL });
    ufo_value_map_set (s, "Message", &args);
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step1.png");
    rc |= s_write_line (f, &s);

    //  Step 2: the AppAgent types the list. Its Thought tries to inject script.
    s = s_step (2, 0, 2, true, s_sub0, 0, s_req0, "CONTINUE", 4.2, 0.0123);
    ufo_value_map_set_str (s, "Observation", "An empty text area, control 7.");
    ufo_value_map_set_str (s, "Thought", "I type the three items. " S_INJECT " Then save.");
    args = ufo_value_new_map ();
    ufo_value_map_set_str (args, "text", "milk\neggs\nbread");
    ufo_value_map_set_bool (args, "clear_current_text", true);
    s_action (s, "set_edit_text", &args, "7", "Text", "Edit", "", &s_controls [6]);
    args = s_strings ((const char *const []) { "Save the file as list.txt", NULL });
    ufo_value_map_set (s, "Plan", &args);
    s_shots (s, 2, true, true);
    rc |= s_write_line (f, &s);

    //  Step 3: PENDING, a question and its answer.
    s = s_step (3, 0, 3, true, s_sub0, 0, s_req0, "PENDING", 2.1, 0.0054);
    ufo_value_map_set_str (s, "Observation", "The list is typed.");
    ufo_value_map_set_str (s, "Thought", "The request does not say where to save the file.");
    args = ufo_value_new_map ();
    s_action (s, "", &args, "", "", "", NULL, NULL);
    args = s_strings ((const char *const []) { "Which folder should list.txt be saved in? <b>bold?</b>", NULL });
    ufo_value_map_set (s, "Questions", &args);
    args = s_strings ((const char *const []) { "Documents", NULL });
    ufo_value_map_set (s, "Answers", &args);
    s_shots (s, 3, true, false);
    rc |= s_write_line (f, &s);

    //  Step 4: save with Ctrl+S.
    s = s_step (4, 0, 4, true, s_sub0, 0, s_req0, "CONTINUE", 3.3, 0.0101);
    ufo_value_map_set_str (s, "Thought", "Save with the keyboard shortcut.");
    args = ufo_value_new_map ();
    ufo_value_map_set_str (args, "keys", "^s");
    ufo_value_map_set_bool (args, "control_focus", true);
    s_action (s, "keyboard_input", &args, "7", "Text", "Edit", "", &s_controls [6]);
    s_shots (s, 4, true, true);
    rc |= s_write_line (f, &s);

    //  Step 5: CONFIRM before replacing an existing file; the user refuses.
    s = s_step (5, 0, 5, true, s_sub0, 0, s_req0, "CONFIRM", 2.7, 0.0088);
    ufo_value_map_set_str (s, "Observation", "A dialog asks whether to replace the existing list.txt.");
    ufo_value_map_set_str (s, "Thought", "Replacing a file is irreversible, so I ask first.");
    args = ufo_value_new_map ();
    ufo_value_map_set_str (args, "button", "left");
    ufo_value_map_set_bool (args, "double", false);
    s_action (s, "click_input", &args, "12", "Replace", "Button", NULL, &s_dialog_controls [0]);
    ufo_value_map_set_str (s, "UserConfirm", "no");
    ufo_value_map_set_str (s, "Results", "The user refused; the action was not run.");
    s_shots (s, 5, true, true);
    rc |= s_write_line (f, &s);

    //  Step 6: the HostAgent ends the round.
    s = s_step (6, 0, 6, false, "", 0, s_req0, "FINISH", 2.2, 0.0061);
    ufo_value_map_set_str (s, "Observation", "Mousepad shows the list; the save was refused by the user.");
    ufo_value_map_set_str (s, "Thought", "Nothing more can be done without replacing the file.");
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step6.png");
    ufo_value_map_set_str (s, "Comment", "The list was typed but not saved: the user refused to replace list.txt.");
    rc |= s_write_line (f, &s);

    //  Round 1.
    s = s_step (7, 1, 0, false, "", -1, s_req1, "ASSIGN", 2.5, 0.0064);
    ufo_value_map_set_str (s, "Observation", "Mousepad still shows the list.");
    ufo_value_map_set_str (s, "Thought", "Ask the Mousepad agent to read the text.");
    ufo_value_map_set_str (s, "ControlLabel", "1");
    ufo_value_map_set_str (s, "ControlText", "list.txt - Mousepad");
    ufo_value_map_set_str (s, "CurrentSubtask", s_sub1);
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step7.png");
    rc |= s_write_line (f, &s);

    s = s_step (8, 1, 1, true, s_sub1, 0, s_req1, "CONTINUE", 1.9, 0.0049);
    ufo_value_map_set_str (s, "Thought", "Read the text of the edit control.");
    args = ufo_value_new_map ();
    s_action (s, "texts", &args, "7", "Text", "Edit", "milk\neggs\nbread", &s_controls [6]);
    s_shots (s, 8, true, true);
    rc |= s_write_line (f, &s);

    s = s_step (9, 1, 2, true, s_sub1, 0, s_req1, "FINISH", 1.6, 0.0041);
    ufo_value_map_set_str (s, "Thought", "Three lines, one word each.");
    args = ufo_value_new_map ();
    ufo_value_map_set_str (args, "text", "The list has 3 words: milk, eggs, bread.");
    s_action (s, "summary", &args, "", "", "", "The list has 3 words: milk, eggs, bread.", NULL);
    s_shots (s, 9, false, false);
    rc |= s_write_line (f, &s);

    s = s_step (10, 1, 3, false, "", 0, s_req1, "FINISH", 1.8, 0.0052);
    ufo_value_map_set_str (s, "Thought", "The count was reported; the round is complete.");
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step10.png");
    rc |= s_write_line (f, &s);
    return (fclose (f) == 0 && rc == 0) ? 0 : -1;
}

static int
s_evaluation_log (const char *dir)
{
    const char *text =
        "{\"level\": \"round\", \"Round\": 0, \"request\": \"Open Mousepad, write a shopping list\", "
        "\"reason\": \"The list was typed but the file was not saved: the user refused to replace it.\", "
        "\"sub_scores\": {\"shopping list typed\": \"yes\", \"file saved as list.txt\": \"no\"}, "
        "\"complete\": \"no\", \"screenshots\": \"first_last\", \"Cost\": 0.011}\n"
        "{\"level\": \"round\", \"Round\": 1, \"request\": \"Count the words\", "
        "\"reason\": \"The agent reported 3 words, which matches the text.\", "
        "\"sub_scores\": {\"words counted\": \"yes\"}, \"complete\": \"yes\", "
        "\"screenshots\": \"first_last\", \"Cost\": 0.009}\n"
        "{\"level\": \"session\", \"request\": \"both rounds\", "
        "\"reason\": \"Round 1 succeeded; round 0 did not save the file. <script>document.body."
        "setAttribute('data-pwned','3')</script>\", "
        "\"sub_scores\": {\"shopping list typed\": \"yes\", \"file saved as list.txt\": \"no\", "
        "\"word count reported\": \"yes\", \"old list.txt left intact\": \"unsure\"}, "
        "\"complete\": \"no\", \"screenshots\": \"all\", \"Cost\": 0.021}\n";
    return s_write_json (dir, "evaluation.log", text);
}

static int
s_blackboard (const char *dir)
{
    cairo_surface_t *small = cairo_image_surface_create (CAIRO_FORMAT_RGB24, 180, 115);
    cairo_t *cr = cairo_create (small);
    cairo_scale (cr, 0.25, 0.25);
    s_draw_window (cr, "list.txt - Mousepad", (const char *const []) { "milk", "eggs", "bread", NULL },
                   false, S_CLEAN, 0);
    cairo_destroy (cr);
    ufo_buf_t png = {0};
    cairo_surface_write_to_png_stream (small, s_png_to_buf, &png);
    cairo_surface_destroy (small);
    ufo_buf_t url = {0};
    ufo_buf_puts (&url, "data:image/png;base64,");
    s_base64 (&url, (const unsigned char *) png.data, png.len);
    ufo_buf_free (&png);

    ufo_value_t *bb = ufo_value_new_map ();
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "question", "Which folder should list.txt be saved in?");
    ufo_value_map_set_str (item, "answer", "Documents");
    ufo_value_list_push (list, &item);
    ufo_value_map_set (bb, "questions", &list);
    list = ufo_value_new_list ();
    item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "request_0", s_req0);
    ufo_value_list_push (list, &item);
    item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "request_1", s_req1);
    ufo_value_list_push (list, &item);
    ufo_value_map_set (bb, "requests", &list);
    list = ufo_value_new_list ();
    item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "subtask", s_sub0);
    ufo_value_map_set_str (item, "status", "FINISH");
    ufo_value_map_set_str (item, "comment", "typed; save refused " S_INJECT);
    ufo_value_list_push (list, &item);
    ufo_value_map_set (bb, "trajectories", &list);
    list = ufo_value_new_list ();
    item = ufo_value_new_map ();
    ufo_value_map_set_str (item, "image_path", "action_round_0_final.png");
    ufo_value_map_set_str (item, "image_str", url.data);
    ufo_value_t *meta = ufo_value_new_map ();
    ufo_value_map_set_str (meta, "subtask", s_sub0);
    ufo_value_map_set (item, "metadata", &meta);
    ufo_value_list_push (list, &item);
    ufo_value_map_set (bb, "screenshots", &list);
    ufo_buf_free (&url);
    char *json = ufo_json_dump (bb, UFO_JSON_PRETTY, NULL);
    int rc = s_write_json (dir, "blackboard.json", json);
    free (json);
    ufo_value_destroy (&bb);
    return rc;
}

int
report_fixture_make (const char *dir, report_fixture_t *info)
{
    int rc = 0;
    rc |= s_write_json (dir, "request.json",
        "{\"task\": \"shopping-list <i>demo</i>\", \"session\": \"s-20261121-0612\", "
        "\"device\": \"xvfb-99\", \"started\": \"2026-11-21T06:12:00Z\", \"requests\": ["
        "\"Open Mousepad, write a shopping list (milk, eggs, bread) and save it as list.txt\", "
        "\"Count the words in the list and tell me.\"], \"mode\": \"normal\", "
        "\"llm\": {\"mode\": \"scripted\", \"endpoint\": \"http://127.0.0.1:18080/v1\"}}\n");
    rc |= s_write_json (dir, "session.json",
        "{\"task\": \"shopping-list <i>demo</i>\", \"session\": \"s-20261121-0612\", "
        "\"status\": \"FINISH\", \"rounds\": 2, \"steps\": 11, \"started\": \"2026-11-21T06:12:00Z\", "
        "\"ended\": \"2026-11-21T06:12:31Z\", \"duration_s\": 30.6, \"cost\": {\"total\": 0.1123, "
        "\"prompt_tokens\": 28435, \"completion_tokens\": 1815}, \"evaluation\": null}\n");
    rc |= s_response_log (dir);
    rc |= s_evaluation_log (dir);
    rc |= s_blackboard (dir);
    rc |= s_images (dir);
    if (info) {
        info->steps = 11;
        info->rounds = 2;
        //  5 desktops + 10 window shots (2 each for steps 2, 4, 5, 8; 1 for 3 and 9)
        //  + 2 round finals + 1 blackboard image
        info->images = 18;
        info->score_yes = 4;
        info->score_no = 2;
        info->score_unsure = 1;
        info->verdict = "no";
    }
    return rc ? -1 : 0;
}
