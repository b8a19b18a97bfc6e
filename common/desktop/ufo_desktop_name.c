/*  ufo_desktop_name.c - the names and prompt lines of controls: pure functions over the
    value maps of a snapshot (no AT-SPI here), so that the rules can be tested on recorded
    trees. docs/DESKTOP.md, section "Names", states the rules. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_value.h"
#include "ufo_desktop.h"

#define streq(a, b) (strcmp ((a), (b)) == 0)

#define S_CAPTION_LEFT_PX 250       //  a caption left of its field: at most this far away
#define S_CAPTION_ABOVE_PX 40       //  a caption above its field: at most this far above
#define S_PROMPT_VALUE 80           //  bytes of a value shown in the prompt
#define S_PROMPT_NAME 120           //  bytes of a name shown in the prompt (a label's paragraph)
#define S_GRID_PX 400               //  a grid's row or column caption: at most this far away

//  True for a toolkit class name used as an accessible name: "GtkButton", "GtkImage",
//  "AdwHeaderBar", "QPushButton" - an identifier of one word made of the toolkit's prefix and
//  a capitalised class. Such names say nothing a model can use.
bool
ufo_desktop_class_name (const char *name)
{
    if (!name)
        return false;
    static const char *const prefixes [] = { "Gtk", "Adw", "Hdy", "Gdk", "Q", "Wnck", "Vte" };
    const char *rest = NULL;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (prefixes) && !rest; i++) {
        size_t n = strlen (prefixes [i]);
        if (strncmp (name, prefixes [i], n) == 0 && isupper ((unsigned char) name [n])
        &&  islower ((unsigned char) name [n + 1]))
            rest = name + n;
    }
    if (!rest)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum ((unsigned char) *p))
            return false;
    return true;
}

//  True for a type name as GTK4 gives an unnamed widget ("EditorSourceView", "ClocksWindow",
//  "GtkButton"): one identifier of letters and digits, starting with a capital, with at least
//  one more capital after a lower-case letter or digit. Words and sentences are not, nor
//  "OK", "A1" or "x2". (Names such as "GitHub" are too: use it only where the toolkit is
//  known to name widgets after their type.)
bool
ufo_desktop_type_name (const char *name)
{
    if (!name || !isupper ((unsigned char) name [0]))
        return false;
    int humps = 0;
    for (const char *p = name; *p; p++) {
        if (!isalnum ((unsigned char) *p))
            return false;
        if (p > name && isupper ((unsigned char) *p)
        &&  (islower ((unsigned char) p [-1]) || isdigit ((unsigned char) p [-1])))
            humps++;
    }
    return humps > 0;
}

static char *
s_strf (const char *format, ...) __attribute__ ((format (printf, 1, 2)));

static char *
s_strf (const char *format, ...)
{
    va_list ap;
    va_start (ap, format);
    int len = vsnprintf (NULL, 0, format, ap);
    va_end (ap);
    char *s = ufo_malloc ((size_t) (len > 0 ? len : 0) + 1);
    va_start (ap, format);
    vsnprintf (s, (size_t) (len > 0 ? len : 0) + 1, format, ap);
    va_end (ap);
    return s;
}

//  A copy of s with surrounding blanks and a trailing caption colon removed.
static char *
s_trim_caption (const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    size_t len = strlen (s);
    while (len > 0 && strchr (" \t\n:", s [len - 1]))
        len--;
    return ufo_strndup (s, len);
}

static bool
s_usable (const char *name)
{
    if (!name)
        return false;
    while (*name == ' ')
        name++;
    return *name && !ufo_desktop_class_name (name);
}

static bool
s_type_is (const ufo_value_t *control, const char *const *types)
{
    const char *type = ufo_value_map_str (control, "control_type", "");
    for (size_t i = 0; types [i]; i++)
        if (streq (type, types [i]))
            return true;
    return false;
}

//  Controls that take a caption from a label beside or above them.
static const char *const s_captioned [] = { "Edit", "ComboBox", "Spinner", "CheckBox",
                                            "RadioButton", "Document", NULL };

static void
s_rect (const ufo_value_t *control, const char *key, int r [4])
{
    const ufo_value_t *rect = ufo_value_map_get (control, key);
    for (int i = 0; i < 4; i++)
        r [i] = (int) ufo_value_int (ufo_value_list_at (rect, (size_t) i));
}

//  How well caption rectangle c names field rectangle f: a distance in pixels (smaller is
//  better), or -1 if c is not beside (left, same row) or above (overlapping columns) f.
static int
s_caption_score (const int c [4], const int f [4])
{
    int c_mid = (c [1] + c [3]) / 2;
    //  left of the field, its middle within the field's rows
    if (c [2] <= f [0] + 4 && c_mid >= f [1] - 2 && c_mid <= f [3] + 2) {
        int gap = f [0] - c [2];
        return gap <= S_CAPTION_LEFT_PX ? (gap > 0 ? gap : 0) : -1;
    }
    //  above the field, sharing columns with it
    if (c [3] <= f [1] + 4 && c [0] < f [2] && c [2] > f [0]) {
        int gap = f [1] - c [3];
        return gap <= S_CAPTION_ABOVE_PX ? (gap > 0 ? gap : 0) * 2 + 10 : -1;
    }
    return -1;
}

//  True when a caption may name the field as far as the tree goes: it is not part of a
//  message (an info bar, alert, notification: "notice"), and the two share a group - one of
//  the nearest ancestors listed in their "scope" (a label in a bar of its own above an
//  editor shares none with it). Without scopes (older recordings) only the first holds.
static bool
s_caption_in_scope (const ufo_value_t *caption, const ufo_value_t *field)
{
    if (ufo_value_map_bool (caption, "notice", false))
        return false;
    const ufo_value_t *a = ufo_value_map_get (caption, "scope");
    const ufo_value_t *b = ufo_value_map_get (field, "scope");
    if (ufo_value_type (a) != UFO_TLIST || ufo_value_type (b) != UFO_TLIST)
        return true;
    for (size_t i = 0; i < ufo_value_size (a); i++)
        for (size_t k = 0; k < ufo_value_size (b); k++) {
            const char *x = ufo_value_str (ufo_value_list_at (a, i));
            const char *y = ufo_value_str (ufo_value_list_at (b, k));
            if (x && y && streq (x, y))
                return true;
        }
    return false;
}

//  True for a big content control - a document, or a multi-line text field (a text view) -
//  which a label in a bar (a header bar's subtitle, a tool bar's text: "bar") never captions:
//  that label says what the window shows, not what the field is.
static bool
s_content_control (const ufo_value_t *control)
{
    static const char *const document [] = { "Document", NULL };
    if (s_type_is (control, document))
        return true;
    const ufo_value_t *states = ufo_value_map_get (control, "states");
    for (size_t i = 0; i < ufo_value_size (states); i++) {
        const char *state = ufo_value_str (ufo_value_list_at (states, i));
        if (state && streq (state, "multi_line"))
            return true;
    }
    return false;
}

//  True when text, as a caption, ends with ":" ("Fixed tab width:").
static bool
s_colon_caption (const char *text)
{
    size_t len = strlen (text);
    while (len > 0 && (text [len - 1] == ' ' || text [len - 1] == '\t'))
        len--;
    return len > 1 && text [len - 1] == ':';
}

//  The caption heading f's row (above false): the closest one left of it, its middle within
//  f's rows; or its column (above true): the closest one above it sharing columns with it. At
//  most S_GRID_PX away (other fields may lie between), usable and in scope; nc if none.
static size_t
s_line_caption (const ufo_value_t *captions, const ufo_value_t *field, const int f [4], bool above)
{
    size_t nc = ufo_value_size (captions), found = nc;
    int best_gap = S_GRID_PX + 1;
    for (size_t k = 0; k < nc; k++) {
        const ufo_value_t *cap = ufo_value_list_at (captions, k);
        if (!s_usable (ufo_value_map_str (cap, "text", "")) || !s_caption_in_scope (cap, field))
            continue;
        int c [4];
        s_rect (cap, "rect", c);
        int mid = (c [1] + c [3]) / 2;
        if (above ? (c [3] > f [1] + 4 || c [0] >= f [2] || c [2] <= f [0])
                  : (c [2] > f [0] + 4 || mid < f [1] - 2 || mid > f [3] + 2))
            continue;
        int gap = above ? f [1] - c [3] : f [0] - c [2];
        gap = gap > 0 ? gap : 0;
        if (gap < best_gap)
            found = k, best_gap = gap;
    }
    return found;
}

//  2b. Fields in a grid (a table of check boxes: "Read:" "Write:" "Execute:" above, "Owner:"
//  "Group:" "Other:" left, as in a file's permissions) are named by their row's and their
//  column's caption, "Owner, Write": each caption heads several fields, which the one-caption
//  rule below would leave unnamed but one. A field is in a grid when the fields sharing its
//  row caption have two or more column captions and those sharing its column caption two or
//  more row captions (a heading above one row of a form is no column). Marks the captions used.
static void
s_name_grid (const ufo_value_t *controls, const ufo_value_t *captions, char **best, bool *used)
{
    size_t n = ufo_value_size (controls), nc = ufo_value_size (captions);
    if (nc < 4)
        return;
    size_t *row = ufo_calloc (n + 1, sizeof (size_t)), *col = ufo_calloc (n + 1, sizeof (size_t));
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        row [i] = col [i] = nc;
        if (best [i] || !s_type_is (c, s_captioned) || ufo_value_map_bool (c, "in_combo", false))
            continue;
        int f [4];
        s_rect (c, "control_rect", f);
        row [i] = s_line_caption (captions, c, f, false);
        col [i] = s_line_caption (captions, c, f, true);
        if (row [i] == col [i])
            row [i] = col [i] = nc;
    }
    for (size_t i = 0; i < n; i++) {
        if (row [i] == nc || col [i] == nc)
            continue;
        bool other_col = false, other_row = false;
        for (size_t k = 0; k < n && !(other_col && other_row); k++) {
            if (k == i || row [k] == nc || col [k] == nc)
                continue;
            other_col = other_col || (row [k] == row [i] && col [k] != col [i]);
            other_row = other_row || (col [k] == col [i] && row [k] != row [i]);
        }
        if (!other_col || !other_row)
            continue;
        char *r = s_trim_caption (ufo_value_map_str (ufo_value_list_at (captions, row [i]), "text", ""));
        char *c = s_trim_caption (ufo_value_map_str (ufo_value_list_at (captions, col [i]), "text", ""));
        best [i] = s_strf ("%s, %s", r, c);
        free (r);
        free (c);
    }
    for (size_t i = 0; i < n; i++)
        if (best [i] && row [i] < nc && col [i] < nc)
            used [row [i]] = used [col [i]] = true;
    free (row);
    free (col);
}

typedef struct { size_t control, caption; int score; } s_pair_t;

static int
s_pair_cmp (const void *a, const void *b)
{
    const s_pair_t *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? -1 : 1;
    if (x->control != y->control)
        return x->control < y->control ? -1 : 1;
    return x->caption < y->caption ? -1 : (x->caption > y->caption);
}

typedef struct { const char *type, *name, *container; size_t index; } s_entry_t;

static int
s_entry_cmp (const void *a, const void *b)
{
    const s_entry_t *x = a, *y = b;
    int c = strcmp (x->type, y->type);
    if (!c)
        c = strcmp (x->name, y->name);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

//  Equal names told apart by the caption heading each one's row ("Thu Nov 26 2026
//  (Modified)", "... (Accessed)": dates beside their captions in a file's properties): when
//  every one of the `same` entries has a row caption, all different and none its own name.
//  Sets final [index] and returns true, else leaves final alone and returns false.
static bool
s_name_by_row_captions (const ufo_value_t *controls, const ufo_value_t *captions,
                        const s_entry_t *group, size_t same, char **final)
{
    size_t nc = ufo_value_size (captions);
    if (nc < 2 || same > nc)
        return false;
    char **caps = ufo_calloc (same, sizeof (char *));
    bool ok = true;
    for (size_t k = 0; k < same && ok; k++) {
        const ufo_value_t *c = ufo_value_list_at (controls, group [k].index);
        int f [4];
        s_rect (c, "control_rect", f);
        size_t at = s_line_caption (captions, c, f, false);
        caps [k] = at < nc ? s_trim_caption (ufo_value_map_str (ufo_value_list_at (captions, at),
                                                                 "text", "")) : NULL;
        ok = caps [k] && *caps [k] && !streq (caps [k], group [k].name);
        for (size_t j = 0; j < k && ok; j++)
            ok = !streq (caps [j], caps [k]);
    }
    for (size_t k = 0; k < same; k++) {
        if (ok)
            final [group [k].index] = s_strf ("%s (%s)", group [k].name, caps [k]);
        free (caps [k]);
    }
    free (caps);
    return ok;
}

//  "top left", "middle", ... of the control's centre within the window.
static const char *
s_where (const int r [4], const int w [4])
{
    static const char *const names [3][3] = {
        { "top left", "top", "top right" }, { "left", "middle", "right" },
        { "bottom left", "bottom", "bottom right" } };
    int ww = w [2] - w [0], wh = w [3] - w [1];
    if (ww <= 0 || wh <= 0)
        return "middle";
    int cx = (r [0] + r [2]) / 2 - w [0], cy = (r [1] + r [3]) / 2 - w [1];
    int col = cx * 3 / ww, row = cy * 3 / wh;
    col = col < 0 ? 0 : col > 2 ? 2 : col;
    row = row < 0 ? 0 : row > 2 ? 2 : row;
    return names [row][col];
}

void
ufo_desktop_name_controls (ufo_value_t *controls, const ufo_value_t *captions,
                           const ufo_value_t *window_rect)
{
    size_t n = ufo_value_size (controls);
    if (ufo_value_type (controls) != UFO_TLIST || n == 0)
        return;
    char **best = ufo_calloc (n, sizeof (char *));
    //  1. own name; 2. labelled-by target. An own name that only repeats the enclosing
    //  group's (Qt names a field in a group box after the box) is weak: a caption beats it
    bool *weak = ufo_calloc (n + 1, sizeof (bool));
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        const char *own = ufo_value_map_str (c, "control_text", "");
        const char *by = ufo_value_map_str (c, "labelled_by", "");
        //  a combo box's own name is usually its selection (GTK3): its value, not its name
        bool combo = streq (ufo_value_map_str (c, "control_type", ""), "ComboBox");
        weak [i] = s_usable (own) && !combo && s_type_is (c, s_captioned)
                && streq (own, ufo_value_map_str (c, "container", ""));
        if (s_usable (own) && !combo && !weak [i])   //  a field named after its caption: no ":"
            best [i] = s_type_is (c, s_captioned) ? s_trim_caption (own) : ufo_strdup (own);
        else if (s_usable (by))
            best [i] = s_trim_caption (by);
        if (best [i] && !*best [i])
            free (best [i]), best [i] = NULL;
    }
    size_t nc = ufo_value_size (captions);
    bool *used = ufo_calloc (nc + 1, sizeof (bool));
    s_name_grid (controls, captions, best, used);
    //  3. the caption beside or above: the closest pairs first, each caption names one field
    s_pair_t *pairs = NULL;
    size_t np = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        if (best [i] || !s_type_is (c, s_captioned) || ufo_value_map_bool (c, "in_combo", false))
            continue;           //  (a combo box's entry is named with its combo box)
        int f [4];
        s_rect (c, "control_rect", f);
        for (size_t k = 0; k < nc; k++) {
            const ufo_value_t *cap_v = ufo_value_list_at (captions, k);
            if (!s_usable (ufo_value_map_str (cap_v, "text", ""))
            ||  !s_caption_in_scope (cap_v, c)
            ||  (ufo_value_map_bool (cap_v, "bar", false) && s_content_control (c)))
                continue;
            int r [4];
            s_rect (cap_v, "rect", r);
            int score = s_caption_score (r, f);
            if (score < 0)
                continue;
            if (np == cap) {
                cap = cap ? cap * 2 : 16;
                pairs = ufo_realloc (pairs, cap * sizeof (*pairs));
            }
            pairs [np++] = (s_pair_t) { i, k, score };
        }
    }
    if (np)
        qsort (pairs, np, sizeof (*pairs), s_pair_cmp);
    for (size_t p = 0; p < np; p++) {
        if (best [pairs [p].control] || used [pairs [p].caption])
            continue;
        used [pairs [p].caption] = true;
        best [pairs [p].control] = s_trim_caption (
            ufo_value_map_str (ufo_value_list_at (captions, pairs [p].caption), "text", ""));
        if (!*best [pairs [p].control])
            free (best [pairs [p].control]), best [pairs [p].control] = NULL;
    }
    free (pairs);
    free (used);
    //  3b. a field still without a name, whose row starts with a check box or radio button
    //  ending in ":" (Qt's "Fixed tab width:" check box before its spin box): that button's
    //  text, the closest one directly to its left; each button captions one field
    bool *taken = ufo_calloc (n + 1, sizeof (bool));
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *c = ufo_value_list_at (controls, i);
        static const char *const toggles [] = { "CheckBox", "RadioButton", NULL };
        if (best [i] || weak [i] || !s_type_is (c, s_captioned) || s_type_is (c, toggles)
        ||  ufo_value_map_bool (c, "in_combo", false))
            continue;
        int f [4];
        s_rect (c, "control_rect", f);
        size_t found = n;
        int found_gap = S_CAPTION_LEFT_PX + 1;
        for (size_t k = 0; k < n; k++) {
            const ufo_value_t *t = ufo_value_list_at (controls, k);
            const char *text = ufo_value_map_str (t, "control_text", "");
            if (k == i || taken [k] || !s_type_is (t, toggles) || !s_usable (text)
            ||  !s_colon_caption (text) || !s_caption_in_scope (t, c))
                continue;
            int r [4];
            s_rect (t, "control_rect", r);
            int mid = (r [1] + r [3]) / 2;
            if (r [2] > f [0] + 4 || mid < f [1] - 2 || mid > f [3] + 2)
                continue;               //  not on the field's row, left of it
            int gap = f [0] - r [2] > 0 ? f [0] - r [2] : 0;
            if (gap < found_gap)
                found = k, found_gap = gap;
        }
        if (found < n) {
            taken [found] = true;
            best [i] = s_trim_caption (ufo_value_map_str (ufo_value_list_at (controls, found),
                                                          "control_text", ""));
        }
    }
    free (taken);
    //  4. description (tooltip); 5. what it shows (the labels inside an unnamed button);
    //  5b. a text view's or document's container; 6. a placeholder that says where the control is
    int w [4];
    for (int i = 0; i < 4; i++)
        w [i] = (int) ufo_value_int (ufo_value_list_at (window_rect, (size_t) i));
    for (size_t i = 0; i < n; i++) {
        ufo_value_t *c = ufo_value_list_at (controls, i);
        if (ufo_value_type (c) != UFO_TMAP)
            continue;               //  not a control: left alone
        const char *own = ufo_value_map_str (c, "control_text", "");
        if (!best [i] && weak [i])
            best [i] = s_trim_caption (own);
        //  the entry of an editable combo box: the name of its combo box (listed just before)
        if (!best [i] && i > 0 && best [i - 1] && ufo_value_map_bool (c, "in_combo", false)
        &&  streq (ufo_value_map_str (ufo_value_list_at (controls, i - 1), "control_type", ""),
                   "ComboBox"))
            best [i] = ufo_strdup (best [i - 1]);
        if (streq (ufo_value_map_str (c, "control_type", ""), "ComboBox") && s_usable (own)) {
            if (!*ufo_value_map_str (c, "value", ""))
                ufo_value_map_set_str (c, "value", own);     //  the selection
            if (!best [i])
                best [i] = ufo_strdup (own);
        }
        const char *desc = ufo_value_map_str (c, "description", "");
        if (!best [i] && s_usable (desc))
            best [i] = s_trim_caption (desc);
        const char *content = ufo_value_map_str (c, "content", "");
        if (!best [i] && s_usable (content))
            best [i] = s_trim_caption (content);
        //  5b. a text view or document: what holds it (an editor's tab "hello.c", a group
        //  "Notes"), unless that is a type name (GTK4 names unnamed widgets after their type)
        const char *in = ufo_value_map_str (c, "container", "");
        if (!best [i] && s_content_control (c) && s_usable (in) && !ufo_desktop_type_name (in))
            best [i] = s_trim_caption (in);
        if (!best [i] || !*best [i]) {
            free (best [i]);
            int r [4];
            s_rect (c, "control_rect", r);
            best [i] = s_strf ("(unnamed, %s)", s_where (r, w));
        }
    }
    //  duplicates: the nearest named container tells them apart, else their order. Sorted
    //  by (type, name, position) so that equal names are neighbours: n log n, not n^2
    char **final = ufo_calloc (n, sizeof (char *));
    s_entry_t *sorted = ufo_calloc (n, sizeof (s_entry_t));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const ufo_value_t *ci = ufo_value_list_at (controls, i);
        if (best [i])
            sorted [m++] = (s_entry_t) { ufo_value_map_str (ci, "control_type", ""), best [i],
                                         ufo_value_map_str (ci, "container", ""), i };
    }
    qsort (sorted, m, sizeof (s_entry_t), s_entry_cmp);
    for (size_t g = 0, end; g < m; g = end) {
        for (end = g + 1; end < m && streq (sorted [end].type, sorted [g].type)
                          && streq (sorted [end].name, sorted [g].name); end++)
            ;
        size_t same = end - g;
        if (same >= 2 && s_name_by_row_captions (controls, captions, sorted + g, same, final))
            continue;
        for (size_t k = g; k < end; k++) {
            const s_entry_t *e = &sorted [k];
            size_t same_in = 0, rank_in = 0;
            for (size_t j = g; j < end; j++)
                if (streq (sorted [j].container, e->container)) {
                    same_in++;
                    rank_in += j < k;
                }
            bool by_container = *e->container && !streq (e->container, e->name) && same_in < same;
            if (same < 2)
                final [e->index] = ufo_strdup (e->name);
            else if (by_container && same_in == 1)
                final [e->index] = s_strf ("%s (in %s)", e->name, e->container);
            else if (by_container)
                final [e->index] = s_strf ("%s (in %s, %zu)", e->name, e->container, rank_in + 1);
            else
                final [e->index] = s_strf ("%s (%zu)", e->name, k - g + 1);
        }
    }
    free (sorted);
    for (size_t i = 0; i < n; i++) {
        ufo_value_t *c = ufo_value_list_at (controls, i);
        if (!final [i])
            continue;
        ufo_value_map_set_str (c, "control_text", final [i]);
        ufo_value_map_remove (c, "labelled_by");
        ufo_value_map_remove (c, "container");
        ufo_value_map_remove (c, "description");
        ufo_value_map_remove (c, "scope");
        ufo_value_map_remove (c, "content");
        ufo_value_map_remove (c, "in_combo");
        free (best [i]);
        free (final [i]);
    }
    free (final);
    free (best);
    free (weak);
}

//  States worth a model's attention, in this order; others ("focusable", "active", ...) are
//  left out of the prompt.
static const char *const s_prompt_states [] = {
    "disabled", "focused", "checked", "selected", "pressed", "expanded", "editable",
    "indeterminate", NULL
};

//  s on one line (newlines and tabs become spaces), cut at max bytes (on a UTF-8 character
//  boundary) with "..." added. Caller frees.
static char *
s_one_line (const char *s, size_t max)
{
    size_t len = strlen (s), cut = len;
    if (cut > max) {
        cut = max;
        while (cut > 0 && ((unsigned char) s [cut] & 0xC0) == 0x80)
            cut--;
    }
    ufo_buf_t buf = { 0 };
    ufo_buf_puts (&buf, "");
    for (size_t i = 0; i < cut; i++)
        ufo_buf_putc (&buf, s [i] == '\n' || s [i] == '\t' || s [i] == '\r' ? ' ' : s [i]);
    if (cut < len && !(len >= 3 && cut == len - 3 && streq (s + cut, "...")))
        ufo_buf_puts (&buf, "...");
    return ufo_buf_detach (&buf, NULL);
}

//  True if a and b are equal but for blanks around them.
static bool
s_same_trimmed (const char *a, const char *b)
{
    a += strspn (a, " ");
    b += strspn (b, " ");
    size_t la = strlen (a), lb = strlen (b);
    while (la > 0 && a [la - 1] == ' ')
        la--;
    while (lb > 0 && b [lb - 1] == ' ')
        lb--;
    return la == lb && strncmp (a, b, la) == 0;
}

ufo_value_t *
ufo_desktop_control_prompt (const ufo_value_t *control)
{
    ufo_value_t *e = ufo_value_new_map ();
    ufo_value_map_set_str (e, "label", ufo_value_map_str (control, "label", ""));
    ufo_value_map_set_str (e, "type", ufo_value_map_str (control, "control_type", ""));
    //  name and value on one line each (a label may hold a paragraph), short; the value once:
    //  not when it only repeats the name (a label's value is its name; a web label's text
    //  "Size " is its name "Size")
    char *name = s_one_line (ufo_value_map_str (control, "control_text", ""), SIZE_MAX);
    char *value = s_one_line (ufo_value_map_str (control, "value", ""), SIZE_MAX);
    char *shown = s_one_line (name, S_PROMPT_NAME);
    ufo_value_map_set_str (e, "name", shown);
    free (shown);
    shown = s_same_trimmed (value, name) ? ufo_strdup ("") : s_one_line (value, S_PROMPT_VALUE);
    ufo_value_map_set_str (e, "value", shown);
    free (shown);
    free (name);
    free (value);
    const ufo_value_t *states = ufo_value_map_get (control, "states");
    ufo_buf_t st = { 0 };
    ufo_buf_puts (&st, "");
    for (size_t k = 0; s_prompt_states [k]; k++)
        for (size_t i = 0; i < ufo_value_size (states); i++) {
            const char *s = ufo_value_str (ufo_value_list_at (states, i));
            if (s && streq (s, s_prompt_states [k])) {
                if (st.len)
                    ufo_buf_puts (&st, ", ");
                ufo_buf_puts (&st, s);
            }
        }
    char *s = ufo_buf_detach (&st, NULL);
    ufo_value_map_set_str (e, "states", s);
    free (s);
    return e;
}
