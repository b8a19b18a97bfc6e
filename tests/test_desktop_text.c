/*  test_desktop_text.c - reading a control's text (`texts`) with a real GTK3 entry (zenity):
    answered from the cache when the latest snapshot read the whole text and the toolkit
    reports every change by an event (GTK3), read from the application otherwise: after
    another client changed the text (no snapshot in between), and when the text is longer
    than the snapshot's excerpt. */
#include "ufo_desktop.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "desktop_fixture.h"
#include "ufo_test.h"
#include <sys/wait.h>

#define WAIT_MS 60000

static ufo_desktop_t *
s_open (void)
{
    ufo_value_t *opts = ufo_json_parse_str (
        "{\"launchers\": {\"zenity\": [\"zenity\", \"--entry\", \"--title=Texts\", \"--text=Name:\"]},"
        " \"action_timeout_ms\": 8000}", NULL);
    ufo_desktop_t *desk = ufo_desktop_new (opts, NULL);
    ufo_value_destroy (&opts);
    return desk;
}

//  The text `texts` gives for the Edit of a fresh snapshot of xid (caller frees), or NULL.
static char *
s_texts (ufo_desktop_t *desk, int64_t xid, bool snapshot_first, char *label, size_t size)
{
    if (snapshot_first) {
        ufo_value_t *snap = dfx_wait_control (desk, xid, "Edit", NULL, WAIT_MS);
        const char *l = snap ? dfx_find (snap, "Edit", NULL) : NULL;
        if (!l) {
            ufo_value_destroy (&snap);
            return NULL;
        }
        snprintf (label, size, "%s", l);
        ufo_value_destroy (&snap);
    }
    ufo_value_t *r = dfx_act (desk, xid, label, "texts", NULL);
    char *text = ufo_value_map_bool (r, "success", false)
               ? ufo_strdup (ufo_value_map_str (r, "text", "")) : NULL;
    if (!text)
        fprintf (stderr, "texts: %s\n", ufo_value_map_str (r, "error", "?"));
    ufo_value_destroy (&r);
    return text;
}

static bool
s_set (ufo_desktop_t *desk, int64_t xid, const char *label, const char *text)
{
    char args [1200];
    snprintf (args, sizeof args, "{\"text\": \"%s\", \"clear_current_text\": true}", text);
    ufo_value_t *r = dfx_act (desk, xid, label, "set_edit_text", args);
    bool ok = ufo_value_map_bool (r, "success", false);
    if (!ok)
        fprintf (stderr, "set_edit_text: %s\n", ufo_value_map_str (r, "error", "?"));
    ufo_value_destroy (&r);
    return ok;
}

UFO_TEST (test_texts_cache_and_application)
{
    ufo_desktop_t *desk = s_open ();
    ufo_desktop_t *other = s_open ();       //  another client of the same application
    REQUIRE (desk && other);
    int pid = ufo_desktop_launch (desk, "zenity", NULL);
    REQUIRE (pid > 0);
    int64_t xid = dfx_wait_window (desk, pid, "Texts", WAIT_MS);
    REQUIRE (xid);
    char label [32] = "", olabel [32] = "";
    char *text = s_texts (desk, xid, true, label, sizeof label);
    REQUIRE (text);
    CHECK_STR (text, "");
    free (text);

    //  our own change: a snapshot after it, then `texts` (from the cache on GTK3)
    REQUIRE (s_set (desk, xid, label, "first text"));
    text = s_texts (desk, xid, true, label, sizeof label);
    CHECK_STR (text ? text : "(failed)", "first text");
    free (text);
    //  again without a snapshot in between
    text = s_texts (desk, xid, false, label, sizeof label);
    CHECK_STR (text ? text : "(failed)", "first text");
    free (text);

    //  another client changes the text; no snapshot here: the change's events make `texts`
    //  ask the application
    text = s_texts (other, xid, true, olabel, sizeof olabel);
    free (text);
    REQUIRE (s_set (other, xid, olabel, "changed elsewhere"));
    text = s_texts (desk, xid, false, label, sizeof label);
    CHECK_STR (text ? text : "(failed)", "changed elsewhere");
    free (text);

    //  longer than the snapshot's excerpt (120 characters): the whole text all the same
    char longer [401];
    for (int i = 0; i < 400; i++)
        longer [i] = (char) ('a' + i % 26);
    longer [400] = '\0';
    REQUIRE (s_set (desk, xid, label, longer));
    text = s_texts (desk, xid, true, label, sizeof label);
    CHECK_STR (text ? text : "(failed)", longer);
    free (text);
    //  non-ASCII text, read back exactly
    REQUIRE (s_set (desk, xid, label, "Zo\\u00eb \\u2013 caf\\u00e9"));
    text = s_texts (desk, xid, true, label, sizeof label);
    CHECK_STR (text ? text : "(failed)", "Zo\xc3\xab \xe2\x80\x93 caf\xc3\xa9");
    free (text);

    kill (pid, SIGTERM);
    waitpid (pid, NULL, 0);
    ufo_desktop_destroy (&other);
    ufo_desktop_destroy (&desk);
}

int
main (void)
{
    if (dfx_session_start () < 0)
        return 1;
    UFO_RUN (test_texts_cache_and_application);
    dfx_session_stop ();
    return UFO_TEST_END ();
}
