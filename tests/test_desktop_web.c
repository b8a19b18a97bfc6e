/*  test_desktop_web.c - a web form in Chromium as a model sees it (system test, real
    browser; tests/data/web/wrapped.html): Chromium puts a heading's and a paragraph's text
    in children of their own, wraps a select in its label (<label>Size <select>), keeps a
    closed select's options hidden inside it, and its entries are editable without taking
    EditableText calls. Each is read once, the select is offered with its selection as value,
    set_edit_text types what the entry would not take, an option is chosen from the open
    select, and the page's own result line shows what was filled in. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "desktop_fixture.h"
#include "ufo_desktop.h"
#include "ufo_value.h"
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define WAIT_MS 60000           //  generous: 2 shared cores under load
#define streq(a, b) (strcmp ((a), (b)) == 0)

//  Number of controls of `type` whose name starts with `prefix`.
static int
s_count (const ufo_value_t *snap, const char *type, const char *prefix)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    int n = 0;
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        n += streq (ufo_value_map_str (c, "control_type", ""), type)
          && strncmp (ufo_value_map_str (c, "control_text", ""), prefix, strlen (prefix)) == 0;
    }
    return n;
}

//  The value of the first control of `type` named `name`, or NULL.
static const char *
s_value (const ufo_value_t *snap, const char *type, const char *name)
{
    const ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), type)
        &&  streq (ufo_value_map_str (c, "control_text", ""), name))
            return ufo_value_map_str (c, "value", "");
    }
    return NULL;
}

//  Runs an action on the control of `type` named `name` (found in a fresh snapshot, bounded
//  wait); returns the result (caller owns) or NULL if the control never showed.
static ufo_value_t *
s_act_on (ufo_desktop_t *desk, int64_t xid, const char *type, const char *name,
          const char *function, const char *args)
{
    ufo_value_t *snap = dfx_wait_control (desk, xid, type, name, WAIT_MS);
    const char *label = snap ? dfx_find (snap, type, name) : NULL;
    ufo_value_t *r = label ? dfx_act (desk, xid, label, function, args) : NULL;
    if (!ufo_value_map_bool (r, "success", false))
        fprintf (stderr, "%s on %s '%s': %s\n", function, type, name,
                 r ? ufo_value_map_str (r, "error", "") : "not found");
    ufo_value_destroy (&snap);
    return r;
}

static bool
s_ok (ufo_value_t *r)
{
    bool ok = ufo_value_map_bool (r, "success", false);
    ufo_value_destroy (&r);
    return ok;
}

//  Snapshots until the control of `type` named `name` has value `want`; bounded.
static bool
s_wait_value (ufo_desktop_t *desk, int64_t xid, const char *type, const char *name,
              const char *want)
{
    int64_t end = ufo_time_mono_ms () + WAIT_MS / 2;
    while (ufo_time_mono_ms () < end) {
        ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, NULL);
        ufo_value_t *snap = ufo_desktop_op_run (desk, &op);
        const char *value = s_value (snap, type, name);
        bool same = value && streq (value, want);
        ufo_value_destroy (&snap);
        if (same)
            return true;
        ufo_desktop_iterate (desk, 100);
    }
    fprintf (stderr, "%s '%s' never had the value '%s'\n", type, name, want);
    return false;
}

UFO_TEST (test_chromium_form)
{
    REQUIRE (dfx_session_start () == 0);
    ufo_error_t err = { 0 };
    ufo_desktop_t *desk = ufo_desktop_new (NULL, &err);
    REQUIRE (desk);
    const char *src = getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : UFO_SOURCE_DIR;
    char url [1200], profile [700];
    snprintf (url, sizeof url, "file://%s/tests/data/web/wrapped.html", src);
    snprintf (profile, sizeof profile, "--user-data-dir=%s/chromium", getenv ("UFO_DESKTOP_SESSION"));
    char *argv [] = { "chromium", "--no-sandbox", "--force-renderer-accessibility", "--no-first-run",
                      "--no-default-browser-check", "--disable-gpu", "--window-size=900,700",
                      profile, url, NULL };
    pid_t pid;
    REQUIRE (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) == 0);
    int64_t xid = dfx_wait_window (desk, pid, "Pizza order", WAIT_MS);
    REQUIRE (xid);
    ufo_value_t *snap = dfx_wait_control (desk, xid, "Text", "Nothing ordered yet.", WAIT_MS);
    REQUIRE (snap);
    //  a heading's and a paragraph's text once, not again from their text children
    CHECK_INT (s_count (snap, "Text", "Order a pizza"), 1);
    CHECK_INT (s_count (snap, "Text", "Fill in the form"), 1);
    CHECK_INT (s_count (snap, "Text", "Nothing ordered yet."), 1);
    //  the select inside its label, closed: offered with its selection, its options not
    const char *size = s_value (snap, "ComboBox", "Size");
    CHECK (size && streq (size, "Medium"));
    CHECK_INT (s_count (snap, "MenuItem", ""), 0);
    CHECK (dfx_find (snap, "Edit", "Your name") != NULL);
    CHECK (dfx_find (snap, "Edit", "Phone number") != NULL);       //  its placeholder
    ufo_value_destroy (&snap);
    //  the entry refuses EditableText: the text is typed, and the check reads it back
    ufo_value_t *r = s_act_on (desk, xid, "Edit", "Your name", "set_edit_text", "{\"text\": \"Ada\"}");
    CHECK (r && streq (ufo_value_map_str (r, "text", ""), "Ada"));
    CHECK (s_ok (r));
    //  the select opened: its options offered; one chosen
    CHECK (s_ok (s_act_on (desk, xid, "ComboBox", "Size", "click_input", NULL)));
    CHECK (s_ok (s_act_on (desk, xid, "MenuItem", "Large", "click_input", NULL)));
    CHECK (s_wait_value (desk, xid, "ComboBox", "Size", "Large"));
    //  (the popup stays open after its option's action, on screen too: a fresh handle sees
    //  the same); a click elsewhere closes it
    CHECK (s_ok (s_act_on (desk, xid, "CheckBox", "Extra cheese", "click_input", NULL)));
    //  closed: the long-lived handle offers its options no more (Chromium sends no event a
    //  client sees; the snapshot after an action re-reads states, and the child list of what
    //  was opened or closed)
    snap = dfx_wait_control (desk, xid, "ComboBox", "Size", WAIT_MS);
    CHECK (snap != NULL);
    CHECK_INT (snap ? s_count (snap, "MenuItem", "") : -1, 0);
    ufo_value_destroy (&snap);
    CHECK (s_ok (s_act_on (desk, xid, "Button", "Order", "click_input", NULL)));
    //  the page's own account of what was filled in
    snap = dfx_wait_control (desk, xid, "Text", "Ordered:", WAIT_MS);
    const char *label = snap ? dfx_find (snap, "Text", "Ordered: Ada, Large, extra cheese") : NULL;
    if (!label && snap) {
        const ufo_value_t *cs = ufo_value_map_get (snap, "controls");
        for (size_t i = 0; i < ufo_value_size (cs); i++)
            fprintf (stderr, "  %s '%s'\n", ufo_value_map_str (ufo_value_list_at (cs, i), "control_type", ""),
                     ufo_value_map_str (ufo_value_list_at (cs, i), "control_text", ""));
    }
    CHECK (label != NULL);
    if (label) {
        r = dfx_act (desk, xid, label, "texts", NULL);
        CHECK_STR (ufo_value_map_str (r, "text", ""), "Ordered: Ada, Large, extra cheese");
        ufo_value_destroy (&r);
    }
    ufo_value_destroy (&snap);
    kill (pid, SIGTERM);
    int64_t end = ufo_time_mono_ms () + 5000;
    while (waitpid (pid, NULL, WNOHANG) == 0 && ufo_time_mono_ms () < end)
        ufo_desktop_iterate (desk, 50);
    kill (pid, SIGKILL);
    waitpid (pid, NULL, WNOHANG);
    ufo_desktop_destroy (&desk);
    dfx_session_stop ();
}

int
main (void)
{
    signal (SIGPIPE, SIG_IGN);
    UFO_RUN (test_chromium_form);
    return UFO_TEST_END ();
}
