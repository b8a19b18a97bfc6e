/*  test_app_web.c - the AppAgent fills a web form in Chromium end to end through
    `ufo-app --subtask` in text mode: the scripted model (tests/data/app_agent/ground_web.json)
    finds every control by the name, value or state the prompt shows - the field by its label,
    the select wrapped in its label with its selection as value, the option of the opened
    select, the check box's state, the page's result line - never by a label known in advance.
    The outcome is checked without the agents: the page's result line, read by the test. */
#include "ufo_clock.h"
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "app_fixture.h"
#include <spawn.h>

extern char **environ;

#define RUN_MS 180000

UFO_TEST (test_chromium_order)
{
    REQUIRE (afx_llm_start ("ground_web.json") == 0);
    const char *src = getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR;
    char url [1200], profile [700];
    snprintf (url, sizeof url, "file://%s/tests/data/web/wrapped.html", src);
    snprintf (profile, sizeof profile, "--user-data-dir=%s/chromium", afx_.broker.dir);
    char *argv [] = { "chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                      "--no-default-browser-check", "--disable-gpu", "--window-size=900,700",
                      profile, url, NULL };
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) == 0);
    int64_t xid = dfx_wait_window (afx_.desk, pid, "Pizza order", AFX_WAIT_MS);
    REQUIRE (xid);
    //  the page is on the accessibility bus once its last paragraph is
    ufo_value_t *snap = dfx_wait_control (afx_.desk, xid, "Text", "Nothing ordered yet.", AFX_WAIT_MS);
    REQUIRE (snap);
    ufo_value_destroy (&snap);
    const char *config = afx_config_ex (false, "", "");
    const char *file = afx_subtask ("w-order", "Order a large pizza with extra cheese for Ada", xid,
                                    "", "");
    const char *args [] = { "--subtask", file, "--config", config, "--broker", afx_.broker.cmd, NULL };
    ufo_value_t *lines = NULL;
    CHECK_INT (afx_run_app (args, RUN_MS, &lines), 0);
    const ufo_value_t *result = afx_result (lines);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    if (strcmp (ufo_value_map_str (result, "status", ""), "FINISH")) {
        char *dump = ufo_json_dump (lines, 0, NULL);
        fprintf (stderr, "ufo-app output:\n%s\n", dump);
        free (dump);
    }
    CHECK_STR (ufo_value_str (ufo_value_list_at (ufo_value_map_get (result, "results"), 0)),
               "Ordered: Ada, Large, extra cheese");
    //  the page's own account, read by the test
    snap = dfx_wait_control (afx_.desk, xid, "Text", "Ordered: Ada, Large, extra cheese", AFX_WAIT_MS);
    CHECK (snap != NULL);
    ufo_value_destroy (&snap);
    ufo_value_destroy (&lines);
    kill (pid, SIGTERM);
    int64_t end = ufo_time_mono_ms () + 5000;
    while (waitpid (pid, NULL, WNOHANG) == 0 && ufo_time_mono_ms () < end)
        ufo_desktop_iterate (afx_.desk, 50);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, WNOHANG);
}

int
main (void)
{
    if (afx_setup ("web") < 0) {
        fprintf (stderr, "set-up failed\n");
        afx_teardown ();
        return 1;
    }
    AFX_RUN (test_chromium_order);
    afx_teardown ();
    return UFO_TEST_END ();
}
