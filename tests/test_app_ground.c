/*  test_app_ground.c - grounding a model can use, end to end through `ufo-app --subtask` in
    text mode: the scripted model (tests/data/app_agent/ground_*.json) finds every control by
    the names, captions, values and states the prompt shows (the server's "vars" captures),
    never by a label known in advance. Each case checks the outcome without the agents:
    zenity's stdout, the calculator's display read by the test itself; and from request.log,
    that labels stayed stable from step to step and how large the prompts were.
      - zenity --forms: three captioned fields and a yes/no choice, filled by caption
      - zenity --list: several columns, a row picked by the text of one of its cells
      - gnome-calculator (GTK4): the mode popover, Advanced mode, 5! read back with `texts` */
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"
#include <spawn.h>

extern char **environ;

#define RUN_MS 180000

//  Starts argv with stdout into out_path; waits for its window titled `title`. Returns the
//  xid (0 on failure); *pid_p the process.
static int64_t
s_spawn (const char *const *argv, const char *out_path, const char *title, pid_t *pid_p)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init (&fa);
    if (out_path)
        posix_spawn_file_actions_addopen (&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    int rc = posix_spawnp (&pid, argv [0], &fa, NULL, (char *const *) argv, environ);
    posix_spawn_file_actions_destroy (&fa);
    if (rc != 0)
        return 0;
    *pid_p = pid;
    ufo_desktop_cache_clear (afx_.desk);
    int64_t xid = dfx_wait_window (afx_.desk, pid, title, AFX_WAIT_MS);
    //  the window is on X; wait until its controls are on the accessibility bus too
    ufo_value_t *snap = xid ? dfx_wait_control (afx_.desk, xid, "Button", NULL, AFX_WAIT_MS) : NULL;
    ufo_value_destroy (&snap);
    return xid;
}

//  Waits (bounded) for pid to exit. Returns its exit status, or -1 (then it is killed).
static int
s_reap (pid_t pid, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    int status = 0;
    while (ufo_time_mono_ms () < end) {
        if (waitpid (pid, &status, WNOHANG) == pid)
            return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
        ufo_desktop_iterate (afx_.desk, 20);
    }
    kill (pid, SIGKILL);
    waitpid (pid, NULL, 0);
    return -1;
}

//  The user-message texts of the AppAgent requests of a task, in step order (request.log).
static ufo_value_t *
s_prompts (const char *task)
{
    char path [600];
    ufo_value_t *lines = afx_lines (afx_log_path (task, "request.log", path, sizeof path));
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        const ufo_value_t *msgs = ufo_value_path (ufo_value_list_at (lines, i), "prompt");
        ufo_buf_t all = { 0 };
        ufo_buf_puts (&all, "");
        for (size_t k = 0; k < ufo_value_size (msgs); k++) {
            const ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (msgs, k), "content");
            if (ufo_value_type (content) == UFO_TSTRING)
                ufo_buf_puts (&all, ufo_value_str (content));
            for (size_t p = 0; ufo_value_type (content) == UFO_TLIST && p < ufo_value_size (content); p++)
                ufo_buf_puts (&all, ufo_value_map_str (ufo_value_list_at (content, p), "text", ""));
            ufo_buf_putc (&all, '\n');
        }
        char *text = ufo_buf_detach (&all, NULL);
        ufo_value_list_push_str (out, text);
        free (text);
    }
    ufo_value_destroy (&lines);
    return out;
}

//  The label the prompt text gives the control line containing `line`, or "" (static).
static const char *
s_label_in (const char *prompt, const char *line)
{
    static char label [32];
    label [0] = 0;
    const char *hit = prompt ? strstr (prompt, line) : NULL;
    if (!hit)
        return label;
    const char *start = hit;
    while (start > prompt && start [-1] != '\n')
        start--;
    const char *l = strstr (start, "label \"");
    if (l && l < hit)
        sscanf (l + 7, "%31[^\"]", label);
    return label;
}

//  Across the steps of a task, each of these controls kept the label it had at step 0;
//  prints the estimated prompt tokens per step (characters / 4) and returns the largest.
static size_t
s_check_prompts (const char *task, const char *const *lines, size_t steps_min)
{
    ufo_value_t *prompts = s_prompts (task);
    CHECK (ufo_value_size (prompts) >= steps_min);
    size_t most = 0;
    for (size_t i = 0; i < ufo_value_size (prompts); i++) {
        const char *p = ufo_value_str (ufo_value_list_at (prompts, i));
        size_t tokens = strlen (p) / 4, controls = 0;
        for (const char *q = p; (q = strstr (q, "\n- label \"")); q++)
            controls++;
        most = tokens > most ? tokens : most;
        printf ("  %s step %zu: %zu controls, prompt ~%zu tokens\n", task, i, controls, tokens);
        for (size_t k = 0; lines [k]; k++) {
            char first [32];
            snprintf (first, sizeof first, "%s",
                      s_label_in (ufo_value_str (ufo_value_list_at (prompts, 0)), lines [k]));
            const char *now = s_label_in (p, lines [k]);
            if (*now && strcmp (now, first))
                UFO_FAIL_ ("%s: step %zu gives '%s' label %s, step 0 gave %s", task, i, lines [k],
                           now, first);
        }
    }
    ufo_value_destroy (&prompts);
    return most;
}

static int
s_run (const char *session, const char *subtask, int64_t xid, const ufo_value_t **result_p,
       ufo_value_t **lines_p)
{
    const char *config = afx_config_ex (false, "", "");
    const char *file = afx_subtask (session, subtask, xid, "", "");
    int rc = afx_run_subtask (config, file, RUN_MS, lines_p);
    *result_p = afx_result (*lines_p);
    if (rc != 0 || strcmp (ufo_value_map_str (*result_p, "status", ""), "FINISH")) {
        char *dump = ufo_json_dump (*lines_p, 0, NULL);
        fprintf (stderr, "ufo-app output:\n%s\n", dump);
        free (dump);
    }
    return rc;
}

UFO_TEST (test_zenity_forms)
{
    REQUIRE (afx_llm_start ("ground_forms.json") == 0);
    char out [600];
    snprintf (out, sizeof out, "%s/forms.out", afx_.broker.dir);
    const char *argv [] = { "zenity", "--forms", "--title", "Contact", "--text", "Your details",
                            "--add-entry", "First name", "--add-entry", "Last name",
                            "--add-entry", "Email", "--add-combo", "Member",
                            "--combo-values", "yes|no", NULL };
    pid_t pid = 0;
    int64_t xid = s_spawn (argv, out, "Contact", &pid);
    REQUIRE (xid);
    const ufo_value_t *result = NULL;
    ufo_value_t *lines = NULL;
    CHECK_INT (s_run ("g-forms", "Fill in the contact form: Ada, Lovelace, ada@example.org, member yes; then OK",
                      xid, &result, &lines), 0);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 6);
    //  zenity's own output: the fields in order, separated by |
    CHECK_INT (s_reap (pid, AFX_WAIT_MS), 0);
    char *text = afx_read (out);
    CHECK_STR (text, "Ada|Lovelace|ada@example.org|yes\n");
    free (text);
    static const char *const stable [] = { "name \"First name\"", "name \"Email\"", "name \"OK\"",
                                           "type ComboBox, name \"Member\"", NULL };
    s_check_prompts ("g-forms", stable, 6);
    ufo_value_destroy (&lines);
}

UFO_TEST (test_zenity_list)
{
    REQUIRE (afx_llm_start ("ground_list.json") == 0);
    char out [600];
    snprintf (out, sizeof out, "%s/list.out", afx_.broker.dir);
    const char *argv [] = { "zenity", "--list", "--title", "Fruit", "--text", "Pick one",
                            "--column", "Name", "--column", "Colour", "--column", "Stock",
                            "apple", "red", "yes", "banana", "yellow", "no", "cherry", "red", "yes",
                            NULL };
    pid_t pid = 0;
    int64_t xid = s_spawn (argv, out, "Fruit", &pid);
    REQUIRE (xid);
    const ufo_value_t *result = NULL;
    ufo_value_t *lines = NULL;
    CHECK_INT (s_run ("g-list", "Pick the fruit whose colour is yellow", xid, &result, &lines), 0);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (s_reap (pid, AFX_WAIT_MS), 0);
    char *text = afx_read (out);
    CHECK_STR (text, "banana\n");           //  zenity prints the first column of the row
    free (text);
    static const char *const stable [] = { "name \"yellow\"", "name \"OK\"", NULL };
    s_check_prompts ("g-list", stable, 2);
    ufo_value_destroy (&lines);
}

UFO_TEST (test_calculator_advanced)
{
    REQUIRE (afx_llm_start ("ground_calculator.json") == 0);
    const char *argv [] = { "gnome-calculator", NULL };
    pid_t pid = 0;
    int64_t xid = s_spawn (argv, NULL, "Calculator", &pid);
    REQUIRE (xid);
    const ufo_value_t *result = NULL;
    ufo_value_t *lines = NULL;
    CHECK_INT (s_run ("g-calc", "Switch to Advanced mode and compute 5 factorial", xid, &result,
                      &lines), 0);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)), "120");
    //  the display, read by the test on its own: the editable display holds the result
    char *text = afx_text (xid);
    CHECK_STR (text, "120");
    free (text);
    static const char *const stable [] = { "name \"Mode selection\"", "type Button, name \"5\"",
                                           "type Button, name \"=\"", NULL };
    size_t most = s_check_prompts ("g-calc", stable, 7);
    //  what the model saw in Advanced mode: the GTK4 drop-downs show their selection, the
    //  display its content, and no toolkit class name appears anywhere
    ufo_value_t *prompts = s_prompts ("g-calc");
    const char *last = ufo_value_str (ufo_value_list_at (prompts, ufo_value_size (prompts) - 1));
    CHECK (last && strstr (last, "type ComboBox") && strstr (last, "value \"Degrees\""));
    CHECK (last && strstr (last, "type Edit") && strstr (last, "value \"120\""));
    for (size_t i = 0; i < ufo_value_size (prompts); i++) {
        const char *p = ufo_value_str (ufo_value_list_at (prompts, i));
        CHECK (!strstr (p, "name \"Gtk"));
    }
    ufo_value_destroy (&prompts);
    //  Advanced mode offers ~65 controls: the text-mode prompt stays small
    CHECK (most < 4000);
    kill (pid, SIGKILL);
    s_reap (pid, AFX_WAIT_MS);
    ufo_value_destroy (&lines);
}

int
main (void)
{
    if (afx_setup ("ground") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_zenity_forms);
    AFX_RUN (test_zenity_list);
    AFX_RUN (test_calculator_advanced);
    afx_teardown ();
    return UFO_TEST_END ();
}
