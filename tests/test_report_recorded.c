/*  test_report_recorded.c - the report of a real recorded session. A real Mousepad on a
    private virtual display is driven through the desktop layer the way the agents will
    drive it: window list, control snapshots, window and screen captures, annotation of
    the offered controls, highlight of the chosen one, real actions (set_edit_text, texts,
    summary). Only the model's words are scripted, since no model runs here. The session
    is logged as docs/LOGS.md says, `ufo report` writes the page, and headless Chromium
    must show every step and load every real screenshot. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "desktop_fixture.h"
#include "report_browser.h"

#define WAIT_MS 60000

static char s_logdir [2048];
static FILE *s_response;
static int s_images;                //  images written that the page must show

static int
s_save (const ufo_image_t *image, const char *name)
{
    char path [4096];
    snprintf (path, sizeof path, "%s/%s", s_logdir, name);
    ufo_error_t err;
    if (!image || ufo_image_save_png (image, path, 1, &err) != 0)
        return -1;
    s_images++;
    return 0;
}

static ufo_value_t *
s_step_new (int step, bool app, const char *status, const char *subtask, const char *thought)
{
    ufo_value_t *s = ufo_value_new_map ();
    ufo_value_map_set_int (s, "Step", step);
    ufo_value_map_set_int (s, "RoundStep", step);
    ufo_value_map_set_int (s, "Round", 0);
    ufo_value_map_set_str (s, "Agent", app ? "AppAgent" : "HostAgent");
    ufo_value_map_set_str (s, "AgentName", app ? "AppAgent/mousepad" : "HostAgent");
    ufo_value_map_set_str (s, "Subtask", subtask);
    ufo_value_map_set_int (s, "SubtaskIndex", app ? 0 : -1);
    ufo_value_map_set_str (s, "Request", "Write a shopping list in Mousepad");
    ufo_value_map_set_str (s, "Application", "mousepad");
    ufo_value_map_set_str (s, "Status", status);
    ufo_value_map_set_str (s, "Thought", thought);
    ufo_value_map_set_float (s, "Cost", 0.0);
    return s;
}

//  Adds the action and its outcome (the desktop layer's result map) to a step.
static void
s_step_action (ufo_value_t *s, const char *fn, const char *args_json, const ufo_value_t *control,
               const ufo_value_t *result)
{
    ufo_value_t *args = ufo_json_parse_str (args_json ? args_json : "{}", NULL);
    ufo_value_t *action = ufo_value_new_map ();
    ufo_value_map_set_str (action, "function", fn);
    ufo_value_map_set_copy (action, "args", args);
    ufo_value_map_set_str (action, "control_label", ufo_value_map_str (control, "label", ""));
    ufo_value_map_set_str (action, "control_text", ufo_value_map_str (control, "control_text", ""));
    ufo_value_map_set_str (action, "control_type", ufo_value_map_str (control, "control_type", ""));
    ufo_value_map_set (s, "Action", &action);
    ufo_value_map_set (s, "Args", &args);
    ufo_value_map_set_str (s, "Function", fn);
    ufo_value_map_set_str (s, "FunctionCall", fn);
    ufo_value_map_set_str (s, "ActionType", "UIControl");
    ufo_value_map_set_str (s, "ControlLabel", ufo_value_map_str (control, "label", ""));
    ufo_value_map_set_str (s, "ControlText", ufo_value_map_str (control, "control_text", ""));
    ufo_value_t *log = ufo_value_new_map ();
    if (control) {
        ufo_value_map_set_str (log, "label", ufo_value_map_str (control, "label", ""));
        ufo_value_map_set_str (log, "type", ufo_value_map_str (control, "control_type", ""));
        ufo_value_map_set_str (log, "name", ufo_value_map_str (control, "control_text", ""));
        ufo_value_map_set_copy (log, "rect", ufo_value_map_get (control, "control_rect"));
    }
    ufo_value_map_set (s, "ControlLog", &log);
    ufo_value_t *outcome = ufo_value_new_map ();
    ufo_value_map_set_bool (outcome, "success", ufo_value_map_bool (result, "success", false));
    ufo_value_map_set_str (outcome, "result", ufo_value_map_str (result, "text", ""));
    ufo_value_map_set_str (outcome, "error", ufo_value_map_str (result, "error", ""));
    ufo_value_t *list = ufo_value_new_list ();
    ufo_value_list_push (list, &outcome);
    ufo_value_map_set (s, "ActionSuccess", &list);
    ufo_value_map_set_str (s, "Results", ufo_value_map_str (result, "text", ""));
}

static void
s_step_write (ufo_value_t **s_p, int64_t started_ms)
{
    ufo_value_t *times = ufo_value_new_map ();
    ufo_value_map_set_float (times, "total", (double) (ufo_time_mono_ms () - started_ms) / 1000.0);
    ufo_value_map_set (*s_p, "time_cost", &times);
    char *json = ufo_json_dump (*s_p, UFO_JSON_PY, NULL);
    fprintf (s_response, "%s\n", json);
    fflush (s_response);
    free (json);
    ufo_value_destroy (s_p);
}

//  One AppAgent observation: snapshot, window capture, annotated and (when a control is
//  chosen) selected-control screenshots. Returns the snapshot (caller owns) and sets
//  *control_p to the chosen control of `type` (borrowed from the snapshot) when asked.
static ufo_value_t *
s_observe (ufo_desktop_t *desk, int64_t xid, int step, const char *type,
           const ufo_value_t **control_p, ufo_value_t *s)
{
    ufo_value_t *snap = dfx_wait_control (desk, xid, "Edit", NULL, WAIT_MS);
    if (!snap)
        return NULL;
    ufo_error_t err;
    ufo_image_t *window = ufo_desktop_capture_window (desk, xid, &err);
    char name [64];
    snprintf (name, sizeof name, "action_step%d.png", step);
    s_save (window, name);
    s_images--;                     //  the clean one is shown only as a fallback
    ufo_value_map_set_str (s, "ScreenshotPath", name);
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    if (type) {
        ufo_image_t *annotated = ufo_image_annotate (window, controls, NULL);
        snprintf (name, sizeof name, "action_step%d_annotated.png", step);
        s_save (annotated, name);
        ufo_value_map_set_str (s, "AnnotatedScreenshotPath", name);
        ufo_image_destroy (&annotated);
        const char *label = dfx_find (snap, type, NULL);
        for (size_t i = 0; label && i < ufo_value_size (controls); i++)
            if (strcmp (ufo_value_map_str (ufo_value_list_at (controls, i), "label", ""), label) == 0)
                *control_p = ufo_value_list_at (controls, i);
        if (*control_p) {
            ufo_image_t *selected = ufo_image_highlight (window, *control_p);
            snprintf (name, sizeof name, "action_step%d_selected_controls.png", step);
            s_save (selected, name);
            ufo_value_map_set_str (s, "SelectedControlScreenshotPath", name);
            ufo_image_destroy (&selected);
        }
    }
    else
        s_images++;                 //  no annotation: the clean screenshot is shown
    ufo_value_map_set_str (s, "Observation", ufo_value_map_str (ufo_value_map_get (snap, "window"),
                                                                "title", "?"));
    ufo_image_destroy (&window);
    return snap;
}

static int
s_write_file (const char *name, const char *text)
{
    char path [4096];
    snprintf (path, sizeof path, "%s/%s", s_logdir, name);
    FILE *file = fopen (path, "w");
    if (!file)
        return -1;
    fputs (text, file);
    return fclose (file);
}

UFO_TEST (test_recorded_session)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_value_t *opts = ufo_json_parse_str (
        "{\"launchers\": {\"mousepad\": [\"mousepad\"]}, \"action_timeout_ms\": 8000}", NULL);
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (opts, &err);
    ufo_value_destroy (&opts);
    REQUIRE (desk);
    char path [4096];
    snprintf (path, sizeof path, "%s/response.log", s_logdir);
    s_response = fopen (path, "w");
    REQUIRE (s_response);
    const char *subtask = "Type the shopping list into Mousepad";

    //  Step 0, HostAgent: the empty desktop; launch Mousepad.
    int64_t t = ufo_time_mono_ms ();
    ufo_value_t *s = s_step_new (0, false, "CONTINUE", "", "Mousepad is not running; launch it.");
    ufo_image_t *screen = ufo_desktop_capture_screen (desk, &err);
    CHECK (s_save (screen, "desktop_step0.png") == 0);
    ufo_image_destroy (&screen);
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step0.png");
    ufo_value_map_set_str (s, "Bash", "mousepad");
    ufo_value_map_set_str (s, "ActionType", "Bash");
    int pid = ufo_desktop_launch (desk, "mousepad", &err);
    REQUIRE (pid > 0);
    int64_t xid = dfx_wait_window (desk, pid, "Mousepad", WAIT_MS);
    REQUIRE (xid);
    s_step_write (&s, t);

    //  Step 1, HostAgent: the window list; assign the subtask.
    t = ufo_time_mono_ms ();
    s = s_step_new (1, false, "ASSIGN", "", "Mousepad is open: hand the subtask to it.");
    ufo_value_map_set_str (s, "CurrentSubtask", subtask);
    ufo_value_t *windows = ufo_desktop_windows (desk, &err);
    for (size_t i = 0; i < ufo_value_size (windows); i++) {
        const ufo_value_t *w = ufo_value_list_at (windows, i);
        if (ufo_value_map_int (w, "xid", 0) == xid) {
            ufo_value_map_set_str (s, "ControlLabel", ufo_value_map_str (w, "label", ""));
            ufo_value_map_set_str (s, "ControlText", ufo_value_map_str (w, "title", ""));
        }
    }
    ufo_value_destroy (&windows);
    screen = ufo_desktop_capture_screen (desk, &err);
    CHECK (s_save (screen, "desktop_step1.png") == 0);
    ufo_image_destroy (&screen);
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step1.png");
    s_step_write (&s, t);

    //  Step 2, AppAgent: type the list into the text area.
    t = ufo_time_mono_ms ();
    s = s_step_new (2, true, "CONTINUE", subtask, "Type the three items, one per line.");
    const ufo_value_t *edit = NULL;
    ufo_value_t *snap = s_observe (desk, xid, 2, "Edit", &edit, s);
    REQUIRE (snap && edit);
    const char *typed = "{\"text\": \"milk\\neggs\\nbread\", \"clear_current_text\": true}";
    ufo_value_t *r = dfx_act (desk, xid, ufo_value_map_str (edit, "label", ""), "set_edit_text", typed);
    CHECK (ufo_value_map_bool (r, "success", false));
    s_step_action (s, "set_edit_text", typed, edit, r);
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    s_step_write (&s, t);

    //  Step 3, AppAgent: read the text back.
    t = ufo_time_mono_ms ();
    s = s_step_new (3, true, "CONTINUE", subtask, "Check what the text area holds.");
    edit = NULL;
    snap = s_observe (desk, xid, 3, "Edit", &edit, s);
    REQUIRE (snap && edit);
    r = dfx_act (desk, xid, ufo_value_map_str (edit, "label", ""), "texts", NULL);
    char *text = ufo_strdup (ufo_value_map_str (r, "text", ""));
    CHECK (strstr (text, "milk") && strstr (text, "bread"));
    s_step_action (s, "texts", NULL, edit, r);
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    s_step_write (&s, t);

    //  Step 4, AppAgent: report and finish (no control: the clean screenshot).
    t = ufo_time_mono_ms ();
    s = s_step_new (4, true, "FINISH", subtask, "The list is in the editor.");
    edit = NULL;
    snap = s_observe (desk, xid, 4, NULL, &edit, s);
    REQUIRE (snap);
    const char *said = "{\"text\": \"The list holds milk, eggs and bread.\"}";
    r = dfx_act (desk, xid, NULL, "summary", said);
    s_step_action (s, "summary", said, NULL, r);
    ufo_value_destroy (&r);
    ufo_value_destroy (&snap);
    s_step_write (&s, t);
    ufo_image_t *window = ufo_desktop_capture_window (desk, xid, &err);
    CHECK (s_save (window, "action_round_0_final.png") == 0);
    ufo_image_destroy (&window);

    //  Step 5, HostAgent: the round is done.
    t = ufo_time_mono_ms ();
    s = s_step_new (5, false, "FINISH", "", "The subtask finished; nothing is left.");
    screen = ufo_desktop_capture_screen (desk, &err);
    CHECK (s_save (screen, "desktop_step5.png") == 0);
    ufo_image_destroy (&screen);
    ufo_value_map_set_str (s, "ScreenshotPath", "desktop_step5.png");
    s_step_write (&s, t);
    fclose (s_response);

    //  The evaluation judges from what the text area really held.
    bool ok = strstr (text, "milk") && strstr (text, "eggs") && strstr (text, "bread");
    char eval [512];
    snprintf (eval, sizeof eval, "{\"level\": \"session\", \"request\": \"Write a shopping list "
              "in Mousepad\", \"reason\": \"The editor holds the three items.\", \"sub_scores\": "
              "{\"list typed\": \"%s\", \"one item per line\": \"%s\"}, \"complete\": \"%s\", "
              "\"screenshots\": \"first_last\", \"Cost\": 0.0}\n", ok ? "yes" : "no",
              strstr (text, "milk\neggs") ? "yes" : "unsure", ok ? "yes" : "no");
    free (text);
    CHECK (s_write_file ("evaluation.log", eval) == 0);
    CHECK (s_write_file ("request.json", "{\"task\": \"recorded-mousepad\", \"requests\": "
                         "[\"Write a shopping list in Mousepad\"], \"mode\": \"normal\", "
                         "\"llm\": {\"mode\": \"scripted\", \"endpoint\": \"\"}}\n") == 0);
    CHECK (s_write_file ("session.json", "{\"task\": \"recorded-mousepad\", \"status\": \"FINISH\", "
                         "\"rounds\": 1, \"steps\": 6, \"evaluation\": null}\n") == 0);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
    s_browser_env ();

    //  The page, in the browser.
    char out [PATH_MAX], page [4096], dom_path [PATH_MAX];
    snprintf (out, sizeof out, "%s/report.out", s_tmp);
    REQUIRE (s_ufo ((const char *[]) { "report", s_logdir, NULL }, out, NULL) == 0);
    snprintf (page, sizeof page, "%s/report.html", s_logdir);
    snprintf (dom_path, sizeof dom_path, "%s/dom.html", s_tmp);
    REQUIRE (s_chromium (page, dom_path, NULL, NULL, NULL) == 0);
    char *dom = tf_read (dom_path, NULL);
    REQUIRE (dom);
    fprintf (stderr, "  %d screenshots in the page\n", s_images);
    CHECK_INT (s_count (dom, "<details class=\"step "), 6);
    CHECK_INT (s_body_attr (dom, "data-js"), 1);
    CHECK_INT (s_body_attr (dom, "data-images-total"), s_images);
    CHECK_INT (s_body_attr (dom, "data-images-loaded"), s_images);
    CHECK_CONTAINS (dom, "set_edit_text(text=\"milk\\neggs\\nbread\", clear_current_text=true)");
    CHECK_CONTAINS (dom, "action_step2_selected_controls.png");
    CHECK_CONTAINS (dom, "Mousepad");
    CHECK_CONTAINS (dom, "\xE2\x9C\x85</span> Complete: <span class=\"status st-yes\">yes</span>");
    CHECK (!strstr (dom, "id=\"notes\""));
    free (dom);
}

int
main (void)
{
    if (s_browser_setup ("ufo-report-recorded") != 0)
        return 1;
    snprintf (s_logdir, sizeof s_logdir, "%s/recorded-mousepad", s_tmp);
    mkdir (s_logdir, 0755);
    UFO_RUN (test_recorded_session);
    int rc = UFO_TEST_END ();
    if (rc == 0 && !getenv ("UFO_REPORT_KEEP"))
        s_remove_tree (s_tmp);
    else
        fprintf (stderr, "kept %s\n", s_tmp);
    return rc;
}
