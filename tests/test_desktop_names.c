/*  test_desktop_names.c - the naming rules and prompt lines of controls (ufo_desktop_name.c)
    on accessibility trees recorded from real applications (the files in tests/data/names/, written
    by `ufo-desktop controls XID raw`: the controls before naming plus the captions), and on
    small hand-made cases for what no recording shows. No display needed. */
#include "ufo_test.h"
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_utf8.h"
#include "ufo_value.h"

#define streq(a, b) (strcmp ((a), (b)) == 0)

static ufo_value_t *
s_load (const char *name)
{
    char path [1024];
    const char *dir = getenv ("UFO_TEST_DATA") ? getenv ("UFO_TEST_DATA") : "../tests";
    snprintf (path, sizeof path, "%s/data/names/%s", dir, name);
    ufo_error_t err = { 0 };
    ufo_value_t *v = ufo_json_parse_file (path, NULL, &err);
    if (!v)
        fprintf (stderr, "%s: %s\n", path, err.message);
    return v;
}

//  Names the recorded snapshot's controls as the walk does; returns the control list.
static ufo_value_t *
s_named (ufo_value_t *snap)
{
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    ufo_desktop_name_controls (controls, ufo_value_map_get (snap, "captions"),
                               ufo_value_path (snap, "window.rect"));
    return controls;
}

//  Index of the control of this type whose rectangle's top is `top` (the recording's
//  geometry identifies the fields independently of any name), or -1.
static int
s_at_row (const ufo_value_t *controls, const char *type, int64_t top)
{
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), type)
        &&  ufo_value_int (ufo_value_list_at (ufo_value_map_get (c, "control_rect"), 1)) == top)
            return (int) i;
    }
    return -1;
}

static int
s_named_index (const ufo_value_t *controls, const char *type, const char *name)
{
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), type)
        &&  streq (ufo_value_map_str (c, "control_text", ""), name))
            return (int) i;
    }
    return -1;
}

//  No name in the list is empty or a toolkit class name; no two of a type are equal; the
//  helper fields are gone.
static void
s_check_clean (const ufo_value_t *controls)
{
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        const char *name = ufo_value_map_str (c, "control_text", "");
        CHECK (*name);
        CHECK (!ufo_desktop_class_name (name));
        CHECK (!strstr (name, "Gtk"));
        CHECK (!ufo_value_map_get (c, "labelled_by"));
        CHECK (!ufo_value_map_get (c, "container"));
        CHECK (!ufo_value_map_get (c, "description"));
        CHECK (!ufo_value_map_get (c, "scope"));
        CHECK (!ufo_value_map_get (c, "content"));
        for (size_t k = i + 1; k < ufo_value_size (controls); k++) {
            const ufo_value_t *d = ufo_value_list_at (controls, k);
            if (streq (ufo_value_map_str (c, "control_type", ""), ufo_value_map_str (d, "control_type", "")))
                CHECK (!streq (name, ufo_value_map_str (d, "control_text", "")));
        }
    }
}

//  zenity --forms (GTK3): each caption is a separate label listed AFTER its field, and the
//  fields have no accessible name; the caption beside each field names it.
UFO_TEST (test_caption_after_field)
{
    ufo_value_t *snap = s_load ("zenity_forms.json");
    REQUIRE (snap);
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    //  the recording really has unnamed fields whose caption comes later in the list
    int first = s_at_row (controls, "Edit", 428);
    int first_caption = s_at_row (controls, "Text", 428);
    REQUIRE (first >= 0 && first_caption >= 0);
    CHECK (first < first_caption);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) first), "control_text", "?"), "");
    s_named (snap);
    static const struct { const char *type; int64_t top; const char *name; } want [] = {
        { "Edit", 428, "First name" }, { "Edit", 468, "Last name" }, { "Edit", 508, "Secret" },
        { "ComboBox", 548, "Member" },
    };
    for (size_t i = 0; i < sizeof (want) / sizeof (want [0]); i++) {
        int at = s_at_row (controls, want [i].type, want [i].top);
        REQUIRE (at >= 0);
        CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) at), "control_text", ""),
                   want [i].name);
    }
    //  the captions themselves stay in the list, unchanged
    CHECK (s_named_index (controls, "Text", "First name") >= 0);
    CHECK (s_named_index (controls, "Button", "OK") >= 0);
    s_check_clean (controls);
    ufo_value_destroy (&snap);
}

//  gnome-calculator (GTK4): unlabeled widgets are named after their class (GtkMenuButton,
//  GtkButton, GtkImage, GtkSourceView); the description or a placeholder replaces it.
UFO_TEST (test_class_names)
{
    ufo_value_t *snap = s_load ("calculator.json");
    REQUIRE (snap);
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    size_t classes = 0;
    for (size_t i = 0; i < ufo_value_size (controls); i++)
        classes += ufo_desktop_class_name (ufo_value_map_str (ufo_value_list_at (controls, i),
                                                              "control_text", ""));
    CHECK (classes >= 5);           //  the recording has them
    s_named (snap);
    CHECK (s_named_index (controls, "Button", "Mode selection") >= 0);
    CHECK (s_named_index (controls, "Button", "Primary menu") >= 0);
    CHECK (s_named_index (controls, "Button", "Clear Display [Escape]") >= 0);
    CHECK (s_named_index (controls, "Button", "Pi [Ctrl+P]") >= 0);
    CHECK (s_named_index (controls, "Button", "=") >= 0);
    //  the display (no name, no description) gets a placeholder saying where it is
    int display = s_at_row (controls, "Edit", 166);
    REQUIRE (display >= 0);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) display), "control_text", ""),
               "(unnamed, middle)");
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    //  an open GTK4 popover: its items, named; the menu button holding it says "expanded"
    snap = s_load ("calculator_popover.json");
    REQUIRE (snap);
    controls = s_named (snap);
    int advanced = s_named_index (controls, "MenuItem", "Advanced");
    int mode = s_named_index (controls, "Button", "Mode selection");
    CHECK (advanced >= 0 && mode >= 0);
    ufo_value_t *line = ufo_desktop_control_prompt (ufo_value_list_at (controls, (size_t) mode));
    CHECK_STR (ufo_value_map_str (line, "states", ""), "expanded");
    ufo_value_destroy (&line);
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    CHECK (ufo_desktop_class_name ("GtkButton"));
    CHECK (ufo_desktop_class_name ("AdwHeaderBar"));
    CHECK (ufo_desktop_class_name ("QPushButton"));
    CHECK (!ufo_desktop_class_name ("Quit"));
    CHECK (!ufo_desktop_class_name ("Gtk"));
    CHECK (!ufo_desktop_class_name ("QA"));
    CHECK (!ufo_desktop_class_name ("Gtk Button"));
    CHECK (!ufo_desktop_class_name (""));
    CHECK (!ufo_desktop_class_name (NULL));
}

//  zenity --list: cells with the same text ("red", "yes") are told apart by their order.
UFO_TEST (test_duplicates)
{
    ufo_value_t *snap = s_load ("zenity_list.json");
    REQUIRE (snap);
    ufo_value_t *controls = s_named (snap);
    int r1 = s_named_index (controls, "ListItem", "red (1)");
    int r2 = s_named_index (controls, "ListItem", "red (2)");
    CHECK (r1 >= 0 && r2 >= 0 && r1 < r2);
    CHECK (s_named_index (controls, "ListItem", "yes (2)") >= 0);
    CHECK (s_named_index (controls, "ListItem", "banana") >= 0);     //  unique: unchanged
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    //  the nearest named container, when it tells them apart; a control of another type
    //  with the same name is no duplicate
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Button\", \"control_text\": \"Menu\", \"container\": \"Toolbar\","
        "  \"control_rect\": [0, 0, 10, 10]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Menu\", \"container\": \"Sidebar\","
        "  \"control_rect\": [0, 20, 10, 30]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Menu\", \"container\": \"Sidebar\","
        "  \"control_rect\": [0, 40, 10, 50]},"
        " {\"control_type\": \"Text\", \"control_text\": \"Menu\", \"control_rect\": [0, 60, 10, 70]},"
        " {\"control_type\": \"Button\", \"control_text\": \"GtkButton\", \"control_rect\": [0, 80, 10, 90]},"
        " {\"control_type\": \"Button\", \"control_text\": \"\", \"control_rect\": [0, 80, 10, 90]}]", NULL);
    REQUIRE (list);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 100, 100]", NULL);
    ufo_desktop_name_controls (list, NULL, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Menu (in Toolbar)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Menu (in Sidebar, 1)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Menu (in Sidebar, 2)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Menu");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 4), "control_text", ""), "(unnamed, bottom left) (1)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 5), "control_text", ""), "(unnamed, bottom left) (2)");
    ufo_value_destroy (&list);
    //  a container named like the control tells nothing: order decides, names stay unique
    list = ufo_json_parse_str (
        "[{\"control_type\": \"Button\", \"control_text\": \"Menu\", \"control_rect\": [0, 0, 9, 9]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Menu\", \"container\": \"Menu\","
        "  \"control_rect\": [0, 0, 9, 9]}]", NULL);
    ufo_desktop_name_controls (list, NULL, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Menu (1)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Menu (2)");
    ufo_value_destroy (&list);
    ufo_value_destroy (&win);

    //  a large window: 3,000 cells, each name repeated hundreds of times, numbered in order
    //  (duplicates are found by sorting, so this stays fast; no timing is asserted)
    ufo_buf_t big = { 0 };
    ufo_buf_puts (&big, "[");
    for (int i = 0; i < 3000; i++)
        ufo_buf_printf (&big, "%s{\"control_type\": \"ListItem\", \"control_text\": \"%d\","
                        " \"control_rect\": [0, 0, 9, 9]}", i ? "," : "", i % 7);
    ufo_buf_puts (&big, "]");
    list = ufo_json_parse_str (big.data, NULL);
    ufo_buf_free (&big);
    REQUIRE (list);
    ufo_desktop_name_controls (list, NULL, NULL);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "0 (1)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2999), "control_text", ""), "3 (429)");
    ufo_value_destroy (&list);
}

//  The order of the rules: own name, labelled-by, caption (closest; each caption names one
//  field; above when nothing is beside), description, placeholder.
UFO_TEST (test_rule_order)
{
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"Own\", \"labelled_by\": \"By\","
        "  \"control_rect\": [100, 0, 200, 20]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"labelled_by\": \"Street:\","
        "  \"description\": \"tip\", \"control_rect\": [100, 30, 200, 50]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"GtkText\", \"description\": \"Where you live\","
        "  \"control_rect\": [100, 60, 200, 80]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"\", \"control_rect\": [300, 130, 400, 150]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 200, 200, 220]},"
        " {\"control_type\": \"Button\", \"control_text\": \"\", \"description\": \"Send it\","
        "  \"control_rect\": [100, 230, 200, 250]}]", NULL);
    ufo_value_t *captions = ufo_json_parse_str (
        "[{\"text\": \"Far:\", \"rect\": [0, 60, 20, 80]},"
        " {\"text\": \"City:\", \"rect\": [40, 60, 95, 80]},"
        " {\"text\": \"Count\", \"rect\": [300, 105, 360, 125]},"
        " {\"text\": \"GtkLabel\", \"rect\": [40, 200, 95, 220]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 400, 300]", NULL);
    REQUIRE (list && captions && win);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Own");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Street");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "City");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Count");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 4), "control_text", ""), "(unnamed, bottom)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 5), "control_text", ""), "Send it");
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);

    //  a combo box named after its selection (GTK3): the caption names it, the selection is
    //  its value; without a caption its own name stays
    list = ufo_json_parse_str (
        "[{\"control_type\": \"ComboBox\", \"control_text\": \"yes\", \"value\": \"\","
        "  \"control_rect\": [100, 0, 200, 20]},"
        " {\"control_type\": \"ComboBox\", \"control_text\": \"Large\", \"control_rect\": [100, 200, 200, 220]}]", NULL);
    captions = ufo_json_parse_str ("[{\"text\": \"Member:\", \"rect\": [20, 0, 90, 20]}]", NULL);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Member");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "value", ""), "yes");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Large");
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);

    //  a field's own name loses its caption colon (GTK4 names an entry after its mnemonic
    //  label, "Future Value:"); other controls keep theirs
    list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"Future Value:\", \"control_rect\": [0, 0, 9, 9]},"
        " {\"control_type\": \"Text\", \"control_text\": \"my_file.txt\", \"value\": \"my_file.txt\","
        "  \"control_rect\": [0, 0, 9, 9]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Ratio:\", \"control_rect\": [0, 0, 9, 9]}]", NULL);
    ufo_desktop_name_controls (list, NULL, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Future Value");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "my_file.txt");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Ratio:");
    ufo_value_destroy (&list);
    ufo_value_destroy (&win);

    //  bad input is ignored, never a crash
    ufo_desktop_name_controls (NULL, NULL, NULL);
    ufo_value_t *odd = ufo_json_parse_str ("[1, \"x\", {\"control_text\": 3}]", NULL);
    ufo_desktop_name_controls (odd, odd, odd);
    ufo_value_destroy (&odd);
    odd = ufo_json_parse_str ("{\"a\": 1}", NULL);
    ufo_desktop_name_controls (odd, NULL, NULL);
    ufo_value_destroy (&odd);
}

//  mousepad (GTK3, run as root): a warning bar (a label in a box of its own, no info-bar
//  role) sits just above the document's text view, within caption distance. The text view
//  is not named after it: the two share no group. A label of an info bar, alert or
//  notification ("notice") names no field even when it shares one.
UFO_TEST (test_notice_not_caption)
{
    ufo_value_t *snap = s_load ("mousepad_root.json");
    REQUIRE (snap);
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    int view = s_at_row (controls, "Edit", 52);
    REQUIRE (view >= 0);
    //  the recording: the bar's text is a caption above the field, scopes recorded
    const ufo_value_t *cap = ufo_value_list_at (ufo_value_map_get (snap, "captions"), 0);
    CHECK_CONTAINS (ufo_value_map_str (cap, "text", ""), "root account");
    CHECK (ufo_value_size (ufo_value_map_get (cap, "scope")) > 0);
    //  without the scopes (the rule off) the geometry alone would name the view after it
    ufo_value_t *bare = ufo_value_dup (snap);
    ufo_value_map_remove (ufo_value_list_at (ufo_value_map_get (bare, "captions"), 0), "scope");
    s_named (bare);
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (bare, "controls"),
                                                          (size_t) view), "control_text", ""),
                    "root account");
    ufo_value_destroy (&bare);
    s_named (snap);
    const char *name = ufo_value_map_str (ufo_value_list_at (controls, (size_t) view), "control_text", "");
    CHECK (!strstr (name, "root account"));
    CHECK_STR (name, "(unnamed, middle)");
    CHECK (!ufo_value_map_get (ufo_value_list_at (controls, (size_t) view), "scope"));
    //  the warning itself is still offered, as text
    CHECK (s_named_index (controls, "Text", "Warning: you are using the root account. You may harm your system.") >= 0);
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    //  hand-made: a shared group names the field; a notice in the same group does not; a
    //  caption sharing no group does not; a field without a scope takes any caption
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 0, 200, 20],"
        "  \"scope\": [\"/g1\", \"/top\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 100, 200, 120],"
        "  \"scope\": [\"/g2\", \"/top\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 200, 200, 220],"
        "  \"scope\": [\"/g3\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 300, 200, 320]}]", NULL);
    ufo_value_t *captions = ufo_json_parse_str (
        "[{\"text\": \"Name:\", \"rect\": [20, 0, 90, 20], \"scope\": [\"/row1\", \"/top\"]},"
        " {\"text\": \"Saved.\", \"rect\": [20, 100, 90, 120], \"scope\": [\"/g2\"], \"notice\": true},"
        " {\"text\": \"Elsewhere\", \"rect\": [20, 200, 90, 220], \"scope\": [\"/bar\"]},"
        " {\"text\": \"Street\", \"rect\": [20, 300, 90, 320], \"scope\": [\"/bar\"]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 400, 400]", NULL);
    REQUIRE (list && captions && win);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Name");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "(unnamed, top)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "(unnamed, middle)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Street");
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);
    ufo_value_destroy (&win);
}

//  The prompt line: value once and short, on one line; only the states that matter.
UFO_TEST (test_prompt_line)
{
    ufo_value_t *c = ufo_json_parse_str (
        "{\"label\": \"7\", \"control_type\": \"Edit\", \"control_text\": \"Notes\","
        " \"value\": \"line one\\nline two\","
        " \"states\": [\"focusable\", \"editable\", \"focused\", \"active\", \"multi_line\"]}", NULL);
    ufo_value_t *line = ufo_desktop_control_prompt (c);
    CHECK_STR (ufo_value_map_str (line, "label", ""), "7");
    CHECK_STR (ufo_value_map_str (line, "type", ""), "Edit");
    CHECK_STR (ufo_value_map_str (line, "name", ""), "Notes");
    CHECK_STR (ufo_value_map_str (line, "value", ""), "line one line two");
    CHECK_STR (ufo_value_map_str (line, "states", ""), "focused, editable");
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    //  a label's value is its name: not repeated; a long value is cut (UTF-8 safe) with "..."
    c = ufo_json_parse_str ("{\"control_type\": \"Text\", \"control_text\": \"Total\", \"value\": \"Total\","
                            " \"states\": [\"disabled\", \"checked\"]}", NULL);
    line = ufo_desktop_control_prompt (c);
    CHECK_STR (ufo_value_map_str (line, "value", "?"), "");
    CHECK_STR (ufo_value_map_str (line, "states", ""), "disabled, checked");
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    //  a name on one line, cut when long (a label holding a paragraph)
    c = ufo_json_parse_str ("{\"control_type\": \"Text\", \"control_text\": \"Which one.\\nIf unsure, the default.\"}", NULL);
    line = ufo_desktop_control_prompt (c);
    CHECK_STR (ufo_value_map_str (line, "name", "?"), "Which one. If unsure, the default.");
    CHECK_STR (ufo_value_map_str (line, "value", "?"), "");
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    char longname [600];
    strcpy (longname, "{\"control_type\": \"Text\", \"control_text\": \"");
    for (int i = 0; i < 40; i++)
        strcat (longname, "word ");
    strcat (longname, "\"}");
    c = ufo_json_parse_str (longname, NULL);
    line = ufo_desktop_control_prompt (c);
    const char *nm = ufo_value_map_str (line, "name", "");
    CHECK (strlen (nm) <= 123 && strlen (nm) > 100);
    CHECK (strstr (nm, "...") == nm + strlen (nm) - 3);
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    //  nor when it differs by surrounding blanks only (a web label's text "Size " is "Size");
    //  a value that only starts like the name is shown
    c = ufo_json_parse_str ("{\"control_type\": \"Text\", \"control_text\": \"Size\", \"value\": \" Size \\n\"}", NULL);
    line = ufo_desktop_control_prompt (c);
    CHECK_STR (ufo_value_map_str (line, "value", "?"), "");
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    c = ufo_json_parse_str ("{\"control_type\": \"Text\", \"control_text\": \"Size\", \"value\": \"Sizes\"}", NULL);
    line = ufo_desktop_control_prompt (c);
    CHECK_STR (ufo_value_map_str (line, "value", "?"), "Sizes");
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    char big [400];
    strcpy (big, "{\"value\": \"");
    for (int i = 0; i < 60; i++)
        strcat (big, "é");
    strcat (big, "\"}");
    c = ufo_json_parse_str (big, NULL);
    line = ufo_desktop_control_prompt (c);
    const char *v = ufo_value_map_str (line, "value", "");
    CHECK (strlen (v) <= 83 && strlen (v) > 60);
    CHECK (strstr (v, "...") == v + strlen (v) - 3);
    CHECK (ufo_utf8_valid (v, strlen (v)));
    ufo_value_destroy (&line);
    ufo_value_destroy (&c);
    line = ufo_desktop_control_prompt (NULL);
    CHECK_STR (ufo_value_map_str (line, "name", "?"), "");
    ufo_value_destroy (&line);
}

//  GTK4's file chooser (gnome-text-editor's Save As, recorded): the column headers and the
//  path bar's folder button have no name, no description and no labelled-by; they are named
//  by the label inside them ("content"). Icon-only buttons with neither stay placeholders,
//  and a description still wins over content.
UFO_TEST (test_content_names)
{
    ufo_value_t *snap = s_load ("gtk4_save_as.json");
    REQUIRE (snap);
    ufo_value_t *controls = s_named (snap);
    static const char *const headers [] = { "Name", "Size", "Type", "Modified" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (headers); i++)
        CHECK (s_named_index (controls, "Button", headers [i]) >= 0);
    int folder = s_named_index (controls, "Button", "tmp");
    CHECK (folder >= 0);
    CHECK (s_named_index (controls, "Button", "Create Folder") >= 0);      //  its tooltip
    CHECK (s_named_index (controls, "Edit", "Name") >= 0);                 //  not the header's
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Button\", \"control_text\": \"\", \"description\": \"Mode selection\","
        "  \"content\": \"Basic\", \"control_rect\": [0, 0, 10, 10]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Own\", \"content\": \"Shown\","
        "  \"control_rect\": [0, 20, 10, 30]},"
        " {\"control_type\": \"Button\", \"control_text\": \"\", \"content\": \"GtkLabel\","
        "  \"control_rect\": [0, 40, 10, 50]},"
        " {\"control_type\": \"Button\", \"control_text\": \"\", \"content\": \"  Open  \","
        "  \"control_rect\": [0, 60, 10, 70]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 100, 100]", NULL);
    REQUIRE (list && win);
    ufo_desktop_name_controls (list, NULL, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Mode selection");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Own");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "(unnamed, left)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Open");
    for (size_t i = 0; i < 4; i++)
        CHECK (!ufo_value_map_get (ufo_value_list_at (list, i), "content"));
    ufo_value_destroy (&list);
    ufo_value_destroy (&win);
}

//  Qt names a field in a group box after the box: that name comes after a caption. The entry
//  of an editable combo box is named with its combo box (whose own name is its selection,
//  so its caption names both) and takes no caption of its own.
UFO_TEST (test_weak_and_combo_names)
{
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Spinner\", \"control_text\": \"Behavior\", \"container\": \"Behavior\","
        "  \"control_rect\": [200, 10, 300, 30]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"Behavior\", \"container\": \"Behavior\","
        "  \"control_rect\": [200, 300, 300, 320]},"
        " {\"control_type\": \"Button\", \"control_text\": \"Behavior\", \"container\": \"Behavior\","
        "  \"control_rect\": [200, 400, 300, 420]},"
        " {\"control_type\": \"ComboBox\", \"control_text\": \"xterm\", \"control_rect\": [200, 100, 300, 120]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"in_combo\": true, \"value\": \"xterm\","
        "  \"control_rect\": [200, 100, 280, 120]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"in_combo\": true,"
        "  \"control_rect\": [0, 500, 50, 520]}]", NULL);
    ufo_value_t *captions = ufo_json_parse_str (
        "[{\"text\": \"Start size:\", \"rect\": [100, 10, 190, 30]},"
        " {\"text\": \"Default $TERM\", \"rect\": [100, 100, 190, 120]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 400, 600]", NULL);
    REQUIRE (list && captions && win);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Start size");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Behavior");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Behavior");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Default $TERM");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "value", ""), "xterm");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 4), "control_text", ""), "Default $TERM");
    //  an entry not listed right after its combo box: a placeholder, no caption
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 5), "control_text", ""), "(unnamed, bottom left)");
    for (size_t i = 0; i < ufo_value_size (list); i++)
        CHECK (!ufo_value_map_get (ufo_value_list_at (list, i), "in_combo"));
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);
    ufo_value_destroy (&win);
}

//  GTK4 names an unnamed widget after its type, the application's own types included
//  ("EditorSourceView"): the shape of such names, which the snapshot drops in GTK4
//  applications.
UFO_TEST (test_type_names)
{
    static const char *const types [] = { "EditorSourceView", "ClocksWindow", "GtkButton",
                                          "AdwTabBar", "MathDisplay", "Gtk4Widget", "MyX" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (types); i++)
        CHECK (ufo_desktop_type_name (types [i]));
    static const char *const names [] = { "Save", "Save As", "OK", "MS", "A1", "x2", "iPhone",
                                          "Mode selection", "Ctrl+K", "Open…", "100%", "",
                                          "Name:", "AB", "File_Name" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (names); i++)
        CHECK (!ufo_desktop_type_name (names [i]));
    CHECK (!ufo_desktop_type_name (NULL));
}

//  A label in a bar (a header bar's subtitle "/tmp/probe" just above gnome-text-editor's text
//  view, a tool bar's text) names no document or multi-line text field below it, while a
//  single-line field under the same label, or a text view under a plain label, still takes it.
UFO_TEST (test_bar_not_caption_of_content)
{
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [0, 50, 400, 300],"
        "  \"states\": [\"editable\", \"multi_line\"], \"scope\": [\"/top\"]},"
        " {\"control_type\": \"Document\", \"control_text\": \"\", \"control_rect\": [420, 50, 800, 300],"
        "  \"states\": [], \"scope\": [\"/top\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [0, 350, 200, 370],"
        "  \"states\": [\"editable\"], \"scope\": [\"/top\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [0, 420, 400, 600],"
        "  \"states\": [\"editable\", \"multi_line\"], \"scope\": [\"/top\"]}]", NULL);
    const char *caps =
        "[{\"text\": \"/tmp/probe\", \"rect\": [150, 30, 250, 45], \"scope\": [\"/top\"]%s},"
        " {\"text\": \"Draft\", \"rect\": [550, 30, 650, 45], \"scope\": [\"/top\"]%s},"
        " {\"text\": \"Search\", \"rect\": [0, 330, 100, 345], \"scope\": [\"/top\"]%s},"
        " {\"text\": \"Notes:\", \"rect\": [0, 400, 100, 415], \"scope\": [\"/top\"]}]";
    char with_bar [1024], without [1024];
    snprintf (with_bar, sizeof with_bar, caps, ", \"bar\": true", ", \"bar\": true", ", \"bar\": true");
    snprintf (without, sizeof without, caps, "", "", "");
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 800, 600]", NULL);
    //  the rule off (no "bar"): the geometry names the text view and the document after the bar
    ufo_value_t *bare = ufo_value_dup (list);
    ufo_value_t *captions = ufo_json_parse_str (without, NULL);
    REQUIRE (list && bare && captions && win);
    ufo_desktop_name_controls (bare, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (bare, 0), "control_text", ""), "/tmp/probe");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (bare, 1), "control_text", ""), "Draft");
    ufo_value_destroy (&bare);
    ufo_value_destroy (&captions);
    captions = ufo_json_parse_str (with_bar, NULL);
    REQUIRE (captions);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "(unnamed, top left)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "(unnamed, top right)");
    //  a one-line field below a bar's label may still be named by it; a plain label above a
    //  text view still names it
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Search");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Notes");
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);
    ufo_value_destroy (&win);
}

//  gnome-text-editor 43 (GTK4, recorded): the header bar shows the file's name and folder
//  ("/tmp", the subtitle) just above the text view; GTK4 leaves the header bar's panels
//  unnamed, so the walk knows those labels by the window's title, which holds their text
//  ("bar"). Neither names the text view, even where no group separates them.
UFO_TEST (test_header_bar_not_caption)
{
    ufo_value_t *snap = s_load ("gte_header.json");
    REQUIRE (snap);
    ufo_value_t *captions = ufo_value_map_get (snap, "captions");
    REQUIRE (ufo_value_size (captions) == 2);
    for (size_t i = 0; i < 2; i++)
        CHECK (ufo_value_map_bool (ufo_value_list_at (captions, i), "bar", false));
    int view = s_at_row (ufo_value_map_get (snap, "controls"), "Edit", 47);
    REQUIRE (view >= 0);
    //  without scopes (a header bar sharing a group with the view) and without the bar
    //  rule, the geometry names the text view after the subtitle
    ufo_value_t *bare = ufo_value_dup (snap);
    ufo_value_t *bare_caps = ufo_value_map_get (bare, "captions");
    for (size_t i = 0; i < 2; i++) {
        ufo_value_map_remove (ufo_value_list_at (bare_caps, i), "scope");
        ufo_value_map_remove (ufo_value_list_at (bare_caps, i), "bar");
    }
    s_named (bare);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (bare, "controls"),
                                                     (size_t) view), "control_text", ""), "/tmp");
    ufo_value_destroy (&bare);
    //  the bar rule alone keeps it unnamed
    for (size_t i = 0; i < 2; i++)
        ufo_value_map_remove (ufo_value_list_at (captions, i), "scope");
    ufo_value_t *controls = s_named (snap);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) view), "control_text", ""),
               "(unnamed, middle)");
    CHECK (s_named_index (controls, "Text", "/tmp") >= 0);      //  the subtitle is still offered
    s_check_clean (controls);
    ufo_value_destroy (&snap);
}

//  Qt's "Fixed tab width:" is a check box that captions the spin box after it on its row: a
//  field with no caption takes the text of a check box or radio button ending in ":" directly
//  to its left; one not ending in ":", one on another row, or one in another group does not.
UFO_TEST (test_check_box_caption)
{
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"CheckBox\", \"control_text\": \"Fixed tab width:\","
        "  \"control_rect\": [10, 10, 150, 30], \"scope\": [\"/p\"]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"\", \"control_rect\": [160, 10, 260, 30],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"CheckBox\", \"control_text\": \"Bold\", \"control_rect\": [10, 50, 150, 70],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"\", \"control_rect\": [160, 50, 260, 70],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"RadioButton\", \"control_text\": \"Limit to:\", \"control_rect\": [10, 90, 150, 110],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [160, 130, 260, 150],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"CheckBox\", \"control_text\": \"Other:\", \"control_rect\": [10, 170, 150, 190],"
        "  \"scope\": [\"/q\"]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"\", \"control_rect\": [160, 170, 260, 190],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"CheckBox\", \"control_text\": \"Wrap at:\", \"control_rect\": [10, 210, 150, 230],"
        "  \"scope\": [\"/p\"]},"
        " {\"control_type\": \"Spinner\", \"control_text\": \"\", \"control_rect\": [300, 210, 400, 230],"
        "  \"scope\": [\"/p\"]}]", NULL);
    //  a real caption on the last row wins over the check box
    ufo_value_t *captions = ufo_json_parse_str (
        "[{\"text\": \"Columns\", \"rect\": [200, 210, 290, 230], \"scope\": [\"/p\"]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 600, 300]", NULL);
    REQUIRE (list && captions && win);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Fixed tab width");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "Fixed tab width");
    CHECK (strncmp (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "(unnamed", 8) == 0);
    CHECK (strncmp (ufo_value_map_str (ufo_value_list_at (list, 5), "control_text", ""), "(unnamed", 8) == 0);
    CHECK (strncmp (ufo_value_map_str (ufo_value_list_at (list, 7), "control_text", ""), "(unnamed", 8) == 0);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 9), "control_text", ""), "Columns");
    s_check_clean (list);
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);
    ufo_value_destroy (&win);
}

//  geany 1.38's document properties (GTK3, recorded): the permissions are a grid of unnamed
//  check boxes, "Read:" "Write:" "Execute:" above the columns, "Owner:" "Group:" "Other:"
//  left of the rows. One caption per field named three of the nine after one caption each
//  ("Owner", "Write", ...) and left six "(unnamed ...)"; each is named by its row and column.
//  The three dates (one text, three times) are told apart by the captions of their rows.
UFO_TEST (test_grid_captions)
{
    ufo_value_t *snap = s_load ("geany_props.json");
    REQUIRE (snap);
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    //  the recording really has nine unnamed check boxes
    size_t unnamed = 0;
    for (size_t i = 0; i < ufo_value_size (controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        unnamed += streq (ufo_value_map_str (c, "control_type", ""), "CheckBox")
                && !*ufo_value_map_str (c, "control_text", "");
    }
    CHECK (unnamed == 9);
    s_named (snap);
    //  by geometry: rows at 399 / 421 / 443, columns at x 382 / 452 / 522
    static const char *const rows [] = { "Owner", "Group", "Other" };
    static const char *const cols [] = { "Read", "Write", "Execute" };
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) {
            int found = -1;
            for (size_t i = 0; i < ufo_value_size (controls); i++) {
                const ufo_value_t *c = ufo_value_list_at (controls, i);
                const ufo_value_t *rect = ufo_value_map_get (c, "control_rect");
                if (streq (ufo_value_map_str (c, "control_type", ""), "CheckBox")
                &&  ufo_value_int (ufo_value_list_at (rect, 0)) == 382 + 70 * k
                &&  ufo_value_int (ufo_value_list_at (rect, 1)) == 399 + 22 * r)
                    found = (int) i;
            }
            REQUIRE (found >= 0);
            char want [64];
            snprintf (want, sizeof want, "%s, %s", rows [r], cols [k]);
            CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) found),
                                          "control_text", ""), want);
        }
    //  the check box with a name of its own keeps it
    CHECK (s_named_index (controls, "CheckBox", "(only inside Geany)") >= 0);
    //  equal texts, each beside its own caption
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) s_at_row (controls, "Text", 272)),
                                  "control_text", ""), "Thu Nov 26 18:04:08 2026 (Modified)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) s_at_row (controls, "Text", 299)),
                                  "control_text", ""), "Thu Nov 26 18:04:08 2026 (Changed)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) s_at_row (controls, "Text", 326)),
                                  "control_text", ""), "Thu Nov 26 18:04:08 2026 (Accessed)");
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    //  no grid: a form's row with two fields ("Size:" [w] [h]) under one heading spanning
    //  both, and a second row with one field. The heading is no column caption: the first
    //  field takes the row's caption, the others stay as the one-caption rule leaves them
    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 40, 180, 60]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [200, 40, 280, 60]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"control_rect\": [100, 70, 180, 90]}]", NULL);
    ufo_value_t *captions = ufo_json_parse_str (
        "[{\"text\": \"Dimensions\", \"rect\": [10, 10, 290, 30]},"
        " {\"text\": \"Size:\", \"rect\": [10, 40, 90, 60]},"
        " {\"text\": \"Name:\", \"rect\": [10, 70, 90, 90]},"
        " {\"text\": \"Notes\", \"rect\": [300, 200, 390, 220]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 400, 300]", NULL);
    REQUIRE (list && captions && win);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "Size");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Name");
    CHECK (!strchr (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), ','));
    s_check_clean (list);
    ufo_value_destroy (&list);
    //  equal names whose rows share one caption (or have none) are numbered as before
    list = ufo_json_parse_str (
        "[{\"control_type\": \"Text\", \"control_text\": \"0\", \"control_rect\": [100, 40, 180, 60]},"
        " {\"control_type\": \"Text\", \"control_text\": \"0\", \"control_rect\": [200, 40, 280, 60]},"
        " {\"control_type\": \"Text\", \"control_text\": \"0\", \"control_rect\": [100, 240, 180, 260]}]", NULL);
    ufo_desktop_name_controls (list, captions, win);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "0 (1)");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "0 (3)");
    ufo_value_destroy (&list);
    ufo_value_destroy (&captions);
    ufo_value_destroy (&win);
}

//  geany 1.38 (GTK3, recorded): the editor (Scintilla) has no name, no caption, no tooltip;
//  it sits in the notebook page of its file, "hello.c". A text view or document is named by
//  what holds it; a single-line field is not (its caption names it), nor is a text view
//  whose holder has a type name (GTK4), and a description comes first.
UFO_TEST (test_content_container)
{
    ufo_value_t *snap = s_load ("geany_main.json");
    REQUIRE (snap);
    ufo_value_t *controls = ufo_value_map_get (snap, "controls");
    int view = s_at_row (controls, "Edit", 121);
    REQUIRE (view >= 0);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) view), "control_text", "?"), "");
    s_named (snap);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, (size_t) view), "control_text", ""), "hello.c");
    CHECK (s_named_index (controls, "TabItem", "hello.c") >= 0);     //  the tab itself stays
    //  the symbol tree: one cell per row (the walk's renderer rule), all named
    CHECK (s_named_index (controls, "ListItem", "Functions") >= 0);
    CHECK (s_named_index (controls, "ListItem", "main [1]") >= 0);
    s_check_clean (controls);
    ufo_value_destroy (&snap);

    ufo_value_t *list = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Search\","
        "  \"control_rect\": [0, 0, 90, 20], \"states\": [\"editable\"]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"EditorPage\","
        "  \"control_rect\": [0, 30, 90, 90], \"states\": [\"editable\", \"multi_line\"]},"
        " {\"control_type\": \"Document\", \"control_text\": \"\", \"container\": \"Preview\","
        "  \"control_rect\": [100, 30, 190, 90]},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Notes\","
        "  \"description\": \"Comment\", \"control_rect\": [0, 100, 90, 190], \"states\": [\"multi_line\"]}]", NULL);
    ufo_value_t *win = ufo_json_parse_str ("[0, 0, 200, 200]", NULL);
    REQUIRE (list && win);
    ufo_desktop_name_controls (list, NULL, win);
    CHECK (strncmp (ufo_value_map_str (ufo_value_list_at (list, 0), "control_text", ""), "(unnamed", 8) == 0);
    CHECK (strncmp (ufo_value_map_str (ufo_value_list_at (list, 1), "control_text", ""), "(unnamed", 8) == 0);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 2), "control_text", ""), "Preview");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (list, 3), "control_text", ""), "Comment");
    s_check_clean (list);
    ufo_value_destroy (&list);
    ufo_value_destroy (&win);
}

int
main (void)
{
    UFO_RUN (test_content_container);
    UFO_RUN (test_grid_captions);
    UFO_RUN (test_bar_not_caption_of_content);
    UFO_RUN (test_check_box_caption);
    UFO_RUN (test_header_bar_not_caption);
    UFO_RUN (test_caption_after_field);
    UFO_RUN (test_class_names);
    UFO_RUN (test_duplicates);
    UFO_RUN (test_rule_order);
    UFO_RUN (test_notice_not_caption);
    UFO_RUN (test_prompt_line);
    UFO_RUN (test_content_names);
    UFO_RUN (test_type_names);
    UFO_RUN (test_weak_and_combo_names);
    return UFO_TEST_END ();
}
