/*  ufo_desktop_sheet.c - the spreadsheet actions the original offers for Excel, on any window
    whose latest snapshot showed a spreadsheet table (a huge AT-SPI Table whose cells are
    named by their A1 address; ufo_desktop_walk.c finds it, docs/DESKTOP.md "Spreadsheets"):

      get_range_values   {"range": "A1:B3"}  the cells' shown values, row by row, read through
                         the Table interface (GetAccessibleAt, then Text and the cell's
                         attributes for its formula), never by enumerating the sheet
      select_table_range {"range": "A1:B3"}  selects the range, the cursor at its first cell
      go_to_cell         {"cell": "C7"}      makes C7 the active cell

    Selecting and going to a cell put the address into the window's Name Box (an Edit named
    "Name Box", by its accessible name or the application's profile) through EditableText,
    press Enter in it (keyboard_input), then read the Name Box back to check that the sheet
    followed. (Component.GrabFocus on a cell moved LibreOffice's cursor only while no range
    was selected: not used.) */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

typedef struct {
    char *path;                 //  the cell's object path, NULL until known
    char *value;                //  its text
    char *formula;              //  its formula ("=SUM(A1:A3)"), NULL if none or unreadable
    int left;                   //  replies still expected for this cell
} s_cell_t;

typedef struct {
    int64_t xid;
    char *function;
    char *bus, *table_path;     //  the sheet's table
    ufo_desktop_range_t r;
    int rows, cols;             //  of the range
    s_cell_t *cells;            //  rows x cols, row-major
    int left;                   //  cells not yet complete
    ufo_desktop_op_t *inner;    //  the keyboard_input into the Name Box
    char *nb_bus, *nb_path;     //  the Name Box
    char *expect;               //  what the Name Box shows once the sheet followed
    bool checking;              //  reading the Name Box back
    ufo_value_t *enter;         //  the keyboard_input args for the Name Box (Enter)
    char *nb_label;             //  the Name Box's label
    int64_t xid_;
} s_sheet_t;

static void
s_free (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    if (!st)
        return;
    for (int i = 0; st->cells && i < st->rows * st->cols; i++) {
        free (st->cells [i].path);
        free (st->cells [i].value);
        free (st->cells [i].formula);
    }
    free (st->cells);
    free (st->function);
    free (st->bus);
    free (st->table_path);
    free (st->nb_bus);
    free (st->nb_path);
    free (st->expect);
    free (st->nb_label);
    ufo_value_destroy (&st->enter);
    ufo_desktop_op_destroy (&st->inner);
    free (st);
    op->state = NULL;
}

bool
ufo_desktop_sheet_action_ (const char *function)
{
    return function && (streq (function, "get_range_values")
                        || streq (function, "select_table_range") || streq (function, "go_to_cell"));
}

//  --- get_range_values ----------------------------------------------------------------------

//  All cells read: the result. text is JSON: {"range", "values": [[...], ...], "formulas":
//  {"A4": "=SUM(A1:A3)"}} (formulas only where the cell has one and it could be read).
static void
s_read_done (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    ufo_value_t *values = ufo_value_new_list ();
    ufo_value_t *formulas = ufo_value_new_map ();
    for (int r = 0; r < st->rows; r++) {
        ufo_value_t *row = ufo_value_new_list ();
        for (int c = 0; c < st->cols; c++) {
            const s_cell_t *cell = &st->cells [r * st->cols + c];
            ufo_value_list_push_str (row, cell->value ? cell->value : "");
            if (cell->formula) {
                char name [16];
                ufo_desktop_cell_name (st->r.row0 + r, st->r.col0 + c, name, sizeof name);
                ufo_value_map_set_str (formulas, name, cell->formula);
            }
        }
        ufo_value_list_push (values, &row);
    }
    char first [16], last [16];
    ufo_desktop_cell_name (st->r.row0, st->r.col0, first, sizeof first);
    ufo_desktop_cell_name (st->r.row1, st->r.col1, last, sizeof last);
    char range [40];
    snprintf (range, sizeof range, "%s:%s", first, last);
    ufo_value_t *out = ufo_value_new_map ();
    ufo_value_map_set_str (out, "range", range);
    ufo_value_map_set_copy (out, "values", values);
    ufo_value_map_set_copy (out, "formulas", formulas);
    char *text = ufo_json_dump (out, 0, NULL);
    ufo_value_destroy (&out);
    op->result = ufo_value_new_map ();
    ufo_value_map_set (op->result, "values", &values);
    ufo_value_map_set (op->result, "formulas", &formulas);
    ufo_desktop_op_finish_ (op, true, text, NULL);
    free (text);
}

static void
s_cell_step (ufo_desktop_op_t *op, s_cell_t *cell)
{
    s_sheet_t *st = op->state;
    if (--cell->left == 0 && --st->left == 0 && !op->done)
        s_read_done (op);
}

static void
s_on_text (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    if (!op || op->done)
        return;
    s_cell_t *cell = data;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "reading a cell's text failed: %s", error);
        return;
    }
    const char *text = NULL;
    g_variant_get (reply, "(&s)", &text);
    free (cell->value);
    cell->value = ufo_strdup (text ? text : "");
    s_cell_step (op, cell);
}

//  The cell's attributes: LibreOffice gives its formula as "Formula" without the "=" (and
//  cuts it at the first ":", escaped as "\:": such a formula is not reported).
static void
s_on_attrs (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);             //  no attributes: no formula
    if (!op || op->done)
        return;
    s_cell_t *cell = data;
    if (reply) {
        GVariant *dict = g_variant_get_child_value (reply, 0);
        const char *formula = NULL;
        if (g_variant_lookup (dict, "Formula", "&s", &formula) && formula && *formula) {
            size_t n = strlen (formula);
            if (formula [n - 1] != '\\') {
                free (cell->formula);
                cell->formula = ufo_malloc (n + 2);
                snprintf (cell->formula, n + 2, "%s%s", formula [0] == '=' ? "" : "=", formula);
            }
        }
        g_variant_unref (dict);
    }
    s_cell_step (op, cell);
}

static void
s_on_cell (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    s_cell_t *cell = data;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "the sheet did not give a cell: %s", error);
        return;
    }
    const char *bus = NULL, *path = NULL;
    g_variant_get (reply, "((&s&o))", &bus, &path);
    if (!path || streq (path, "/org/a11y/atspi/null")) {
        ufo_desktop_op_finish_ (op, false, NULL, "the sheet has no cell there");
        return;
    }
    cell->path = ufo_strdup (path);
    cell->left = 2;
    ufo_desktop_call_ (op, st->bus, cell->path, "org.a11y.atspi.Text", "GetText",
                       g_variant_new ("(ii)", 0, -1), "(s)", s_on_text, cell);
    ufo_desktop_call_ (op, st->bus, cell->path, "org.a11y.atspi.Accessible", "GetAttributes",
                       NULL, "(a{ss})", s_on_attrs, cell);
}

//  --- select_table_range, go_to_cell ---------------------------------------------------------

static void
s_on_namebox (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "reading the Name Box failed: %s", error);
        return;
    }
    const char *text = NULL;
    g_variant_get (reply, "(&s)", &text);
    if (text && g_ascii_strcasecmp (text, st->expect) == 0) {
        char *note = streq (st->function, "go_to_cell")
            ? g_strdup_printf ("%s is the active cell", st->expect)
            : g_strdup_printf ("%s is selected", st->expect);
        ufo_desktop_op_finish_ (op, true, note, NULL);
        g_free (note);
    }
    else
        ufo_desktop_op_finish_ (op, false, NULL, "%s was typed into the Name Box, but it shows "
                                "'%.40s' (the sheet did not follow)", st->expect, text ? text : "");
}

static bool
s_poll (ufo_desktop_op_t *op)
{
    s_sheet_t *st = op->state;
    if (op->done || !st->inner || st->checking)
        return op->done;
    if (!ufo_desktop_op_done (st->inner))
        return false;
    ufo_value_t *r = ufo_desktop_op_take_result (st->inner);
    ufo_desktop_op_destroy (&st->inner);
    if (!ufo_value_map_bool (r, "success", false))
        ufo_desktop_op_finish_ (op, false, NULL, "typing into the Name Box failed: %s",
                                ufo_value_map_str (r, "error", ""));
    else {
        st->checking = true;
        ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.Text", "GetText",
                           g_variant_new ("(ii)", 0, -1), "(s)", s_on_namebox, NULL);
    }
    ufo_value_destroy (&r);
    return op->done;
}

static int64_t
s_wake (const ufo_desktop_op_t *op)
{
    const s_sheet_t *st = op->state;
    if (st && st->inner)
        return ufo_desktop_op_wake (st->inner);
    return op->deadline;
}

//  The address put into the Name Box (EditableText, no keys: under load keys typed after a
//  D-Bus GrabFocus could reach the sheet instead), then Enter in it (keyboard_input: the Name
//  Box focused first); s_poll then reads it back. A lost Enter leaves the Name Box showing
//  something else: the action fails saying so.
static void
s_on_namebox_set (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_sheet_t *st = op->state;
    gboolean ok = FALSE;
    if (reply)
        g_variant_get (reply, "(b)", &ok);
    if (!ok) {
        ufo_desktop_op_finish_ (op, false, NULL, "the Name Box did not take '%s'%s%s", st->expect,
                                error ? ": " : "", error ? error : "");
        return;
    }
    st->inner = ufo_desktop_act_begin (op->desk, st->xid_, st->nb_label, "keyboard_input", st->enter);
    op->deadline = ufo_desktop_op_deadline (st->inner) + 2000;
}

//  The label of the window's Name Box in its latest snapshot (an Edit named "Name Box"),
//  or NULL.
static const char *
s_namebox_label (const ufo_dwin_t *win)
{
    for (size_t i = 0; win && i < ufo_value_size (win->controls); i++) {
        const ufo_value_t *c = ufo_value_list_at (win->controls, i);
        if (streq (ufo_value_map_str (c, "control_type", ""), "Edit")
        &&  streq (ufo_value_map_str (c, "control_text", ""), "Name Box"))
            return ufo_value_map_str (c, "label", NULL);
    }
    return NULL;
}

ufo_desktop_op_t *
ufo_desktop_sheet_begin_ (ufo_desktop_t *desk, int64_t xid, const char *function,
                          const ufo_value_t *args)
{
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (desk, desk->action_timeout_ms + 2000);
    s_sheet_t *st = ufo_calloc (1, sizeof (*st));
    op->state = st;
    op->free_state = s_free;
    op->poll = s_poll;
    op->wake = s_wake;
    st->xid = xid;
    st->function = ufo_strdup (function);
    bool go = streq (function, "go_to_cell");
    const char *key = go ? "cell" : "range";
    const ufo_value_t *arg = ufo_value_map_get (args, key);
    if (args && ufo_value_type (args) != UFO_TMAP) {
        ufo_desktop_op_finish_ (op, false, NULL, "Args must be an object");
        return op;
    }
    if (ufo_value_type (arg) != UFO_TSTRING) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs a string '%s' in A1 style, e.g. %s",
                                function, key, go ? "\"C7\"" : "\"A1:B3\"");
        return op;
    }
    ufo_dwin_t *win = ufo_desktop_win_ (desk, xid, false);
    ufo_dnode_t *table = win && win->sheet_key ? g_hash_table_lookup (desk->nodes, win->sheet_key)
                                               : NULL;
    if (!table) {
        ufo_desktop_op_finish_ (op, false, NULL,
                                "%s needs a spreadsheet: the latest snapshot of window %" PRId64
                                " shows no sheet (a table whose cells are named A1, B2 ...)",
                                function, xid);
        return op;
    }
    ufo_error_t err = { 0 };
    if (ufo_desktop_cell_range_parse (ufo_value_str (arg), table->vrows, table->vcols, &st->r,
                                      &err) != 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s: %s", function, err.message);
        return op;
    }
    st->rows = st->r.row1 - st->r.row0 + 1;
    st->cols = st->r.col1 - st->r.col0 + 1;
    if (go && (st->rows > 1 || st->cols > 1)) {
        ufo_desktop_op_finish_ (op, false, NULL, "go_to_cell takes one cell, not the range "
                                "'%.40s' (select_table_range selects a range)", ufo_value_str (arg));
        return op;
    }
    st->bus = ufo_strdup (table->bus);
    st->table_path = ufo_strdup (table->path);
    char first [16], last [16];
    ufo_desktop_cell_name (st->r.row0, st->r.col0, first, sizeof first);
    ufo_desktop_cell_name (st->r.row1, st->r.col1, last, sizeof last);

    if (streq (function, "get_range_values")) {
        if ((int64_t) st->rows * st->cols > UFO_DESKTOP_MAX_CELLS) {
            ufo_desktop_op_finish_ (op, false, NULL, "get_range_values reads at most %d cells at "
                                    "once; %s:%s has %" PRId64 ": read it in parts",
                                    UFO_DESKTOP_MAX_CELLS, first, last,
                                    (int64_t) st->rows * st->cols);
            return op;
        }
        st->cells = ufo_calloc ((size_t) (st->rows * st->cols), sizeof (s_cell_t));
        st->left = st->rows * st->cols;
        for (int r = 0; r < st->rows; r++)
            for (int c = 0; c < st->cols; c++)
                ufo_desktop_call_ (op, st->bus, st->table_path, "org.a11y.atspi.Table",
                                   "GetAccessibleAt",
                                   g_variant_new ("(ii)", st->r.row0 + r, st->r.col0 + c),
                                   "((so))", s_on_cell, &st->cells [r * st->cols + c]);
        return op;
    }

    //  through the Name Box
    const char *label = s_namebox_label (win);
    const ufo_dlabel_t *entry = label ? ufo_desktop_label_find_ (win, label) : NULL;
    if (!entry) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs the window's Name Box (an Edit named "
                                "\"Name Box\"), and the latest snapshot shows none",
                                function);
        return op;
    }
    const char *space = strchr (entry->key, ' ');
    st->nb_bus = ufo_strndup (entry->key, (size_t) (space - entry->key));
    st->nb_path = ufo_strdup (space + 1);
    st->nb_label = ufo_strdup (label);
    st->xid_ = xid;
    char range [40];
    snprintf (range, sizeof range, "%s:%s", first, last);
    st->expect = ufo_strdup (st->rows == 1 && st->cols == 1 ? first : range);
    st->enter = ufo_value_new_map ();
    ufo_value_map_set_str (st->enter, "keys", "{ENTER}");
    ufo_desktop_call_ (op, st->nb_bus, st->nb_path, "org.a11y.atspi.EditableText", "SetTextContents",
                       g_variant_new ("(s)", st->expect), "(b)", s_on_namebox_set, NULL);
    return op;
}
