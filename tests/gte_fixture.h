/*  gte_fixture.h - gnome-text-editor 43 (GTK 4.8) prepared for the list-row tests
    (test_desktop_gtklist): three documents, two of them in its list of recent
    documents, and a first start so that it has a session file. Needs a desktop session
    (desktop_fixture.h) already started. Header-only, for test programs. */
#ifndef GTE_FIXTURE_H_INCLUDED
#define GTE_FIXTURE_H_INCLUDED

#include "desktop_fixture.h"
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define GTE_WAIT_MS 60000

//  The documents; the first two are recent documents of the editor.
static const char *const gte_names [] = { "alpha_notes.txt", "beta_plan.txt", "gamma_todo.txt" };
static char gte_dir [256];      //  their folder: $XDG_RUNTIME_DIR/docs

static inline bool
gte_write_ (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    if (!f)
        return false;
    bool ok = fputs (text, f) >= 0;
    return fclose (f) == 0 && ok;
}

//  Writes the documents into gte_dir and the first two into the editor's recent documents
//  ($XDG_DATA_HOME/org.gnome.TextEditor/recently-used.xbel, as the editor writes it).
static inline bool
gte_documents (void)
{
    const char *run = getenv ("XDG_RUNTIME_DIR"), *data = getenv ("XDG_DATA_HOME");
    if (!run || !data)
        return false;
    snprintf (gte_dir, sizeof (gte_dir), "%.200s/docs", run);
    char path [512], xbel [4096];
    if (mkdir (gte_dir, 0700) != 0)
        return false;
    for (int i = 0; i < 3; i++) {
        snprintf (path, sizeof (path), "%s/%s", gte_dir, gte_names [i]);
        if (!gte_write_ (path, gte_names [i]))
            return false;
    }
    mkdir (data, 0700);
    snprintf (path, sizeof (path), "%.400s/org.gnome.TextEditor", data);
    if (mkdir (path, 0700) != 0)
        return false;
    size_t n = (size_t) snprintf (xbel, sizeof (xbel),
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xbel version=\"1.0\"\n"
        " xmlns:bookmark=\"http://www.freedesktop.org/standards/desktop-bookmarks\"\n"
        " xmlns:mime=\"http://www.freedesktop.org/standards/shared-mime-info\">\n");
    for (int i = 0; i < 2; i++)
        n += (size_t) snprintf (xbel + n, sizeof (xbel) - n,
            "<bookmark href=\"file://%s/%s\" added=\"2024-01-0%dT10:00:00Z\""
            " modified=\"2024-01-0%dT10:00:00Z\" visited=\"2024-01-0%dT10:00:00Z\"><info>"
            "<metadata owner=\"http://freedesktop.org\"><bookmark:applications>"
            "<bookmark:application name=\"gnome-text-editor\" exec=\"'gnome-text-editor %%u'\""
            " modified=\"2024-01-0%dT10:00:00Z\" count=\"1\"/></bookmark:applications>"
            "</metadata></info></bookmark>\n", gte_dir, gte_names [i], i + 1, i + 1, i + 1, i + 1);
    snprintf (xbel + n, sizeof (xbel) - n, "</xbel>\n");
    snprintf (path, sizeof (path), "%.400s/org.gnome.TextEditor/recently-used.xbel", data);
    return gte_write_ (path, xbel);
}

//  True once no window of pid is left (bounded).
static inline bool
gte_wait_gone_ (ufo_desktop_t *desk, int pid, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < end) {
        ufo_value_t *wins = ufo_desktop_windows (desk, NULL);
        bool left = false;
        for (size_t i = 0; wins && i < ufo_value_size (wins); i++)
            left = left || ufo_value_map_int (ufo_value_list_at (wins, i), "pid", 0) == pid;
        ufo_value_destroy (&wins);
        if (!left)
            return true;
        ufo_desktop_iterate (desk, 100);
    }
    return false;
}

//  Starts the editor once so that it writes its session file, and stops it: gnome-text-editor
//  43 started without one builds its recent-documents popover empty ("Invalid type
//  'EditorSidebarModel'", a bug of the application). Returns true when done.
static inline bool
gte_first_start (ufo_desktop_t *desk)
{
    extern char **environ;
    char path [512];
    snprintf (path, sizeof (path), "%.400s/org.gnome.TextEditor/session.gvariant",
              getenv ("XDG_DATA_HOME"));
    char *const argv [] = { (char *) "gnome-text-editor", NULL };
    pid_t pid = 0;
    if (posix_spawnp (&pid, argv [0], NULL, NULL, argv, environ) != 0)
        return false;
    bool ok = dfx_wait_window (desk, pid, "Text Editor", GTE_WAIT_MS) != 0;
    struct stat sb;
    int64_t end = ufo_time_mono_ms () + GTE_WAIT_MS;
    while (ok && stat (path, &sb) != 0 && ufo_time_mono_ms () < end)
        ufo_desktop_iterate (desk, 100);
    kill (pid, SIGTERM);
    ok = ok && stat (path, &sb) == 0 && gte_wait_gone_ (desk, pid, GTE_WAIT_MS);
    kill (pid, SIGKILL);        //  its file is written (at start-up): nothing to lose
    waitpid (pid, NULL, 0);
    return ok;
}

#endif
