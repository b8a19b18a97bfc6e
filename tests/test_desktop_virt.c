/*  test_desktop_virt.c - huge and virtual containers (issue 19), on values recorded from
    LibreOffice Calc 7.4: its sheet is a table of 1,048,576 x 16,384 cells reporting
    2,147,483,647 children; the cells at the corners of the visible area were A1 (row 0,
    column 0) and M39 (row 38, column 12). The walk reads such a table through the Table
    interface: these are the decisions it makes. */
#include "ufo_desktop.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "ufo_prelude.h"
#include <unistd.h>

UFO_TEST (test_child_count_bound)
{
    //  Calc's sheet, and an int32 count that overflowed: never enumerated
    CHECK (ufo_desktop_huge_container (2147483647, 400));
    CHECK (ufo_desktop_huge_container (-1, 400));
    CHECK (ufo_desktop_huge_container (401, 400));
    //  ordinary containers are read with GetChildren
    CHECK (!ufo_desktop_huge_container (400, 400));
    CHECK (!ufo_desktop_huge_container (0, 400));
}

UFO_TEST (test_calc_visible_range)
{
    //  recorded: 2^20 rows, 2^14 columns, corners A1 and M39; 200 cells at most
    ufo_desktop_range_t r = ufo_desktop_visible_range (1048576, 16384, 0, 0, 38, 12, 200);
    CHECK_INT (r.row0, 0);
    CHECK_INT (r.col0, 0);
    CHECK_INT (r.col1, 12);         //  every visible column (A..M)
    CHECK_INT (r.row1, 14);         //  whole rows while they fit: 15 x 13 = 195 cells
    CHECK ((r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1) <= 200);
    //  scrolled: the range starts at the first visible cell
    r = ufo_desktop_visible_range (1048576, 16384, 1000, 26, 1038, 38, 200);
    CHECK_INT (r.row0, 1000);
    CHECK_INT (r.col0, 26);
    CHECK_INT (r.col1, 38);
    CHECK_INT (r.row1, 1014);
    //  a far corner that could not be read (its index overflowed): bounded all the same
    r = ufo_desktop_visible_range (1048576, 16384, 0, 0, -1, -1, 200);
    CHECK ((int64_t) (r.row1 - r.row0 + 1) * (r.col1 - r.col0 + 1) <= 200);
    CHECK (r.row1 >= r.row0 && r.col1 >= r.col0);
    //  wider than the bound: one row of max_cells columns
    r = ufo_desktop_visible_range (10, 1000, 0, 0, 9, 999, 50);
    CHECK_INT (r.row1, 0);
    CHECK_INT (r.col1, 49);
}

UFO_TEST (test_list_and_edges)
{
    //  a long list (no Table interface): one column, rows from the first visible one
    ufo_desktop_range_t r = ufo_desktop_visible_range (-1, -1, 120, -1, 160, -1, 200);
    CHECK_INT (r.col0, 0);
    CHECK_INT (r.col1, 0);
    CHECK_INT (r.row0, 120);
    CHECK_INT (r.row1, 160);
    //  a table smaller than its corners say: clamped
    r = ufo_desktop_visible_range (5, 3, 0, 0, 40, 12, 200);
    CHECK_INT (r.row1, 4);
    CHECK_INT (r.col1, 2);
    //  empty table, no budget: nothing to read
    r = ufo_desktop_visible_range (0, 3, 0, 0, 4, 2, 200);
    CHECK (r.row1 < r.row0);
    r = ufo_desktop_visible_range (5, 3, 0, 0, 4, 2, 0);
    CHECK (r.row1 < r.row0);
    //  a first row past the end is clamped to the last row
    r = ufo_desktop_visible_range (5, 3, 9, 0, 12, 2, 200);
    CHECK_INT (r.row0, 4);
    CHECK_INT (r.row1, 4);
}

//  Application profiles: one application by every name it goes by.
UFO_TEST (test_profile_names)
{
    CHECK_STR (ufo_desktop_app_name ("Navigator"), "firefox-esr");     //  Firefox's WM_CLASS
    CHECK_STR (ufo_desktop_app_name ("firefox"), "firefox-esr");
    CHECK_STR (ufo_desktop_app_name ("/usr/bin/firefox-esr"), "firefox-esr");
    CHECK_STR (ufo_desktop_app_name ("soffice"), "libreoffice");       //  its dialogs
    CHECK_STR (ufo_desktop_app_name ("libreoffice-calc"), "libreoffice");
    CHECK_STR (ufo_desktop_app_name ("LibreOffice"), "libreoffice");
    CHECK_STR (ufo_desktop_app_name ("mousepad"), "mousepad");         //  no profile
    CHECK_STR (ufo_desktop_app_name (NULL), "");
    CHECK (ufo_desktop_profile_of ("mousepad") == NULL);
    CHECK (ufo_desktop_profile_of ("") == NULL);
    CHECK (ufo_desktop_same_app ("Navigator", "firefox-esr"));
    CHECK (ufo_desktop_same_app ("soffice", "libreoffice"));
    CHECK (!ufo_desktop_same_app ("soffice", "firefox-esr"));
    CHECK (!ufo_desktop_same_app ("", ""));
    //  profile flags: LibreOffice needs the pointer moved in (its 25 px offset)
    CHECK (ufo_desktop_profile_flag ("libreoffice", "pointer_enter"));
    CHECK (!ufo_desktop_profile_flag ("firefox-esr", "pointer_enter"));
    CHECK (!ufo_desktop_profile_flag ("libreoffice", "no_such_flag"));
    CHECK (!ufo_desktop_profile_flag ("mousepad", "pointer_enter"));
    CHECK (!ufo_desktop_profile_flag (NULL, "pointer_enter"));
    CHECK (!ufo_desktop_profile_flag ("libreoffice", NULL));
    //  and the re-validation after an action although its GTK3 plug-in reports events
    //  (its soffice.bin process and dialogs are the same profile)
    CHECK (ufo_desktop_profile_flag ("libreoffice", "revalidate"));
    CHECK (ufo_desktop_profile_flag (ufo_desktop_profile_of ("soffice.bin"), "revalidate"));
    CHECK (!ufo_desktop_profile_flag ("mousepad", "revalidate"));
    //  default launchers: Writer and Calc with a private profile and --norestore, Firefox
    //  with its own profile
    const ufo_value_t *lo = ufo_value_map_get (ufo_value_map_get (ufo_desktop_profiles (),
                                                                  "libreoffice"), "launchers");
    const ufo_value_t *writer = ufo_value_map_get (lo, "libreoffice-writer");
    CHECK_STR (ufo_value_str (ufo_value_list_at (writer, 0)) ? ufo_value_str (ufo_value_list_at (writer, 0)) : "", "libreoffice");
    bool norestore = false, writer_arg = false;
    for (size_t i = 0; i < ufo_value_size (writer); i++) {
        const char *a = ufo_value_str (ufo_value_list_at (writer, i));
        norestore = norestore || (a && strcmp (a, "--norestore") == 0);
        writer_arg = writer_arg || (a && strcmp (a, "--writer") == 0);
    }
    CHECK (norestore && writer_arg);
    CHECK (ufo_value_map_get (lo, "libreoffice-calc") != NULL);
    CHECK (ufo_value_map_get (ufo_value_map_get (ufo_value_map_get (ufo_desktop_profiles (),
                              "firefox-esr"), "launchers"), "firefox-esr") != NULL);
}

UFO_TEST (test_profile_prepare)
{
    char dir [] = "/tmp/ufo-profile-XXXXXX";
    REQUIRE (mkdtemp (dir));
    setenv ("XDG_CONFIG_HOME", dir, 1);
    char *arg = ufo_desktop_profile_expand ("libreoffice", "-env:UserInstallation=file://$PROFILE");
    char want [256];
    snprintf (want, sizeof want, "-env:UserInstallation=file://%s/ufobus-profiles/libreoffice", dir);
    CHECK_STR (arg, want);
    free (arg);
    ufo_error_t err = { 0 };
    CHECK_INT (ufo_desktop_profile_prepare ("libreoffice", &err), 0);
    char path [512];
    snprintf (path, sizeof path, "%s/ufobus-profiles/libreoffice/user/registrymodifications.xcu", dir);
    FILE *f = fopen (path, "r");
    CHECK (f != NULL);
    char buf [4096] = "";
    if (f) {
        size_t n = fread (buf, 1, sizeof buf - 1, f);
        buf [n] = '\0';
        fclose (f);
    }
    CHECK_CONTAINS (buf, "ShowTipOfTheDay");
    //  a file the application changed is kept
    f = fopen (path, "w");
    if (f) {
        fputs ("mine", f);
        fclose (f);
    }
    CHECK_INT (ufo_desktop_profile_prepare ("libreoffice", &err), 0);
    f = fopen (path, "r");
    if (f) {
        size_t n = fread (buf, 1, sizeof buf - 1, f);
        buf [n] = '\0';
        fclose (f);
    }
    CHECK_STR (buf, "mine");
    CHECK_INT (ufo_desktop_profile_prepare ("firefox-esr", &err), 0);
    snprintf (path, sizeof path, "%s/ufobus-profiles/firefox-esr/user.js", dir);
    CHECK (access (path, R_OK) == 0);
    CHECK_INT (ufo_desktop_profile_prepare ("no-such-app", &err), 0);
    //  an unwritable profile is an error, not a crash
    setenv ("XDG_CONFIG_HOME", "/proc/no-such-dir", 1);
    CHECK_INT (ufo_desktop_profile_prepare ("firefox-esr", &err), -1);
    char cmd [300];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT (system (cmd), 0);
}

//  A1-style addresses of the spreadsheet actions (get_range_values, select_table_range,
//  go_to_cell): what a model may write, and what it is told when it is wrong
UFO_TEST (test_cell_ranges)
{
    ufo_desktop_range_t r;
    ufo_error_t err = { 0 };
    CHECK_INT (ufo_desktop_cell_range_parse ("A1", 1048576, 16384, &r, &err), 0);
    CHECK (r.row0 == 0 && r.col0 == 0 && r.row1 == 0 && r.col1 == 0);
    CHECK_INT (ufo_desktop_cell_range_parse ("m39", 1048576, 16384, &r, &err), 0);
    CHECK (r.row0 == 38 && r.col0 == 12);
    CHECK_INT (ufo_desktop_cell_range_parse (" $B$2:$c$10 ", 1048576, 16384, &r, &err), 0);
    CHECK (r.row0 == 1 && r.col0 == 1 && r.row1 == 9 && r.col1 == 2);
    //  corners given backwards are ordered
    CHECK_INT (ufo_desktop_cell_range_parse ("C3:A1", 1048576, 16384, &r, &err), 0);
    CHECK (r.row0 == 0 && r.col0 == 0 && r.row1 == 2 && r.col1 == 2);
    //  the sheet's last cell, and one past it
    CHECK_INT (ufo_desktop_cell_range_parse ("XFD1048576", 1048576, 16384, &r, &err), 0);
    CHECK (r.row0 == 1048575 && r.col0 == 16383);
    const char *bad [] = { "", "A", "1", "A0", "1A", "A1:", ":A1", "A1:B", "A1;B2", "A1 B2",
                           "A-1", "ABCDE1", "A123456789", "A1:B2:C3", "=A1", NULL };
    for (int i = 0; bad [i]; i++) {
        ufo_error_clear (&err);
        CHECK_INT (ufo_desktop_cell_range_parse (bad [i], 1048576, 16384, &r, &err), -1);
        CHECK (strstr (err.message, "not a cell or range in A1 style") != NULL);
    }
    CHECK_INT (ufo_desktop_cell_range_parse (NULL, 10, 10, &r, &err), -1);
    ufo_error_clear (&err);
    CHECK_INT (ufo_desktop_cell_range_parse ("XFE1", 1048576, 16384, &r, &err), -1);
    CHECK (strstr (err.message, "outside the sheet, which ends at XFD1048576") != NULL);
    ufo_error_clear (&err);
    CHECK_INT (ufo_desktop_cell_range_parse ("A1:A1048577", 1048576, 16384, &r, &err), -1);
    CHECK (strstr (err.message, "outside the sheet") != NULL);
    //  names of cells
    char buf [16];
    CHECK_STR (ufo_desktop_cell_name (0, 0, buf, sizeof buf), "A1");
    CHECK_STR (ufo_desktop_cell_name (38, 12, buf, sizeof buf), "M39");
    CHECK_STR (ufo_desktop_cell_name (0, 25, buf, sizeof buf), "Z1");
    CHECK_STR (ufo_desktop_cell_name (0, 26, buf, sizeof buf), "AA1");
    CHECK_STR (ufo_desktop_cell_name (1048575, 16383, buf, sizeof buf), "XFD1048576");
    //  name and parse agree over a sweep of columns
    for (int col = 0; col < 16384; col += 97) {
        ufo_desktop_cell_name (col, col, buf, sizeof buf);
        CHECK_INT (ufo_desktop_cell_range_parse (buf, 1048576, 16384, &r, NULL), 0);
        CHECK (r.row0 == col && r.col0 == col);
    }
}

//  The LibreOffice profile names Calc's Name Box (an unnamed Edit in the "Formula Tool Bar",
//  as recorded); nothing else, and nothing for other applications
UFO_TEST (test_profile_control_names)
{
    ufo_value_t *controls = ufo_json_parse_str (
        "[{\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Font Name\"},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Formula Tool Bar\","
        "  \"labelled_by\": \"Input line\"},"
        " {\"control_type\": \"Button\", \"control_text\": \"\", \"container\": \"Formula Tool Bar\"},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Formula Tool Bar\"},"
        " {\"control_type\": \"Edit\", \"control_text\": \"\", \"container\": \"Formula Tool Bar\"}]",
        NULL);
    REQUIRE (controls);
    ufo_value_t *copy = ufo_value_dup (controls);
    ufo_desktop_profile_name_controls ("libreoffice", controls);
    CHECK (!ufo_value_map_get (ufo_value_list_at (controls, 0), "labelled_by"));
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, 1), "labelled_by", ""), "Input line");
    CHECK (!ufo_value_map_get (ufo_value_list_at (controls, 2), "labelled_by"));
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, 3), "labelled_by", ""), "Name Box");
    CHECK (!ufo_value_map_get (ufo_value_list_at (controls, 4), "labelled_by"));   //  one only
    //  the naming rules take it as the control's name
    ufo_desktop_name_controls (controls, NULL, NULL);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (controls, 3), "control_text", ""), "Name Box");
    //  other applications, no application, not a list: unchanged
    ufo_value_t *before = ufo_value_dup (copy);
    ufo_desktop_profile_name_controls ("firefox-esr", copy);
    ufo_desktop_profile_name_controls (NULL, copy);
    CHECK (ufo_value_equal (copy, before));
    ufo_value_t *map = ufo_value_new_map ();
    ufo_desktop_profile_name_controls ("libreoffice", map);
    CHECK_INT ((int) ufo_value_size (map), 0);
    ufo_value_destroy (&map);
    ufo_value_destroy (&before);
    ufo_value_destroy (&copy);
    ufo_value_destroy (&controls);
}

//  The kind of a huge table's cells, from its two corner cells: assumed for every cell only
//  when both answered role and interfaces alike, and never again once a cell contradicted it
//  (55 = ATSPI_ROLE_TABLE_CELL, 29 = ATSPI_ROLE_LIST_ITEM; interface bits as the walk's:
//  1 Component, 4 Text)
UFO_TEST (test_cell_kind)
{
    ufo_desktop_cell_kind_t kind;
    memset (&kind, 0, sizeof kind);
    uint32_t role = 0, ifaces = 0;
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, &role, &ifaces));    //  nothing answered
    ufo_desktop_cell_kind_note (&kind, 0, false, 55);
    ufo_desktop_cell_kind_note (&kind, 0, true, 1 | 4);
    ufo_desktop_cell_kind_note (&kind, 1, false, 55);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, &role, &ifaces));    //  one answer missing
    ufo_desktop_cell_kind_note (&kind, 7, true, 1 | 4);                //  not a sample: ignored
    ufo_desktop_cell_kind_note (&kind, -1, true, 1 | 4);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, &role, &ifaces));
    ufo_desktop_cell_kind_note (&kind, 1, true, 1 | 4);
    CHECK (ufo_desktop_cell_kind_uniform (&kind, &role, &ifaces));
    CHECK_INT ((int) role, 55);
    CHECK_INT ((int) ifaces, 1 | 4);
    CHECK (ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));

    //  corners that differ (a header at one corner, or a cell without Text): every cell asked
    ufo_desktop_cell_kind_reset (&kind);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));        //  a new sampling
    ufo_desktop_cell_kind_note (&kind, 0, false, 55);
    ufo_desktop_cell_kind_note (&kind, 0, true, 1 | 4);
    ufo_desktop_cell_kind_note (&kind, 1, false, 29);
    ufo_desktop_cell_kind_note (&kind, 1, true, 1 | 4);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));
    ufo_desktop_cell_kind_note (&kind, 1, false, 55);
    ufo_desktop_cell_kind_note (&kind, 1, true, 1);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));
    //  role 0 (invalid, what a failed read leaves) is never assumed
    ufo_desktop_cell_kind_reset (&kind);
    for (int i = 0; i < UFO_DESKTOP_KIND_SAMPLES; i++) {
        ufo_desktop_cell_kind_note (&kind, i, false, 0);
        ufo_desktop_cell_kind_note (&kind, i, true, 1);
    }
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));

    //  contradicted: not assumed again, even after a new sampling that agrees
    ufo_desktop_cell_kind_reset (&kind);
    for (int i = 0; i < UFO_DESKTOP_KIND_SAMPLES; i++) {
        ufo_desktop_cell_kind_note (&kind, i, false, 55);
        ufo_desktop_cell_kind_note (&kind, i, true, 1 | 4);
    }
    CHECK (ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));
    ufo_desktop_cell_kind_contradict (&kind);
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, &role, NULL));
    ufo_desktop_cell_kind_reset (&kind);
    for (int i = 0; i < UFO_DESKTOP_KIND_SAMPLES; i++) {
        ufo_desktop_cell_kind_note (&kind, i, false, 55);
        ufo_desktop_cell_kind_note (&kind, i, true, 1 | 4);
    }
    CHECK (!ufo_desktop_cell_kind_uniform (&kind, NULL, NULL));
}

int
main (void)
{
    UFO_RUN (test_child_count_bound);
    UFO_RUN (test_calc_visible_range);
    UFO_RUN (test_list_and_edges);
    UFO_RUN (test_profile_names);
    UFO_RUN (test_profile_prepare);
    UFO_RUN (test_cell_ranges);
    UFO_RUN (test_profile_control_names);
    UFO_RUN (test_cell_kind);
    return UFO_TEST_END ();
}
