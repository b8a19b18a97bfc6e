/*  test_desktop_labels.c - stable labels (ufo_desktop_label.c) without a display. White-box:
    it includes the desktop module's private header to build snapshots' label entries by
    hand, the way the walk does: node key ("bus path"), identity ("ROLE|name|ancestor roles")
    and centre. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_desktop_int.h"

typedef struct { const char *key, *ident; int cx, cy; } s_spec_t;

//  A snapshot of n controls; returns their labels in list order ("3,1,2").
static const char *
s_snap (ufo_dwin_t *win, const s_spec_t *spec, size_t n)
{
    GPtrArray *fresh = g_ptr_array_new_with_free_func (ufo_dlabel_free_);
    for (size_t i = 0; i < n; i++) {
        ufo_dlabel_t *l = calloc (1, sizeof (*l));
        l->index = i;
        l->key = strdup (spec [i].key);
        l->ident = strdup (spec [i].ident);
        l->cx = spec [i].cx;
        l->cy = spec [i].cy;
        g_ptr_array_add (fresh, l);
    }
    ufo_desktop_labels_assign_ (win, fresh);
    g_ptr_array_unref (fresh);
    static char out [256];
    out [0] = 0;
    for (guint i = 0; i < win->labels->len; i++) {
        char one [16];
        snprintf (one, sizeof one, "%s%d", i ? "," : "",
                  ((ufo_dlabel_t *) g_ptr_array_index (win->labels, i))->label);
        strncat (out, one, sizeof out - strlen (out) - 1);
    }
    return out;
}

UFO_TEST (test_stable_labels)
{
    ufo_dwin_t win = { 0 };
    win.labels = g_ptr_array_new_with_free_func (ufo_dlabel_free_);
    //  the first snapshot numbers in list order
    s_spec_t a [] = {
        { ":1.5 /a/1", "43|Open|22/", 10, 10 },
        { ":1.5 /a/2", "43|Save|22/", 50, 10 },
        { ":1.5 /a/3", "61|Name|22/", 10, 50 },
    };
    CHECK_STR (s_snap (&win, a, 3), "1,2,3");
    //  a notification bar appears first in the list and the title changes: the others keep
    //  their labels, the bar gets a new number
    s_spec_t b [] = {
        { ":1.5 /a/9", "29|Saved|22/", 10, 0 },
        { ":1.5 /a/1", "43|Open|22/", 10, 30 },
        { ":1.5 /a/2", "43|Save|22/", 50, 30 },
        { ":1.5 /a/3", "61|Name|22/", 10, 70 },
    };
    CHECK_STR (s_snap (&win, b, 4), "4,1,2,3");
    //  a rebuilt widget (new path, same role, name and place in the tree) keeps its label;
    //  of two such candidates the closer one takes it
    s_spec_t c [] = {
        { ":1.5 /a/9", "29|Saved|22/", 10, 0 },
        { ":1.5 /a/72", "43|Open|22/", 300, 300 },
        { ":1.5 /a/71", "43|Open|22/", 12, 31 },
        { ":1.5 /a/2", "43|Save|22/", 50, 30 },
        { ":1.5 /a/3", "61|Name|22/", 10, 70 },
    };
    CHECK_STR (s_snap (&win, c, 5), "4,5,1,2,3");
    //  the same path with another role is another control; a control that went away frees
    //  its number for nobody; position alone never matches
    s_spec_t d [] = {
        { ":1.5 /a/2", "62|Save|22/", 50, 30 },
        { ":1.5 /a/8", "61|Email|22/", 10, 70 },
    };
    CHECK_STR (s_snap (&win, d, 2), "6,7");
    CHECK_INT (win.next_label, 7);
    //  finding a label: only numbers of the latest snapshot
    CHECK (ufo_desktop_label_find_ (&win, "6") != NULL);
    CHECK_STR (ufo_desktop_label_find_ (&win, "7")->key, ":1.5 /a/8");
    CHECK (ufo_desktop_label_find_ (&win, "1") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, "0") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, "-6") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, "6x") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, "99999999999999999999") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, "") == NULL);
    CHECK (ufo_desktop_label_find_ (&win, NULL) == NULL);
    CHECK (ufo_desktop_label_find_ (NULL, "6") == NULL);
    //  an empty snapshot, then the window's controls back: new numbers
    CHECK_STR (s_snap (&win, NULL, 0), "");
    CHECK_STR (s_snap (&win, d, 2), "8,9");
    g_ptr_array_unref (win.labels);
}

int
main (void)
{
    UFO_RUN (test_stable_labels);
    return UFO_TEST_END ();
}
