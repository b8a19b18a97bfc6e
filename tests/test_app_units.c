/*  test_app_units.c - pieces of ufo-app that need no desktop: the confirmation policy,
    data URLs, and the in-process blackboard (board items, screenshots, prompt parts).
    the subtask body checks. The app_agent sources are compiled in, so this also runs in the sanitizer tree. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "app_ctx.h"
#include "app_body.h"
#include "app_window.h"
#include "app_writer.h"

UFO_TEST (test_policy)
{
    app_ctx_t ctx;
    memset (&ctx, 0, sizeof ctx);
    ctx.config = ufo_config_new ();
    ufo_error_t err;
    REQUIRE (ufo_config_load_text (ctx.config, "{}", 2, &err) == 0);
    ctx.confirm_controls = ufo_config_get (ctx.config, "desktop.confirm_controls");
    ctx.confirm_actions = ufo_config_get (ctx.config, "desktop.confirm_actions");
    char why [256];
    //  the defaults: Delete*, Send*, Remove* on any acting function, any case
    CHECK (app_ctx_policy_requires (&ctx, "click_input", "Delete", why, sizeof why));
    CHECK_CONTAINS (why, "Delete*");
    CHECK (app_ctx_policy_requires (&ctx, "click_input", "delete all", why, sizeof why));
    CHECK (app_ctx_policy_requires (&ctx, "keyboard_input", "Send now", why, sizeof why));
    CHECK (app_ctx_policy_requires (&ctx, "click_input", "REMOVE", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "click_input", "Save", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "click_input", "Undelete", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "click_input", "", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "click_input", NULL, why, sizeof why));
    //  reading never needs a confirmation; no action neither
    CHECK (!app_ctx_policy_requires (&ctx, "texts", "Delete", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "summary", "Send", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "", "Delete", why, sizeof why));
    //  configured lists
    ufo_config_destroy (&ctx.config);
    ctx.config = ufo_config_new ();
    const char *text = "{\"desktop\": {\"confirm_actions\": [\"drag_*\"], \"confirm_controls\": [\"Format Disk\"]}}";
    REQUIRE (ufo_config_load_text (ctx.config, text, strlen (text), &err) == 0);
    ctx.confirm_controls = ufo_config_get (ctx.config, "desktop.confirm_controls");
    ctx.confirm_actions = ufo_config_get (ctx.config, "desktop.confirm_actions");
    CHECK (app_ctx_policy_requires (&ctx, "drag_on_coordinates", NULL, why, sizeof why));
    CHECK_CONTAINS (why, "drag_on_coordinates");
    CHECK (app_ctx_policy_requires (&ctx, "click_input", "format disk", why, sizeof why));
    CHECK (!app_ctx_policy_requires (&ctx, "click_input", "Delete", why, sizeof why));
    //  a wrongly typed list is refused by the configuration, not by the policy
    text = "{\"desktop\": {\"confirm_actions\": \"drag\"}}";
    CHECK (ufo_config_load_text (ctx.config, text, strlen (text), &err) < 0);
    ufo_config_destroy (&ctx.config);
}

UFO_TEST (test_data_url)
{
    static const char *const vectors [][2] = {
        { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
        { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" }
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (vectors); i++) {
        char *url = app_data_url ("image/png", vectors [i][0], strlen (vectors [i][0]));
        char want [64];
        snprintf (want, sizeof want, "data:image/png;base64,%s", vectors [i][1]);
        CHECK_STR (url, want);
        free (url);
    }
    unsigned char bytes [256];
    for (int i = 0; i < 256; i++)
        bytes [i] = (unsigned char) i;
    char *url = app_data_url ("image/png", bytes, sizeof bytes);
    CHECK_INT (strlen (url), strlen ("data:image/png;base64,") + 344);
    CHECK_CONTAINS (url, "AAECAwQFBgc");
    CHECK_CONTAINS (url, "+/w==");
    free (url);
}

UFO_TEST (test_local_board)
{
    ufo_error_t err;
    app_board_t *board = app_board_new (NULL);
    REQUIRE (board);
    CHECK (!app_board_remote (board));
    ufo_value_t *item = ufo_json_parse_str ("{\"Step\": 3, \"Round\": 0, \"SubtaskIndex\": 1,"
                                            " \"Action\": {\"function\": \"texts\"}}", NULL);
    CHECK_INT (app_board_add (board, "s1", "trajectories", &item, &err), 0);
    CHECK (item == NULL);
    item = ufo_json_parse_str ("{\"x\": 1}", NULL);
    CHECK_INT (app_board_add (board, "s1", "nonsense", &item, &err), -1);
    CHECK (item == NULL);
    ufo_value_t *meta = ufo_json_parse_str ("{\"step\": 3}", NULL);
    CHECK_INT (app_board_add_screenshot (board, "s1", "action_step3.png", "PNG", 3, meta, &err), 0);
    ufo_value_destroy (&meta);
    ufo_value_t *snap = app_board_snapshot (board, "s1", &err);
    REQUIRE (snap);
    CHECK_INT (ufo_value_size (ufo_value_map_get (snap, "trajectories")), 1);
    const ufo_value_t *shot = ufo_value_list_at (ufo_value_map_get (snap, "screenshots"), 0);
    CHECK_STR (ufo_value_map_str (shot, "image_str", ""), "data:image/png;base64,UE5H");
    CHECK_STR (ufo_value_map_str (shot, "image_path", ""), "action_step3.png");
    ufo_value_destroy (&snap);
    //  another session's board is separate
    snap = app_board_snapshot (board, "s2", &err);
    CHECK_INT (ufo_value_size (ufo_value_map_get (snap, "trajectories")), 0);
    ufo_value_destroy (&snap);
    //  the prompt parts: blackboard header, memories, the screenshot's metadata and image
    CHECK (app_board_prompt_ready (board, "s1"));
    ufo_value_t *parts = app_board_prompt_take (board, "s1", &err);
    REQUIRE (parts);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (parts, 0), "text", ""), "[Blackboard:]");
    char *json = ufo_json_dump (parts, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (json, "[Step Trajectories Completed Previously:]");
    CHECK_CONTAINS (json, "\"url\":\"data:image/png;base64,UE5H\"");
    free (json);
    ufo_value_destroy (&parts);
    //  many sessions: the oldest boards are recycled, never a crash
    for (int i = 0; i < 200; i++) {
        char name [32];
        snprintf (name, sizeof name, "many-%d", i);
        item = ufo_json_parse_str ("{\"Step\": 0}", NULL);
        CHECK_INT (app_board_add (board, name, "questions", &item, &err), 0);
    }
    app_board_destroy (&board);
    app_board_destroy (&board);
}

UFO_TEST (test_body)
{
    app_body_t b;
    ufo_error_t err;
    ufo_value_t *v = ufo_json_parse_str (
        "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"type\", \"round\": 2,"
        " \"subtask_index\": 1, \"step_base\": 7, \"max_steps\": 3, \"tips\": [\"a\"],"
        " \"window\": {\"xid\": 5}, \"interactive\": true}", NULL);
    REQUIRE (v);
    CHECK_INT (app_body_parse (v, &b, &err), 0);
    CHECK_STR (b.session, "s");
    CHECK_STR (b.request, "");
    CHECK_STR (b.log_root, "");
    CHECK_INT (b.round, 2);
    CHECK_INT (b.subtask_index, 1);
    CHECK_INT (b.step_base, 7);
    CHECK_INT (b.round_step_base, 7);
    CHECK_INT (b.max_steps, 3);
    CHECK (b.interactive && !b.auto_confirm);
    CHECK_INT (ufo_value_size (b.tips), 1);
    CHECK (b.previous_subtasks == NULL);
    CHECK_INT (ufo_value_map_int (b.window, "xid", 0), 5);
    ufo_value_destroy (&v);
    v = ufo_json_parse_str ("{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\"}", NULL);
    CHECK_INT (app_body_parse (v, &b, &err), 0);
    CHECK_INT (b.max_steps, 50);
    CHECK (b.window == NULL);
    ufo_value_destroy (&v);
    static const char *const bad [][2] = {
        { "[]", "must be a map" },
        { "{\"task\": \"t\", \"subtask\": \"x\"}", "'session' is missing" },
        { "{\"session\": \"\", \"task\": \"t\", \"subtask\": \"x\"}", "'session' is empty" },
        { "{\"session\": 1, \"task\": \"t\", \"subtask\": \"x\"}", "'session' must be a string" },
        { "{\"session\": \"s\", \"task\": \"a/b\", \"subtask\": \"x\"}", "one path component" },
        { "{\"session\": \"s\", \"task\": \"..\", \"subtask\": \"x\"}", "one path component" },
        { "{\"session\": \"s\", \"task\": \"\", \"subtask\": \"x\"}", "one path component" },
        { "{\"session\": \"s\", \"task\": \"t\"}", "'subtask' is missing" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"log_root\": \"/tmp/../etc\"}", "'log_root'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"log_root\": \"..\"}", "'log_root'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"log_root\": \"logs/../../x\"}", "'log_root'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"round\": -1}", "'round'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"step_base\": 9223372036854775807}", "'step_base'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"max_steps\": 1.5}", "'max_steps'" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"tips\": \"a\"}", "'tips' must be a list" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"window\": [1]}", "'window' must be a map" },
        { "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"interactive\": \"yes\"}", "'interactive'" }
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        v = ufo_json_parse_str (bad [i][0], NULL);
        REQUIRE (v);
        ufo_error_clear (&err);
        CHECK_INT (app_body_parse (v, &b, &err), -1);
        CHECK_CONTAINS (err.message, bad [i][1]);
        ufo_value_destroy (&v);
    }
    CHECK_INT (app_body_parse (NULL, &b, &err), -1);
}

//  The xid of the window app_window_pick chooses from a JSON window list, 0 for none.
static int64_t
s_pick (const char *json, int64_t pid, int64_t main_xid, int64_t last_xid)
{
    ufo_value_t *wins = ufo_json_parse_str (json, NULL);
    assert (wins);
    const ufo_value_t *w = app_window_pick (wins, pid, main_xid, last_xid);
    int64_t xid = w ? ufo_value_map_int (w, "xid", 0) : 0;
    ufo_value_destroy (&wins);
    return xid;
}

UFO_TEST (test_window_pick)
{
    //  main window 10 of pid 7, another application's window 20 (pid 8)
    const char *base = "[{\"xid\": 10, \"pid\": 7, \"title\": \"Untitled\"},"
                       " {\"xid\": 20, \"pid\": 8, \"title\": \"Other\", \"active\": true, \"modal\": true}";
    char json [1024];
    //  alone: the main window, whatever the other application shows
    snprintf (json, sizeof json, "%s]", base);
    CHECK_INT (s_pick (json, 7, 10, 10), 10);
    //  a dialog (transient for the main window) appeared: the dialog
    snprintf (json, sizeof json, "%s, {\"xid\": 30, \"pid\": 7, \"title\": \"Save As\", \"transient_for\": 10}]", base);
    CHECK_INT (s_pick (json, 7, 10, 10), 30);
    //  the dialog type alone says so too
    snprintf (json, sizeof json, "%s, {\"xid\": 30, \"pid\": 7, \"title\": \"Tip\", \"dialog\": true}]", base);
    CHECK_INT (s_pick (json, 7, 10, 10), 30);
    //  the focused window of the application wins over a non-modal dialog ...
    snprintf (json, sizeof json, "[{\"xid\": 10, \"pid\": 7, \"active\": true},"
              " {\"xid\": 30, \"pid\": 7, \"dialog\": true}]");
    CHECK_INT (s_pick (json, 7, 10, 30), 10);
    //  ... a modal one wins over everything; of two, the newest (later in the list)
    snprintf (json, sizeof json, "[{\"xid\": 10, \"pid\": 7, \"active\": true},"
              " {\"xid\": 30, \"pid\": 7, \"modal\": true}, {\"xid\": 40, \"pid\": 7, \"modal\": true},"
              " {\"xid\": 50, \"pid\": 7}]");
    CHECK_INT (s_pick (json, 7, 10, 10), 40);
    //  the dialog closed: back to the main window (the last window is gone)
    snprintf (json, sizeof json, "%s]", base);
    CHECK_INT (s_pick (json, 7, 10, 30), 10);
    //  a second plain window of the application: the previous step's window is kept
    snprintf (json, sizeof json, "%s, {\"xid\": 60, \"pid\": 7}]", base);
    CHECK_INT (s_pick (json, 7, 10, 60), 60);
    CHECK_INT (s_pick (json, 7, 10, 10), 10);
    //  a second document window of the same process, focused, and a dialog of that
    //  document: neither is this subtask's; a dialog of a dialog of ours is
    CHECK_INT (s_pick ("[{\"xid\": 10, \"pid\": 7}, {\"xid\": 60, \"pid\": 7, \"active\": true},"
                       " {\"xid\": 70, \"pid\": 7, \"modal\": true, \"transient_for\": 60}]", 7, 10, 10), 10);
    CHECK_INT (s_pick ("[{\"xid\": 10, \"pid\": 7}, {\"xid\": 90, \"pid\": 7, \"modal\": true, \"transient_for\": 80},"
                       " {\"xid\": 80, \"pid\": 7, \"dialog\": true, \"transient_for\": 10}]", 7, 10, 10), 90);
    //  the main window closed, another window of the application remains
    CHECK_INT (s_pick ("[{\"xid\": 60, \"pid\": 7}, {\"xid\": 20, \"pid\": 8}]", 7, 10, 10), 60);
    //  no window of the application left
    CHECK_INT (s_pick ("[{\"xid\": 20, \"pid\": 8, \"modal\": true}]", 7, 10, 10), 0);
    //  pid unknown: only the subtask's own window belongs to it
    CHECK_INT (s_pick ("[{\"xid\": 10, \"pid\": 0}, {\"xid\": 30, \"pid\": 0, \"modal\": true}]", 0, 10, 10), 10);
    //  junk in the list is skipped
    CHECK_INT (s_pick ("[1, \"x\", null, {\"xid\": 10, \"pid\": 7}]", 7, 10, 10), 10);
    CHECK_INT (s_pick ("[]", 7, 10, 10), 0);
    CHECK (app_window_pick (NULL, 7, 10, 10) == NULL);
}

typedef struct {
    int order [600];
    int ran, freed;
} s_jobs_t;

typedef struct {
    s_jobs_t *jobs;
    int index;
    bool slow;
} s_job_arg_t;

static void
s_job (void *arg)
{
    s_job_arg_t *a = arg;
    if (a->slow)
        usleep (2000);
    a->jobs->order [a->jobs->ran++] = a->index;
}

static void
s_job_free (void *arg)
{
    s_job_arg_t *a = arg;
    a->jobs->freed++;
    free (a);
}

static void
s_submit (app_writer_t *w, s_jobs_t *jobs, int index, bool slow)
{
    s_job_arg_t *a = malloc (sizeof *a);
    assert (a);
    a->jobs = jobs;
    a->index = index;
    a->slow = slow;
    app_writer_submit (w, s_job, s_job_free, a);
}

UFO_TEST (test_writer)
{
    //  jobs run in submission order, each freed after it ran; flush waits for all of them
    static s_jobs_t jobs;
    memset (&jobs, 0, sizeof jobs);
    app_writer_t *w = app_writer_new ();
    REQUIRE (w);
    for (int i = 0; i < 500; i++)
        s_submit (w, &jobs, i, i % 100 == 0);
    app_writer_flush (w);
    CHECK_INT (jobs.ran, 500);
    CHECK_INT (jobs.freed, 500);
    CHECK_INT ((int64_t) app_writer_done (w), 500);
    bool ordered = true;
    for (int i = 0; i < 500; i++)
        ordered &= jobs.order [i] == i;
    CHECK (ordered);
    app_writer_flush (w);       //  nothing queued: returns at once
    //  destroy runs what is still queued
    for (int i = 500; i < 520; i++)
        s_submit (w, &jobs, i, true);
    app_writer_destroy (&w);
    CHECK (w == NULL);
    CHECK_INT (jobs.ran, 520);
    CHECK_INT (jobs.freed, 520);
    //  without a writer, a job runs at once in the caller
    s_submit (NULL, &jobs, 520, false);
    CHECK_INT (jobs.ran, 521);
    CHECK_INT (jobs.freed, 521);
    app_writer_flush (NULL);
    app_writer_destroy (NULL);
    CHECK_INT ((int64_t) app_writer_done (NULL), 0);
}

int
main (void)
{
    UFO_RUN (test_policy);
    UFO_RUN (test_body);
    UFO_RUN (test_data_url);
    UFO_RUN (test_local_board);
    UFO_RUN (test_window_pick);
    UFO_RUN (test_writer);
    return UFO_TEST_END ();
}
