/*  ufo_desktop_caret.c - the caret and selection at a phrase of a document (docs/DESKTOP.md
    "Documents: caret and selection"):

      caret_to_text  {"text": "Sales grew", "at": "end" | "start"}  the caret after (or before)
                     the first occurrence of the text
      select_text    {"text": "ten percent"}   the first occurrence selected (the original's
                     Word action of that name)

    The control is a text control itself (Text interface) or a document whose paragraphs are
    its children (Writer, a web page): the paragraphs the latest snapshot read (those on
    screen, in order) are read in full (CharacterCount, then GetText) and searched; the caret
    goes there with Text.SetCaretOffset, a selection with Text.AddSelection. Keys sent next
    without a control (keyboard_input, "control_focus": false) go to the caret. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

#define S_MAX_TARGETS 200           //  paragraphs searched at most
#define S_MAX_PHRASE 1000           //  bytes

typedef struct {
    char *path;
    char *text;                     //  NULL until read
} s_target_t;

typedef struct {
    bool select;                    //  select_text (else caret_to_text)
    bool at_start;
    char *phrase;
    char *bus;
    char *what;                     //  "Document 'Untitled 1' (label 13)"
    s_target_t *targets;
    int count, left;
    int hit;                        //  target where the caret or selection goes
    int start, end;                 //  character offsets of the phrase there
} s_caret_t;

static void
s_free (ufo_desktop_op_t *op)
{
    s_caret_t *st = op->state;
    if (!st)
        return;
    for (int i = 0; i < st->count; i++) {
        free (st->targets [i].path);
        free (st->targets [i].text);
    }
    free (st->targets);
    free (st->phrase);
    free (st->bus);
    g_free (st->what);
    free (st);
    op->state = NULL;
}

bool
ufo_desktop_caret_action_ (const char *function)
{
    return function && (streq (function, "caret_to_text") || streq (function, "select_text"));
}

static void
s_on_set (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_caret_t *st = op->state;
    gboolean ok = FALSE;
    if (reply)
        g_variant_get (reply, "(b)", &ok);
    if (!ok) {
        ufo_desktop_op_finish_ (op, false, NULL, "the application refused to %s in %s%s%s",
                                st->select ? "select the text" : "move the caret", st->what,
                                error ? ": " : "", error ? error : "");
        return;
    }
    char *text = st->select
        ? g_strdup_printf ("'%s' is selected (paragraph %d, characters %d to %d)", st->phrase,
                           st->hit + 1, st->start, st->end)
        : g_strdup_printf ("the caret is %s '%s' (paragraph %d, offset %d); keys sent without a "
                           "control go there", st->at_start ? "before" : "after", st->phrase,
                           st->hit + 1, st->at_start ? st->start : st->end);
    ufo_desktop_op_finish_ (op, true, text, NULL);
    g_free (text);
}

//  Every target read: find the phrase, then place the caret or the selection.
static void
s_search (ufo_desktop_op_t *op)
{
    s_caret_t *st = op->state;
    for (int i = 0; i < st->count; i++) {
        const char *text = st->targets [i].text;
        const char *at = text ? strstr (text, st->phrase) : NULL;
        if (!at)
            continue;
        st->hit = i;
        st->start = (int) g_utf8_pointer_to_offset (text, at);
        st->end = st->start + (int) g_utf8_strlen (st->phrase, -1);
        const char *path = st->targets [i].path;
        if (st->select)
            ufo_desktop_call_ (op, st->bus, path, "org.a11y.atspi.Text", "AddSelection",
                               g_variant_new ("(ii)", st->start, st->end), "(b)", s_on_set, NULL);
        else
            ufo_desktop_call_ (op, st->bus, path, "org.a11y.atspi.Text", "SetCaretOffset",
                               g_variant_new ("(i)", st->at_start ? st->start : st->end), "(b)",
                               s_on_set, NULL);
        return;
    }
    ufo_desktop_op_finish_ (op, false, NULL, "the text '%s' is not in %s (%d paragraph%s on "
                            "screen were searched; scroll to show more of it)", st->phrase,
                            st->what, st->count, st->count == 1 ? "" : "s");
}

static void
s_on_text (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);                 //  a paragraph that cannot be read is not searched
    if (!op || op->done)
        return;
    s_caret_t *st = op->state;
    s_target_t *t = data;
    const char *s = NULL;
    if (reply)
        g_variant_get (reply, "(&s)", &s);
    free (t->text);
    t->text = ufo_strdup (s ? s : "");
    if (--st->left == 0)
        s_search (op);
}

static void
s_on_count (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    if (!op || op->done)
        return;
    s_caret_t *st = op->state;
    s_target_t *t = data;
    int count = -1;
    GVariant *v = NULL;
    if (reply) {
        g_variant_get (reply, "(v)", &v);
        if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_INT32))
            count = g_variant_get_int32 (v);
        if (v)
            g_variant_unref (v);
    }
    if (count <= 0) {
        t->text = ufo_strdup ("");
        if (--st->left == 0)
            s_search (op);
        return;
    }
    ufo_desktop_call_ (op, st->bus, t->path, "org.a11y.atspi.Text", "GetText",
                       g_variant_new ("(ii)", 0, count), "(s)", s_on_text, t);
}

static void
s_add_target (s_caret_t *st, const ufo_dnode_t *node)
{
    if (st->count >= S_MAX_TARGETS)
        return;
    st->targets [st->count++].path = ufo_strdup (node->path);
}

ufo_desktop_op_t *
ufo_desktop_caret_begin_ (ufo_desktop_t *desk, int64_t xid, const char *label, const char *function,
                          const ufo_value_t *args)
{
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (desk, desk->action_timeout_ms + 1000);
    s_caret_t *st = ufo_calloc (1, sizeof (*st));
    op->state = st;
    op->free_state = s_free;
    st->select = streq (function, "select_text");
    if (args && ufo_value_type (args) != UFO_TMAP) {
        ufo_desktop_op_finish_ (op, false, NULL, "Args must be an object");
        return op;
    }
    const ufo_value_t *text = ufo_value_map_get (args, "text");
    if (ufo_value_type (text) != UFO_TSTRING || ufo_value_strlen (text) == 0
    ||  ufo_value_strlen (text) > S_MAX_PHRASE
    ||  !g_utf8_validate (ufo_value_str (text), (gssize) ufo_value_strlen (text), NULL)) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs a string 'text': the words to find "
                                "(1 to %d bytes of UTF-8)", function, S_MAX_PHRASE);
        return op;
    }
    const char *at = ufo_value_map_str (args, "at", "end");
    if (st->select ? ufo_value_map_has (args, "at") : (!streq (at, "end") && !streq (at, "start"))) {
        ufo_desktop_op_finish_ (op, false, NULL, st->select
                                ? "select_text takes only 'text'"
                                : "caret_to_text: 'at' must be \"end\" (after the text) or \"start\"");
        return op;
    }
    st->at_start = streq (at, "start");
    st->phrase = ufo_strdup (ufo_value_str (text));
    ufo_dwin_t *win = ufo_desktop_win_ (desk, xid, false);
    if (!label || !*label || label [strspn (label, "0123456789")]) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s needs the label of a document or text "
                                "control", function);
        return op;
    }
    const ufo_dlabel_t *entry = win ? ufo_desktop_label_find_ (win, label) : NULL;
    ufo_dnode_t *node = entry ? g_hash_table_lookup (desk->nodes, entry->key) : NULL;
    if (!node) {
        ufo_desktop_op_finish_ (op, false, NULL, "no control labelled '%.64s' in the latest "
                                "snapshot of window %" PRId64 " (take a new snapshot)", label, xid);
        return op;
    }
    const ufo_value_t *control = ufo_value_list_at (win->controls, entry->index);
    st->what = g_strdup_printf ("%s '%s' (label %s)", ufo_value_map_str (control, "control_type", "?"),
                                ufo_value_map_str (control, "control_text", ""), label);
    st->bus = ufo_strdup (node->bus);
    st->targets = ufo_calloc (S_MAX_TARGETS, sizeof (s_target_t));
    //  the control's own text, else its paragraphs (children with text), in order
    if (node->ifaces & S_IF_TEXT)
        s_add_target (st, node);
    else
        for (guint i = 0; node->kids && i < node->kids->len; i++) {
            const ufo_dnode_t *kid = g_ptr_array_index (node->kids, i);
            if (kid->valid && ((kid->ifaces & S_IF_TEXT) || kid->role == ATSPI_ROLE_PARAGRAPH
                               || kid->role == ATSPI_ROLE_HEADING))
                s_add_target (st, kid);
        }
    if (st->count == 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s has no text to search (neither text of "
                                "its own nor paragraphs on screen)", st->what);
        return op;
    }
    st->left = st->count;
    for (int i = 0; i < st->count; i++)
        ufo_desktop_call_ (op, st->bus, st->targets [i].path, "org.freedesktop.DBus.Properties",
                           "Get", g_variant_new ("(ss)", "org.a11y.atspi.Text", "CharacterCount"),
                           "(v)", s_on_count, &st->targets [i]);
    return op;
}
