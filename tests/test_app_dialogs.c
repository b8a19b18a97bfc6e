/*  test_app_dialogs.c - the AppAgent works on its application, not on one window: dialogs
    the application opens are handled in the same subtask (issue 18). `ufo-app --subtask`
    on real applications in a private virtual desktop, the scripted LLM server choosing
    every control by what the prompt shows (tests/data/app_agent/NAME.json, `vars`), a real
    ufo-broker. Outcomes are checked by the test itself: the saved file on disk. */
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"
#include <sys/wait.h>

#define RUN_MS 180000

//  Writes a subtask file for application app, window xid, with this request and subtask.
static const char *
s_subtask (const char *session, const char *app, int64_t xid, const char *request,
           const char *subtask)
{
    static char path [400];
    snprintf (path, sizeof path, "%s/subtask-%s.json", afx_.broker.dir, session);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "session", session);
    ufo_value_map_set_str (body, "task", session);
    char logs [500];
    snprintf (logs, sizeof logs, "%s/logs", afx_.broker.dir);
    ufo_value_map_set_str (body, "log_root", logs);
    ufo_value_map_set_str (body, "subtask", subtask);
    ufo_value_map_set_str (body, "request", request);
    ufo_value_map_set_str (body, "application", app);
    ufo_value_t *window = ufo_value_new_map ();
    ufo_value_map_set_int (window, "xid", xid);
    ufo_value_map_set (body, "window", &window);
    ufo_value_map_set_int (body, "max_steps", 30);
    ufo_value_t *file = ufo_value_new_map ();
    ufo_value_map_set (file, "body", &body);
    char *text = ufo_json_dump (file, 0, NULL);
    afx_write (path, text);
    free (text);
    ufo_value_destroy (&file);
    return path;
}

//  The user messages of request.log, one string per step (caller owns the list).
static ufo_value_t *
s_prompts (const char *task)
{
    char path [600];
    ufo_value_t *lines = afx_lines (afx_log_path (task, "request.log", path, sizeof path));
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        char *text = ufo_json_dump (ufo_value_list_at (lines, i), 0, NULL);
        ufo_value_list_push_str (out, text ? text : "");
        free (text);
    }
    ufo_value_destroy (&lines);
    return out;
}

UFO_TEST (test_mousepad_save_as)
{
    //  two lines, ^s, and the Save As dialog that opens: one subtask, one AppAgent. The
    //  scripted model finds the file name field by its caption ("Name"), Save by its name
    int pid = 0;
    int64_t xid = afx_mousepad_scripted ("save_as.json", &pid, NULL);
    REQUIRE (xid);
    char target [500], request [800];
    snprintf (target, sizeof target, "%s/notes-%d.txt", afx_.broker.dir, (int) getpid ());
    unlink (target);
    snprintf (request, sizeof request, "Write the lines 'milk' and 'eggs' in Mousepad. Save the note "
              "as the file %s and leave Mousepad open.", target);
    const char *file = s_subtask ("s-save-as", "mousepad", xid, request,
                                  "Type the two lines into the document and save it with Ctrl+S");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (afx_config (""), file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    REQUIRE (result);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    //  5 steps, plus waits while the prompt shows Save disabled (GTK enables it a moment
    //  after the name is set) and Save pressed again while the dialog stays (GTK checks the
    //  typed folder asynchronously; that can outlast the click's effect wait)
    int64_t steps = ufo_value_map_int (result, "steps", -1);
    CHECK (steps >= 5 && steps < 30);
    //  the file, read by the test
    char *saved = afx_read (target);
    REQUIRE (saved);
    CHECK_STR (saved, "milk\neggs");
    free (saved);
    //  the steps: typing and ^s on the main window, then the dialog (named as such in the
    //  heading, with the window behind it) until it closed, the last step on the main
    //  window again, now titled with the file. (The scripted model waits while the window
    //  it expects has not appeared yet, so the number of steps on each varies.)
    char path [600];
    ufo_value_t *prompts = s_prompts ("s-save-as");
    ufo_value_t *resp = afx_lines (afx_log_path ("s-save-as", "response.log", path, sizeof path));
    size_t n = ufo_value_size (prompts), dialogs = 0, first_dialog = 0, last_dialog = 0;
    REQUIRE (n == (size_t) steps && ufo_value_size (resp) == n);
    for (size_t i = 0; i < n; i++) {
        const char *p = ufo_value_str (ufo_value_list_at (prompts, i));
        const ufo_value_t *r = ufo_value_list_at (resp, i);
        bool dialog = ufo_value_map_bool (ufo_value_map_get (r, "Window"), "dialog", false);
        CHECK_CONTAINS (p, dialog ? "[Control List of \\\"mousepad\\\", dialog \\\"Save As\\\":]"
                                  : "[Control List of \\\"mousepad\\\", window \\\"");
        CHECK (!dialog || strstr (p, "The dialog is in front of the window \\\"*Untitled 1 - Mousepad\\\""));
        if (dialog && !dialogs++)
            first_dialog = i;
        if (dialog)
            last_dialog = i;
        //  typing, ^s and the file name succeed (a later press of Save may meet the dialog
        //  going away: that one may fail)
        const char *function = ufo_value_map_str (r, "FunctionCall", "");
        const ufo_value_t *ok = ufo_value_list_at (ufo_value_map_get (r, "ActionSuccess"), 0);
        if ((!strcmp (function, "set_edit_text") || !strcmp (function, "keyboard_input"))
        &&  !ufo_value_map_bool (ok, "success", false))
            UFO_FAIL_ ("step %zu (%s) failed: %s", i, function, ufo_value_map_str (ok, "error", "?"));
    }
    CHECK (dialogs >= 2 && first_dialog >= 2 && last_dialog + 1 == n - 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, 0), "FunctionCall", ""), "set_edit_text");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (resp, first_dialog), "FunctionCall", ""), "set_edit_text");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (prompts, n - 1)), "notes-");
    CHECK_CONTAINS (ufo_value_map_str (result, "comment", ""), "notes-");
    ufo_value_destroy (&prompts);
    ufo_value_destroy (&resp);
    ufo_value_destroy (&lines);
    afx_mousepad_kill (pid, xid);
}

//  Starts argv (a child of the test, in its own process group) with Qt's accessibility on.
//  Returns the pid or -1.
static pid_t
s_spawn (const char *const *argv)
{
    pid_t pid = fork ();
    if (pid == 0) {
        setpgid (0, 0);
        setenv ("QT_ACCESSIBILITY", "1", 1);
        setenv ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1", 1);
        int devnull = open ("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2 (devnull, STDOUT_FILENO);
            dup2 (devnull, STDERR_FILENO);
        }
        execvp (argv [0], (char *const *) argv);
        _exit (127);
    }
    return pid;
}

static void
s_stop (pid_t pid)
{
    if (pid > 0) {
        kill (pid, SIGKILL);
        waitpid (pid, NULL, 0);
    }
}

UFO_TEST (test_featherpad_save)
{
    //  a Qt5 editor: text typed, ^s, Qt's own Save As dialog handled in the same subtask
    const char *argv [] = { "featherpad", "--standalone", NULL };
    pid_t pid = s_spawn (argv);
    REQUIRE (pid > 0);
    int64_t xid = dfx_wait_window (afx_.desk, pid, NULL, AFX_WAIT_MS);
    ufo_value_t *ready = xid ? dfx_wait_control (afx_.desk, xid, "Edit", NULL, AFX_WAIT_MS) : NULL;
    if (!ready) {
        s_stop (pid);
        REQUIRE (ready);
    }
    ufo_value_destroy (&ready);
    REQUIRE (afx_llm_start ("featherpad_save.json") == 0);
    char target [500], request [800];
    snprintf (target, sizeof target, "%s/qt-note-%d.txt", afx_.broker.dir, (int) getpid ());
    unlink (target);
    snprintf (request, sizeof request, "Write 'hello from featherpad' in FeatherPad. Save the note as "
              "the file %s and keep the editor open.", target);
    const char *file = s_subtask ("s-featherpad", "featherpad", xid, request,
                                  "Type the text into the document and save it with Ctrl+S");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (afx_config (""), file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    CHECK (result && !strcmp (ufo_value_map_str (result, "status", ""), "FINISH"));
    //  the file, read by the test (FeatherPad ends the last line with a newline)
    char *saved = afx_read (target);
    CHECK (saved && (!strcmp (saved, "hello from featherpad\n") || !strcmp (saved, "hello from featherpad")));
    free (saved);
    //  the dialog was a step of this subtask, named as a dialog; the last step is back on
    //  the main window, titled with the file
    char path [600];
    ufo_value_t *resp = afx_lines (afx_log_path ("s-featherpad", "response.log", path, sizeof path));
    size_t n = ufo_value_size (resp), dialogs = 0;
    for (size_t i = 0; i < n; i++)
        dialogs += ufo_value_map_bool (ufo_value_map_get (ufo_value_list_at (resp, i), "Window"), "dialog", false);
    CHECK (n >= 5 && n < 30 && dialogs >= 2 && dialogs + 3 <= n);
    const ufo_value_t *last = ufo_value_map_get (ufo_value_list_at (resp, n ? n - 1 : 0), "Window");
    CHECK (!ufo_value_map_bool (last, "dialog", true));
    CHECK_CONTAINS (ufo_value_map_str (last, "title", ""), "qt-note-");
    ufo_value_destroy (&resp);
    ufo_value_destroy (&lines);
    s_stop (pid);
}

//  True when the application's main window xid lists a control of this type and name,
//  read by the test itself (its own desktop handle, a fresh snapshot).
static bool
s_has_control (int64_t xid, const char *type, const char *name)
{
    ufo_desktop_t *desk = ufo_desktop_new (NULL, NULL);
    if (!desk)
        return false;
    ufo_value_t *snap = dfx_wait_control (desk, xid, type, name, 20000);
    bool found = snap != NULL;
    ufo_value_destroy (&snap);
    ufo_desktop_destroy (&desk);
    return found;
}

UFO_TEST (test_clocks_world_clock)
{
    //  GTK4: a dialog opened from the header bar (type a city into its search entry, pick
    //  the first result, Add), then a dialog opened from the main menu's popover (About),
    //  closed again: one subtask
    const char *argv [] = { "gnome-clocks", NULL };
    pid_t pid = s_spawn (argv);
    REQUIRE (pid > 0);
    int64_t xid = dfx_wait_window (afx_.desk, pid, "Clocks", AFX_WAIT_MS);
    ufo_value_t *ready = xid ? dfx_wait_control (afx_.desk, xid, "Button", "Add Location", AFX_WAIT_MS) : NULL;
    if (!ready) {
        s_stop (pid);
        REQUIRE (ready);
    }
    ufo_value_destroy (&ready);
    REQUIRE (afx_llm_start ("clocks_world.json") == 0);
    const char *file = s_subtask ("s-clocks", "gnome-clocks", xid,
                                  "Add a world clock for the city of Berlin. Then look at the About box of Clocks.",
                                  "Add Berlin as a world clock, then open About Clocks from the main menu and close it");
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_subtask (afx_config (""), file, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    CHECK (result && !strcmp (ufo_value_map_str (result, "status", ""), "FINISH"));
    //  the outcome, read by the test: Berlin is listed in the main window; no dialog is left
    CHECK (s_has_control (xid, "ListItem", "Berlin"));
    ufo_value_t *wins = ufo_desktop_windows (afx_.desk, NULL);
    for (size_t i = 0; i < ufo_value_size (wins); i++) {
        const ufo_value_t *w = ufo_value_list_at (wins, i);
        if (ufo_value_map_int (w, "pid", 0) == pid)
            CHECK (!ufo_value_map_bool (w, "dialog", false));
    }
    ufo_value_destroy (&wins);
    //  the steps: set_edit_text in the search entry succeeded; both dialogs were steps of
    //  this subtask, named in the heading
    char path [600];
    ufo_value_t *resp = afx_lines (afx_log_path ("s-clocks", "response.log", path, sizeof path));
    bool typed = false, add = false, about = false;
    for (size_t i = 0; i < ufo_value_size (resp); i++) {
        const ufo_value_t *r = ufo_value_list_at (resp, i);
        const ufo_value_t *w = ufo_value_map_get (r, "Window");
        const ufo_value_t *ok = ufo_value_list_at (ufo_value_map_get (r, "ActionSuccess"), 0);
        if (!strcmp (ufo_value_map_str (r, "FunctionCall", ""), "set_edit_text"))
            typed = ufo_value_map_bool (ok, "success", false);
        add |= ufo_value_map_bool (w, "dialog", false)
            && !strcmp (ufo_value_map_str (w, "title", ""), "Add a New World Clock");
        about |= ufo_value_map_bool (w, "dialog", false) && !strcmp (ufo_value_map_str (w, "title", ""), "About");
    }
    CHECK (typed);
    CHECK (add);
    CHECK (about);
    ufo_value_destroy (&resp);
    ufo_value_destroy (&lines);
    s_stop (pid);
}

int
main (void)
{
    if (afx_setup ("dialogs") < 0) {
        fprintf (stderr, "cannot set up the desktop and the broker\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_mousepad_save_as);
    AFX_RUN (test_featherpad_save);
    AFX_RUN (test_clocks_world_clock);
    afx_teardown ();
    return UFO_TEST_END ();
}
