/*  test_app_agent.c - ufo-app (the AppAgent) end to end, through `ufo-app --subtask`:
    real mousepad on a private virtual desktop, the scripted LLM server
    (tests/data/app_agent/NAME.json), a real ufo-broker holding the session board. The test
    reads the application's text back through AT-SPI on its own. */
#include "ufo_bb_client.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"

#define RUN_MS 180000

static const char *const s_record_fields [] = {
    "Observation", "Thought", "ControlLabel", "ControlText", "Function", "Args", "Status", "Plan",
    "Comment", "SaveScreenshot", "Questions", "Step", "RoundStep", "AgentStep", "Round", "Subtask",
    "SubtaskIndex", "FunctionCall", "Action", "ActionSuccess", "ActionType", "Request", "Agent",
    "AgentName", "Application", "Cost", "Tokens", "Results", "error", "time_cost", "ControlLog",
    "UserConfirm", "Answers", "ScreenshotPath", "AnnotatedScreenshotPath",
    "SelectedControlScreenshotPath", "Timestamp"
};

static bool
s_exists (const char *task, const char *name)
{
    char path [600];
    afx_log_path (task, name, path, sizeof path);
    return access (path, F_OK) == 0;
}

UFO_TEST (test_type_text)
{
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad_scripted ("type_text.json", &pid, &label);
    REQUIRE (xid);
    char prices [600], extra [900];
    snprintf (prices, sizeof prices, "%s/prices.json", afx_.broker.dir);
    afx_write (prices, "{\"openai_compatible/scripted\": {\"input\": 0.01, \"output\": 0.03}}");
    snprintf (extra, sizeof extra, "\"CONCAT_SCREENSHOT\": true, \"SAVE_UI_TREE\": true, \"SAVE_FULL_SCREEN\": true,"
              " \"llm\": {\"prices_file\": \"%s\"}", prices);
    const char *config = afx_config (extra);
    const char *file = afx_subtask ("s-type", "Type 'Hello from ufo-app' into the document", xid, "", "");
    ufo_value_t *lines = NULL;
    int rc = afx_run_subtask (config, file, RUN_MS, &lines);
    CHECK_INT (rc, 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)),
               "Hello from ufo-app");
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "The note is written.");
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (result, "cost"), "prompt_tokens", 0), 3300);
    //  cost: (3300 * 0.01 + 240 * 0.03) / 1000
    CHECK (fabs (ufo_value_map_float (ufo_value_map_get (result, "cost"), "total", 0) - 0.0402) < 1e-9);
    CHECK_STR (ufo_value_map_str (result, "final_screenshot", ""),
               "action_round_0_sub_round_0_final.png");
    CHECK_INT (afx_count (lines, "step"), 3);
    CHECK_INT (afx_count (lines, "cost"), 3);
    //  the text, read by the test itself
    char *text = afx_text (xid);
    CHECK_STR (text, "Hello from ufo-app");
    free (text);
    //  response.log: one line per step with every field
    ufo_value_t *resp = afx_log ("s-type", "response.log");
    CHECK_INT (ufo_value_size (resp), 3);
    for (size_t i = 0; i < ufo_value_size (resp); i++) {
        const ufo_value_t *r = ufo_value_list_at (resp, i);
        for (size_t k = 0; k < UFO_ARRAY_SIZE (s_record_fields); k++)
            if (!ufo_value_map_has (r, s_record_fields [k]))
                UFO_FAIL_ ("response.log line %zu lacks %s", i, s_record_fields [k]);
        CHECK_INT (ufo_value_map_int (r, "Step", -1), (int64_t) i);
        CHECK_STR (ufo_value_map_str (r, "Agent", ""), "AppAgent");
        CHECK_STR (ufo_value_map_str (r, "AgentName", ""), "AppAgent/mousepad");
    }
    const ufo_value_t *r0 = ufo_value_list_at (resp, 0);
    CHECK_STR (ufo_value_map_str (r0, "FunctionCall", ""), "set_edit_text");
    CHECK_STR (ufo_value_map_str (r0, "ActionType", ""), "UIControl");
    CHECK_STR (ufo_value_map_str (r0, "ControlLabel", ""), label);
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (r0, "ControlLog"), "type", ""), "Edit");
    CHECK (ufo_value_map_bool (ufo_value_list_at (ufo_value_map_get (r0, "ActionSuccess"), 0),
                               "success", false));
    CHECK_STR (ufo_value_map_str (r0, "ScreenshotPath", ""), "action_step0.png");
    CHECK (fabs (ufo_value_map_float (r0, "Cost", -1) - 0.013) < 1e-9);
    CHECK (ufo_value_map_has (ufo_value_map_get (r0, "time_cost"), "llm"));
    //  the action's wait for the application's effect is a part of the action; a read
    //  (step 1, texts) does not wait
    const ufo_value_t *tc0 = ufo_value_map_get (r0, "time_cost");
    double wait0 = ufo_value_map_float (tc0, "action_wait", -1);
    CHECK (wait0 > 0 && wait0 <= ufo_value_map_float (tc0, "action", 0));
    const ufo_value_t *tc1 = ufo_value_map_get (ufo_value_list_at (resp, 1), "time_cost");
    CHECK (ufo_value_map_float (tc1, "action_wait", -1) == 0);
    CHECK (ufo_value_map_float (tc1, "action", 0) > 0);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 1), "Results", ""), "Hello from ufo-app");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 2), "Status", ""), "FINISH");
    ufo_value_destroy (&resp);
    //  request.log: prompts without the key, images as file names
    char path [600];
    char *req = afx_read (afx_log_path ("s-type", "request.log", path, sizeof path));
    REQUIRE (req);
    CHECK (!strstr (req, "sk-afx-secret"));
    CHECK_CONTAINS (req, "[Current Subtask:]");
    CHECK_CONTAINS (req, "Use the text area");
    free (req);
    //  screenshots
    CHECK (s_exists ("s-type", "action_step0.png"));
    CHECK (s_exists ("s-type", "action_step0_annotated.png"));
    CHECK (s_exists ("s-type", "action_step0_concat.png"));
    CHECK (s_exists ("s-type", "action_step0_selected_controls.png"));
    CHECK (s_exists ("s-type", "action_step2.png"));
    CHECK (s_exists ("s-type", "ui_trees/ui_tree_step0.json"));
    CHECK (s_exists ("s-type", "desktop_step0.png"));
    CHECK (s_exists ("s-type", "action_round_0_sub_round_0_final.png"));
    //  the board: trajectories and the saved screenshot
    ufo_value_t *board = afx_board ("s-type");
    REQUIRE (board);
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    CHECK_INT (ufo_value_size (traj), 3);
    const ufo_value_t *t0 = ufo_value_list_at (traj, 0);
    CHECK_INT (ufo_value_map_int (t0, "Step", -1), 0);
    CHECK_INT (ufo_value_map_int (t0, "Round", -1), 0);
    CHECK_INT (ufo_value_map_int (t0, "SubtaskIndex", -1), 0);
    CHECK_STR (ufo_value_map_str (t0, "Application", ""), "mousepad");
    CHECK_STR (ufo_value_map_str (t0, "Status", ""), "CONTINUE");
    CHECK_STR (ufo_value_map_str (ufo_value_map_get (t0, "Action"), "function", ""), "set_edit_text");
    CHECK (ufo_value_map_has (t0, "Subtask") && ufo_value_map_has (t0, "UserConfirm"));
    const ufo_value_t *shots = ufo_value_map_get (board, "screenshots");
    CHECK_INT (ufo_value_size (shots), 1);
    CHECK_INT (strlen (ufo_value_map_str (ufo_value_list_at (shots, 0), "blob", "")), 64);
    ufo_value_destroy (&board);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

//  Response.log of a task and the one line expected in it for a one-step run.
static const ufo_value_t *
s_only_record (ufo_value_t *resp)
{
    CHECK_INT (ufo_value_size (resp), 1);
    return ufo_value_list_at (resp, 0);
}

UFO_TEST (test_confirm_refused)
{
    //  The model asks for CONFIRM; the user refuses: the action is not run, FINISH.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("confirm.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("");
    const char *file = afx_subtask ("s-confirm", "Replace the text", xid, "\"interactive\": true",
                                    "\"answers\": [false]");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 1);
    CHECK_CONTAINS (ufo_value_map_str (result, "comment", ""), "did not confirm");
    CHECK_INT (afx_count (lines, "confirm"), 1);
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *l = ufo_value_list_at (lines, i);
        if (strcmp (ufo_value_map_str (l, "kind", ""), "confirm"))
            continue;
        CHECK_STR (ufo_value_map_str (l, "function", ""), "set_edit_text");
        CHECK_STR (ufo_value_map_str (l, "from", ""), "AppAgent/mousepad");
        CHECK_STR (ufo_value_map_str (ufo_value_map_get (l, "control"), "type", ""), "Edit");
        CHECK (*ufo_value_map_str (l, "qid", ""));
    }
    char *text = afx_text (xid);
    CHECK_STR (text, "");
    free (text);
    ufo_value_t *resp = afx_log ("s-confirm", "response.log");
    const ufo_value_t *r = s_only_record (resp);
    CHECK_STR (ufo_value_map_str (r, "UserConfirm", ""), "no");
    CHECK_STR (ufo_value_map_str (r, "Status", ""), "FINISH");
    CHECK_STR (ufo_value_map_str (r, "FunctionCall", "x"), "");
    CHECK_INT (ufo_value_size (ufo_value_map_get (r, "ActionSuccess")), 0);
    ufo_value_destroy (&resp);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_confirm_policy)
{
    //  The model says CONTINUE, but the policy names the action: confirmation is required.
    //  Non-interactive without auto_confirm: refused without asking; interactive yes: runs.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("policy.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config_ex (false, "\"confirm_actions\": [\"set_*\"]", "");
    const char *file = afx_subtask ("s-policy1", "Type a text", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    //  without a user the decision is only reported: nothing waits for an answer
    CHECK_INT (afx_count (lines, "confirm"), 1);
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        if (!strcmp (ufo_value_map_str (ufo_value_list_at (lines, i), "kind", ""), "confirm")) {
            CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, i), "answered", ""), "no");
            CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, i), "by", ""), "no user");
        }
    ufo_value_destroy (&lines);
    char *text = afx_text (xid);
    CHECK_STR (text, "");
    free (text);
    ufo_value_t *resp = afx_log ("s-policy1", "response.log");
    CHECK_STR (ufo_value_map_str (s_only_record (resp), "UserConfirm", ""), "no");
    ufo_value_destroy (&resp);

    file = afx_subtask ("s-policy2", "Type a text", xid, "\"interactive\": true", "\"answers\": [true]");
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_map_str (result, "comment", ""), "Typed after confirmation.");
    CHECK_INT (afx_count (lines, "confirm"), 1);
    for (size_t i = 0; i < ufo_value_size (lines); i++)
        if (!strcmp (ufo_value_map_str (ufo_value_list_at (lines, i), "kind", ""), "confirm"))
            CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (lines, i), "reason", ""), "policy");
    ufo_value_destroy (&lines);
    text = afx_text (xid);
    CHECK_STR (text, "Policy text");
    free (text);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_garbage_error)
{
    //  The model never answers with usable JSON: re-asked JSON_PARSING_RETRY (2) times,
    //  then the step and the subtask end in ERROR with the reason in response.log.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("garbage.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("");
    const char *file = afx_subtask ("s-garbage", "Type something", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 1);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "LLM");
    CHECK_INT (afx_llm_requests (), 3);
    ufo_value_t *resp = afx_log ("s-garbage", "response.log");
    const ufo_value_t *r = s_only_record (resp);
    CHECK_STR (ufo_value_map_str (r, "Status", ""), "ERROR");
    CHECK (strlen (ufo_value_map_str (r, "error", "")) > 10);
    CHECK_STR (ufo_value_map_str (r, "Observation", "x"), "");
    ufo_value_destroy (&resp);
    ufo_value_t *board = afx_board ("s-garbage");
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    CHECK_INT (ufo_value_size (traj), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (traj, 0), "Status", ""), "ERROR");
    ufo_value_destroy (&board);
    char *text = afx_text (xid);
    CHECK_STR (text, "");
    free (text);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_pending_answer)
{
    //  PENDING: the question goes out as progress, the answer comes back as input and
    //  reaches the model; the Q&A is on the board. Visual mode: screenshots are sent.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("pending.json", &pid, NULL);
    REQUIRE (xid);
    char qa [600], qa_extra [700];
    snprintf (qa, sizeof qa, "%s/custom/qa.jsonl", afx_.broker.dir);
    snprintf (qa_extra, sizeof qa_extra, "\"USE_CUSTOMIZATION\": true, \"QA_PAIR_FILE\": \"%s\"", qa);
    const char *config = afx_config_ex (true, "", qa_extra);
    const char *file = afx_subtask ("s-pending", "Type what the user wants", xid,
                                    "\"interactive\": true",
                                    "\"answers\": [[\"words: purple elephant\"]]");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_INT (afx_count (lines, "question"), 1);
    char *text = afx_text (xid);
    CHECK_STR (text, "purple elephant");
    free (text);
    ufo_value_t *board = afx_board ("s-pending");
    const ufo_value_t *qs = ufo_value_map_get (board, "questions");
    CHECK_INT (ufo_value_size (qs), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (qs, 0), "question", ""), "Which words should I type?");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (qs, 0), "answer", ""), "words: purple elephant");
    ufo_value_destroy (&board);
    //  USE_CUSTOMIZATION: the pair is also in the Q&A file
    ufo_value_t *pairs = afx_lines (qa);
    CHECK_INT (ufo_value_size (pairs), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (pairs, 0), "answer", ""), "words: purple elephant");
    ufo_value_destroy (&pairs);
    ufo_value_t *resp = afx_log ("s-pending", "response.log");
    const ufo_value_t *r0 = ufo_value_list_at (resp, 0);
    CHECK_STR (ufo_value_map_str (r0, "Status", ""), "PENDING");
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (r0, "Answers"), 0)),
               "words: purple elephant");
    ufo_value_destroy (&resp);
    //  visual mode: the first request had the clean and annotated screenshots, later
    //  ones the previous step's too
    ufo_value_t *reqs = afx_lines (afx_.llm_log);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (reqs, 0), "images", -1), 2);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (reqs, 1), "images", -1), 3);
    ufo_value_destroy (&reqs);
    char path [600];
    char *req = afx_read (afx_log_path ("s-pending", "request.log", path, sizeof path));
    CHECK_CONTAINS (req, "action_step0_annotated.png");
    CHECK (req && !strstr (req, "base64"));
    free (req);
    ufo_value_destroy (&lines);

    //  Non-interactive: no question goes out, the placeholder answer is recorded.
    REQUIRE (afx_llm_start ("pending.json") == 0);
    config = afx_config (qa_extra);
    file = afx_subtask ("s-pending2", "Type what the user wants", xid, "", "");
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    CHECK_INT (afx_count (lines, "question"), 0);
    board = afx_board ("s-pending2");
    qs = ufo_value_map_get (board, "questions");
    CHECK_INT (ufo_value_size (qs), 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (qs, 0), "answer", ""), "no answer available, proceed");
    ufo_value_destroy (&board);
    pairs = afx_lines (qa);
    CHECK_INT (ufo_value_size (pairs), 1);      //  the placeholder is not kept
    ufo_value_destroy (&pairs);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_max_steps)
{
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("loop.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("");
    const char *file = afx_subtask ("s-max", "Look forever", xid, "\"max_steps\": 3, \"step_base\": 4", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 1);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FAIL");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_CONTAINS (ufo_value_map_str (result, "comment", ""), "step limit");
    CHECK_INT (afx_llm_requests (), 3);
    ufo_value_t *resp = afx_log ("s-max", "response.log");
    CHECK_INT (ufo_value_size (resp), 3);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (resp, 2), "Step", -1), 6);
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (resp, 2), "AgentStep", -1), 2);
    ufo_value_destroy (&resp);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_window_closed)
{
    //  The action closes the application: the next step finds no window: FINISH.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("closed.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("\"SLEEP_TIME\": 1.0");
    const char *file = afx_subtask ("s-closed", "Quit Mousepad", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_CONTAINS (ufo_value_map_str (result, "comment", ""), "closed");
    //  one request for ^q, and (under load) maybe a few 1 s waits while Mousepad goes
    CHECK (afx_llm_requests () >= 1 && afx_llm_requests () <= 5);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_resume)
{
    //  A second delivery (attempt 2) reads the steps already on the board for its Round and
    //  SubtaskIndex, shows them to the model and numbers its steps after them.
    int pid = 0;
    const char *label = NULL;
    int64_t xid = afx_mousepad (&pid, &label);
    REQUIRE (xid);
    ufo_value_t *items = ufo_json_parse_str (
        "[{\"Step\": 5, \"Subtask\": \"Resume me\", \"Action\": {\"function\": \"summary\", \"args\": {\"text\": \"seeded-step-5\"}},"
        "  \"UserConfirm\": \"\", \"Round\": 0, \"SubtaskIndex\": 0, \"Application\": \"mousepad\", \"Status\": \"CONTINUE\"},"
        " {\"Step\": 6, \"Subtask\": \"Resume me\", \"Action\": {\"function\": \"summary\", \"args\": {\"text\": \"seeded-step-6\"}},"
        "  \"UserConfirm\": \"\", \"Round\": 0, \"SubtaskIndex\": 0, \"Application\": \"mousepad\", \"Status\": \"CONTINUE\"},"
        " {\"Step\": 9, \"Subtask\": \"Other\", \"Action\": {}, \"UserConfirm\": \"\", \"Round\": 0,"
        "  \"SubtaskIndex\": 1, \"Application\": \"mousepad\", \"Status\": \"FINISH\"}]", NULL);
    REQUIRE (items);
    CHECK_INT (ufo_bb_client_add (afx_.bb, "s-resume", "trajectories", &items, NULL, NULL, NULL), 0);
    REQUIRE (afx_llm_start ("resume.json") == 0);
    const char *config = afx_config ("");
    const char *file = afx_subtask ("s-resume", "Resume me", xid, "\"step_base\": 5, \"max_steps\": 4",
                                    "\"attempt\": 2, \"task_id\": \"t-resume\"");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 3);
    CHECK_INT (ufo_value_map_int (result, "resumed_steps", -1), 2);
    ufo_value_t *resp = afx_log ("s-resume", "response.log");
    const ufo_value_t *r = s_only_record (resp);
    CHECK_INT (ufo_value_map_int (r, "Step", -1), 7);
    CHECK_INT (ufo_value_map_int (r, "AgentStep", -1), 2);
    ufo_value_destroy (&resp);
    char path [600];
    char *req = afx_read (afx_log_path ("s-resume", "request.log", path, sizeof path));
    CHECK_CONTAINS (req, "seeded-step-5");
    free (req);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_screenshot_annotation)
{
    //  SCREENSHOT with the annotation action: the next step is taken with only the named
    //  controls annotated, then the subtask goes on.
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("annotation.json", &pid, NULL);
    REQUIRE (xid);
    const char *config = afx_config ("");
    const char *file = afx_subtask ("s-annot", "Look closely", xid, "", "");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (config, file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 2);
    ufo_value_t *resp = afx_log ("s-annot", "response.log");
    const ufo_value_t *r0 = ufo_value_list_at (resp, 0);
    CHECK_STR (ufo_value_map_str (r0, "Status", ""), "SCREENSHOT");
    CHECK_STR (ufo_value_map_str (r0, "FunctionCall", ""), "annotation");
    CHECK (ufo_value_map_bool (ufo_value_list_at (ufo_value_map_get (r0, "ActionSuccess"), 0),
                               "success", false));
    ufo_value_destroy (&resp);
    //  fewer boxes: the re-annotated screenshot differs from the fully annotated one
    char a [600], b [600];
    char *full = afx_read (afx_log_path ("s-annot", "action_step0_annotated.png", a, sizeof a));
    char *some = afx_read (afx_log_path ("s-annot", "action_step1_annotated.png", b, sizeof b));
    CHECK (full && some);
    struct stat sa, sb;
    CHECK (stat (a, &sa) == 0 && stat (b, &sb) == 0 && sa.st_size != sb.st_size);
    free (full);
    free (some);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

UFO_TEST (test_bad_input)
{
    //  Unusable subtask files end with a clear error, never a crash.
    const char *config = afx_config ("");
    char path [400];
    snprintf (path, sizeof path, "%s/bad.json", afx_.broker.dir);
    static const char *const bad [] = {
        "not json", "[1, 2]", "{\"session\": 5}",
        "{\"session\": \"s\", \"task\": \"../escape\", \"subtask\": \"x\"}",
        "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"window\": {\"xid\": 12345}}",
        "{\"session\": \"s\", \"task\": \"t\", \"subtask\": \"x\", \"max_steps\": \"many\"}"
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        afx_write (path, bad [i]);
        const char *args [] = { "--subtask", path, "--config", config, NULL };
        int rc = afx_run_app (args, 60000, NULL);
        if (rc != 2)
            UFO_FAIL_ ("bad file %zu: exit %d, wanted 2", i, rc);
    }
}

int
main (void)
{
    if (afx_setup ("app") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_type_text);
    AFX_RUN (test_confirm_refused);
    AFX_RUN (test_confirm_policy);
    AFX_RUN (test_garbage_error);
    AFX_RUN (test_pending_answer);
    AFX_RUN (test_max_steps);
    AFX_RUN (test_window_closed);
    AFX_RUN (test_resume);
    AFX_RUN (test_screenshot_annotation);
    AFX_RUN (test_bad_input);
    afx_teardown ();
    return UFO_TEST_END ();
}
