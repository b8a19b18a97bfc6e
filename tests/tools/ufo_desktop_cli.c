/*  ufo-desktop - the desktop layer from the command line, for debugging and demos.

    ufo-desktop windows                         list application windows (JSON)
    ufo-desktop controls XID [tree|raw]         control snapshot of a window (JSON); raw: before
                                                the naming rules, with "captions" (for recording)
    ufo-desktop prompt XID                      the window's controls as the AppAgent's prompt
                                                lists them (one line each: what a model reads)
    ufo-desktop act XID LABEL FUNCTION [ARGS]   one action; LABEL "-" for none; ARGS JSON
    ufo-desktop shot XID|screen PATH [annotate] screenshot to PNG (annotated with the controls)
    ufo-desktop keys KEYS                       parse pywinauto key syntax (JSON key events)
    ufo-desktop shell                           the commands above, one per line from stdin, in
                                                one process: labels stay put between them

    Runs against $DISPLAY and its session bus (see scripts/desktop-session). Labels only live
    inside one process, so `act` takes a snapshot first (in `shell` the labels of the earlier
    snapshots are kept, as the AppAgent keeps them between steps). Exit status 0 on success. */
#include "ufo_prelude.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
s_usage (void)
{
    fprintf (stderr, "usage: ufo-desktop windows | controls XID [tree|raw] | prompt XID | act XID LABEL FUNCTION "
                     "[ARGS] | shot XID|screen PATH [annotate] | keys KEYS | shell\n");
    return 2;
}

static void
s_print (const ufo_value_t *value)
{
    char *text = ufo_json_dump (value, 0, NULL);
    puts (text);
    free (text);
}

static ufo_value_t *
s_snapshot (ufo_desktop_t *desk, int64_t xid, bool tree, bool raw)
{
    ufo_value_t *opts = ufo_value_new_map ();
    ufo_value_map_set_bool (opts, "tree", tree);
    ufo_value_map_set_bool (opts, "raw", raw);
    ufo_desktop_op_t *op = ufo_desktop_controls_begin (desk, xid, opts);
    ufo_value_destroy (&opts);
    return ufo_desktop_op_run (desk, &op);
}

static int s_command (ufo_desktop_t *desk, int argc, char **argv);
static int s_shell (ufo_desktop_t *desk);

int
main (int argc, char **argv)
{
    if (argc < 2)
        return s_usage ();
    ufo_error_t err = { 0 };
    if (strcmp (argv [1], "keys") == 0 && argc == 3) {
        ufo_value_t *events = ufo_desktop_keys_parse (argv [2], &err);
        if (!events) {
            fprintf (stderr, "ufo-desktop: %s\n", err.message);
            return 1;
        }
        s_print (events);
        ufo_value_destroy (&events);
        return 0;
    }
    ufo_desktop_t *desk = ufo_desktop_new (NULL, &err);
    if (!desk) {
        fprintf (stderr, "ufo-desktop: %s\n", err.message);
        return 1;
    }
    int rc = strcmp (argv [1], "shell") == 0 && argc == 2 ? s_shell (desk) : s_command (desk, argc, argv);
    ufo_desktop_destroy (&desk);
    return rc;
}

//  One command (argv as in main); returns its exit status.
static int
s_command (ufo_desktop_t *desk, int argc, char **argv)
{
    ufo_error_t err = { 0 };
    int rc = 0;
    int64_t xid = argc > 2 ? strtoll (argv [2], NULL, 0) : 0;
    if (strcmp (argv [1], "windows") == 0) {
        ufo_value_t *wins = ufo_desktop_windows (desk, &err);
        if (wins)
            s_print (wins);
        else {
            fprintf (stderr, "ufo-desktop: %s\n", err.message);
            rc = 1;
        }
        ufo_value_destroy (&wins);
    }
    else if (strcmp (argv [1], "controls") == 0 && argc >= 3) {
        ufo_value_t *r = s_snapshot (desk, xid, argc > 3 && strcmp (argv [3], "tree") == 0,
                                    argc > 3 && strcmp (argv [3], "raw") == 0);
        s_print (r);
        rc = ufo_value_map_bool (r, "success", false) ? 0 : 1;
        ufo_value_destroy (&r);
    }
    else if (strcmp (argv [1], "prompt") == 0 && argc == 3) {
        //  the line format of prompts/app_agent (label, type, name, value, states)
        ufo_value_t *r = s_snapshot (desk, xid, false, false);
        const ufo_value_t *controls = ufo_value_map_get (r, "controls");
        const ufo_value_t *win = ufo_value_map_get (r, "window");
        if (ufo_value_map_bool (r, "success", false))
            printf ("window \"%s\"%s, %zu controls\n", ufo_value_map_str (win, "title", ""),
                    ufo_value_map_bool (win, "dialog", false) ? " (dialog)" : "",
                    ufo_value_size (controls));
        else
            fprintf (stderr, "ufo-desktop: %s\n", ufo_value_map_str (r, "error", "failed"));
        for (size_t i = 0; i < ufo_value_size (controls); i++) {
            ufo_value_t *e = ufo_desktop_control_prompt (ufo_value_list_at (controls, i));
            printf ("- label \"%s\", type %s, name \"%s\"", ufo_value_map_str (e, "label", ""),
                    ufo_value_map_str (e, "type", ""), ufo_value_map_str (e, "name", ""));
            if (*ufo_value_map_str (e, "value", ""))
                printf (", value \"%s\"", ufo_value_map_str (e, "value", ""));
            if (*ufo_value_map_str (e, "states", ""))
                printf (" [%s]", ufo_value_map_str (e, "states", ""));
            putchar ('\n');
            ufo_value_destroy (&e);
        }
        rc = ufo_value_map_bool (r, "success", false) ? 0 : 1;
        ufo_value_destroy (&r);
    }
    else if (strcmp (argv [1], "act") == 0 && argc >= 5) {
        ufo_value_t *snap = s_snapshot (desk, xid, false, false);
        ufo_value_destroy (&snap);
        ufo_value_t *args = argc > 5 ? ufo_json_parse_str (argv [5], &err) : NULL;
        if (argc > 5 && !args) {
            fprintf (stderr, "ufo-desktop: ARGS: %s\n", err.message);
            rc = 2;
        }
        else {
            const char *label = strcmp (argv [3], "-") == 0 ? NULL : argv [3];
            ufo_desktop_op_t *op = ufo_desktop_act_begin (desk, xid, label, argv [4], args);
            ufo_value_t *r = ufo_desktop_op_run (desk, &op);
            s_print (r);
            rc = ufo_value_map_bool (r, "success", false) ? 0 : 1;
            ufo_value_destroy (&r);
        }
        ufo_value_destroy (&args);
    }
    else if (strcmp (argv [1], "shot") == 0 && argc >= 4) {
        bool screen = strcmp (argv [2], "screen") == 0;
        ufo_image_t *img = screen ? ufo_desktop_capture_screen (desk, &err)
                                  : ufo_desktop_capture_window (desk, xid, &err);
        if (img && argc > 4 && strcmp (argv [4], "annotate") == 0 && !screen) {
            ufo_value_t *snap = s_snapshot (desk, xid, false, false);
            ufo_value_t *marks = NULL;
            ufo_image_t *annotated = ufo_image_annotate (img, ufo_value_map_get (snap, "controls"),
                                                         &marks);
            s_print (marks);
            ufo_value_destroy (&marks);
            ufo_value_destroy (&snap);
            ufo_image_destroy (&img);
            img = annotated;
        }
        if (!img || ufo_image_save_png (img, argv [3], 6, &err) != 0) {
            fprintf (stderr, "ufo-desktop: %s\n", err.message);
            rc = 1;
        }
        ufo_image_destroy (&img);
    }
    else
        rc = s_usage ();
    return rc;
}

//  Commands from stdin, one a line: up to four words, the rest of the line is one argument
//  (an act's ARGS JSON). Returns the status of the last command.
static int
s_shell (ufo_desktop_t *desk)
{
    char line [65536];
    int rc = 0;
    while (fgets (line, sizeof line, stdin)) {
        line [strcspn (line, "\r\n")] = 0;
        char *argv [7] = { "ufo-desktop" };
        int argc = 1;
        char *p = line;
        while (argc < 6) {
            p += strspn (p, " \t");
            if (!*p)
                break;
            if (argc == 5) {            //  the rest of the line
                argv [argc++] = p;
                break;
            }
            argv [argc++] = p;
            p += strcspn (p, " \t");
            if (*p)
                *p++ = 0;
        }
        if (argc == 1 || argv [1][0] == '#')
            continue;
        rc = strcmp (argv [1], "shell") == 0 ? s_usage () : s_command (desk, argc, argv);
        fflush (stdout);
    }
    return rc;
}
