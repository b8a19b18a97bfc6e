/*  ufo_desktop_act.c - the original's actions, on AT-SPI interfaces where the control
    offers them (Action, EditableText, Text, Component), else with XTest at the control's
    centre. Each action waits for its effect (AT-SPI events going quiet, or the expected
    text) with a bound, without blocking: it is an operation advanced by pumping. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_desktop.h"
#include "ufo_desktop_int.h"

typedef enum { A_EFFECT, A_TEXT_EQUALS, A_TEXT_CONTAINS, A_DEADLINE, A_DRAG, A_DONE,
               A_FOCUS } s_wait_t;

typedef struct {
    int64_t xid;
    char *key;                  //  the control's node key ("bus path"), NULL if none
    char *bus, *path;
    char *app_bus;              //  the application's bus name, if known (its events count)
    int cx, cy;                 //  control centre on screen
    s_wait_t wait;
    int64_t sent_ms, effect_deadline;
    char *expect;               //  for text waits
    bool polling;               //  a GetText poll is in flight
    int64_t next_poll;
    //  drag
    int sx, sy, ex, ey, button;
    int64_t drag_start, drag_ms;
    ufo_value_t *keys;          //  parsed keys waiting for focus
    int restore_caret;          //  caret offset to put back after GrabFocus, or -1
    char *what;                 //  "Edit 'Name'" (label N), for messages
    char *target_note;          //  where untargeted keys went (the result's text)
    char *inner_path;           //  the button inside a button without a click action
    bool typed;                 //  set_edit_text fell back to typing
    //  the action, kept for s_act_dispatch (which may run after the state check's reply)
    char *function;
    ufo_value_t *args;          //  a map, or NULL
    ufo_value_t *control;       //  the control of the snapshot, or NULL
    int wx, wy, ww, wh;         //  the window on screen
    s_wait_t after_focus;       //  A_FOCUS: the wait that follows once the keys are sent
    int64_t focus_until;        //  A_FOCUS: type anyway after this
    uint32_t ping;              //  the input barrier after XTest input (0: none, or ended)
    bool ping_waiting;          //  its answer has not come yet
    int64_t ping_ms;            //  when it came
    int64_t ping_sent_ms;       //  when it was sent
    char *typed_tail;           //  text the keys type into an editable control, awaited in
    uint64_t inserted_mark;     //  its text-changed events (NULL: none awaited), since this
} s_act_t;

static void s_wait_begins (ufo_desktop_op_t *op);

static void
s_act_free (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    if (!st)
        return;
    free (st->key);
    free (st->bus);
    free (st->app_bus);
    free (st->expect);
    g_free (st->what);
    g_free (st->target_note);
    free (st->inner_path);
    free (st->function);
    ufo_value_destroy (&st->args);
    ufo_value_destroy (&st->control);
    ufo_value_destroy (&st->keys);
    ufo_desktop_ping_end_ (op->desk, st->ping);
    free (st->typed_tail);
    free (st);
    op->state = NULL;
}

//  After XTest input to window st->xid: the effect wait also waits (up to its deadline) for
//  the application to answer a ping sent behind the input, so that the action does not end
//  while the input is still queued in the application and a following AT-SPI call (a
//  DoAction, a text read) overtakes it (docs/DESKTOP.md "Input order").
static void
s_barrier (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    ufo_desktop_ping_end_ (op->desk, st->ping);
    st->ping = ufo_desktop_ping_send_ (op->desk, st->xid);
    st->ping_waiting = st->ping != 0;
    st->ping_ms = 0;
    st->ping_sent_ms = ufo_desktop_now_ms_ ();
}

//  Keys about to be sent by the action: when they type characters into an editable control
//  (the action's control, else the focused one), their last run of characters is awaited in
//  the application's text-changed events too - an application may read ahead of its input
//  (LibreOffice's VCL peeks at all queued X events, answering the ping, while it is still
//  taking the keys one by one between other work).
static void
s_expect_typed (ufo_desktop_op_t *op, const ufo_value_t *keys)
{
    s_act_t *st = op->state;
    ufo_desktop_t *desk = op->desk;
    const char *key = st->key ? st->key : desk->focus_key;
    ufo_dnode_t *target = key ? g_hash_table_lookup (desk->nodes, key) : NULL;
    free (st->typed_tail);
    st->typed_tail = NULL;
    if (!target || (!(target->ifaces & S_IF_EDITABLE)
                    && !ufo_dnode_has_state_ (target, ATSPI_STATE_EDITABLE)))
        return;
    char *tail = ufo_desktop_keys_tail_ (keys);
    if (*tail) {
        st->typed_tail = tail;
        st->inserted_mark = desk->inserted_total;
    }
    else
        free (tail);
}

//  True while the input is not known to be taken: the ping's answer or the typed text is
//  awaited (reads X's queue; ends the ping once answered). st->ping_ms: when it was taken.
static bool
s_barrier_open (ufo_desktop_op_t *op, int64_t now)
{
    s_act_t *st = op->state;
    if (st->ping_waiting) {
        if (!ufo_desktop_ping_answered_ (op->desk, st->ping))
            return true;
        st->ping_waiting = false;
        st->ping_ms = now;
        ufo_desktop_ping_end_ (op->desk, st->ping);
        st->ping = 0;
        ufo_debug ("desktop: window %" PRId64 " took the input in %" PRId64 " ms", st->xid,
                   now - st->ping_sent_ms);
    }
    if (st->typed_tail) {
        if (!ufo_desktop_inserted_since_ (op->desk, st->inserted_mark, st->typed_tail))
            return true;
        ufo_debug ("desktop: '%s' arrived in window %" PRId64 " in %" PRId64 " ms",
                   st->typed_tail, st->xid, now - st->ping_sent_ms);
        free (st->typed_tail);
        st->typed_tail = NULL;
        st->ping_ms = now;
    }
    return false;
}

//  When the last AT-SPI event came from the application on `bus` (any application when
//  bus is NULL); 0 if none yet.
static int64_t
s_last_event_ms (ufo_desktop_t *desk, const char *bus)
{
    if (bus) {
        gint64 *when = g_hash_table_lookup (desk->bus_event_ms, bus);
        return when ? *when : 0;
    }
    GHashTableIter iter;
    gpointer key, value;
    int64_t last = 0;
    g_hash_table_iter_init (&iter, desk->bus_event_ms);
    while (g_hash_table_iter_next (&iter, &key, &value))
        if (*(gint64 *) value > last)
            last = *(gint64 *) value;
    return last;
}

static void s_on_done_call (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data);

#define S_FOCUS_WAIT_MS 500         //  how long keys wait for their control to take the focus

//  A_FOCUS: the control's states (GetState's reply); typing starts when it is focused (or
//  the wait is over).
static void
s_focus_polled (ufo_desktop_op_t *op, GVariant *reply)
{
    s_act_t *st = op->state;
    bool focused = false;
    if (reply) {
        GVariant *au = g_variant_get_child_value (reply, 0);
        gsize n = 0;
        const guint32 *bits = g_variant_get_fixed_array (au, &n, sizeof (guint32));
        focused = n > 0 && (bits [0] & (1u << ATSPI_STATE_FOCUSED));
        g_variant_unref (au);
    }
    if (focused || !reply || ufo_desktop_now_ms_ () >= st->focus_until) {
        st->wait = st->after_focus;
        GVariant *empty = g_variant_ref_sink (g_variant_new ("()"));
        s_on_done_call (op, empty, NULL, "typing");
        g_variant_unref (empty);
    }
}

//  A_TEXT_EQUALS / A_TEXT_CONTAINS: the control's text (GetText's reply); done when it is
//  (or contains) the expected text.
static void
s_text_polled (ufo_desktop_op_t *op, GVariant *reply)
{
    s_act_t *st = op->state;
    if (!reply)
        return;
    const char *text = NULL;
    g_variant_get (reply, "(&s)", &text);
    if (!text || !st->expect)
        return;
    if (st->wait == A_TEXT_EQUALS ? streq (text, st->expect) : strstr (text, st->expect) != NULL)
        ufo_desktop_op_finish_ (op, true, text, NULL);
}

//  The reply of a poll (s_poll; data: S_POLL_FOCUS or S_POLL_TEXT, what it asked for): the
//  next one is due in 20 ms. A reply to what the wait no longer asks (a text poll still in
//  flight when typing fell back to focusing first) is dropped.
static const char S_POLL_FOCUS [] = "focus", S_POLL_TEXT [] = "text";
static void
s_on_poll (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    st->polling = false;
    st->next_poll = ufo_desktop_now_ms_ () + 20;
    bool focus = st->wait == A_FOCUS;
    if (focus != (data == S_POLL_FOCUS))
        return;
    if (focus)
        s_focus_polled (op, reply);
    else
        s_text_polled (op, reply);
}

//  Starts the poll of a polling wait (A_FOCUS: the states; text waits: the text) when one is
//  due and none is in flight.
static void s_get_text (ufo_desktop_op_t *op, ufo_reply_fn fn, void *data);
static void
s_poll (ufo_desktop_op_t *op, int64_t now)
{
    s_act_t *st = op->state;
    if (st->polling || now < st->next_poll)
        return;
    st->polling = true;
    if (st->wait == A_FOCUS)
        ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Accessible", "GetState",
                           NULL, "(au)", s_on_poll, (void *) S_POLL_FOCUS);
    else
        s_get_text (op, s_on_poll, (void *) S_POLL_TEXT);
}
static void s_focus_then_type (ufo_desktop_op_t *op, const ufo_dnode_t *node);
static ufo_value_t *s_literal_keys (const char *text, bool clear, ufo_error_t *err);

//  set_edit_text whose EditableText call was accepted but changed nothing (Firefox answers
//  true to InsertText and SetTextContents and keeps the old text): after this long the text
//  is typed instead - the control focused, its text selected and deleted when replacing.
#define S_TYPE_FALLBACK_MS 600

static void
s_type_instead (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    st->typed = true;
    ufo_dnode_t *node = st->key ? g_hash_table_lookup (op->desk->nodes, st->key) : NULL;
    ufo_error_t err = { 0 };
    ufo_value_destroy (&st->keys);
    st->keys = node ? s_literal_keys (st->expect, st->wait == A_TEXT_EQUALS, &err) : NULL;
    if (!st->keys || ufo_desktop_focus (op->desk, st->xid, &err) != 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "the text did not take, and typing it failed: %s",
                                node ? err.message : "the control is gone");
        return;
    }
    ufo_debug ("desktop: EditableText did not take; typing the text");
    s_focus_then_type (op, node);
}

//  The common wait: the action is done when AT-SPI events have come and then gone quiet
//  for settle_ms; if nothing at all happens before the effect deadline, it is done too
//  (success, with a note), because many actions have no visible effect.
static bool
s_act_poll (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    ufo_desktop_t *desk = op->desk;
    int64_t now = ufo_desktop_now_ms_ ();
    switch (st->wait) {
        case A_DONE:
            return op->done;
        case A_FOCUS:
            s_poll (op, now);
            return op->done;
        case A_DEADLINE:
            if (now >= op->deadline - 1)
                ufo_desktop_op_finish_ (op, true, NULL, NULL);
            return op->done;
        case A_DRAG: {
            double t = st->drag_ms > 0 ? (double) (now - st->drag_start) / (double) st->drag_ms : 1;
            if (t > 1)
                t = 1;
            ufo_desktop_pointer_move_ (desk, st->sx + (int) ((st->ex - st->sx) * t),
                                       st->sy + (int) ((st->ey - st->sy) * t));
            if (t >= 1) {
                ufo_desktop_pointer_button_ (desk, st->button, false);
                s_wait_begins (op);
                st->wait = A_EFFECT;
                st->sent_ms = now;
                st->effect_deadline = now + desk->action_timeout_ms;
                op->deadline = st->effect_deadline + 1000;
            }
            return false;
        }
        case A_TEXT_EQUALS:
        case A_TEXT_CONTAINS:
            s_poll (op, now);
            if (!op->done && !st->typed && !st->keys && st->sent_ms > 0
            &&  now - st->sent_ms >= S_TYPE_FALLBACK_MS)
                s_type_instead (op);
            if (!op->done && now > st->effect_deadline)
                ufo_desktop_op_finish_ (op, false, NULL,
                                        "the control's text did not become the expected text "
                                        "within %d ms", desk->action_timeout_ms);
            return op->done;
        case A_EFFECT: {
            //  keys not sent yet (they go out once the control has the focus, in a reply's
            //  callback): the application's events so far are not their effect (bounded by
            //  op->deadline)
            if (st->keys)
                return op->done;
            //  only the application's own events count: another busy application must not
            //  keep the action waiting
            int64_t last = s_last_event_ms (desk, st->app_bus);
            bool changed = last >= st->sent_ms;
            bool queued = s_barrier_open (op, now);
            const char *note = queued ? "the application had not taken all the input when the "
                                        "wait ended (it is busy)"
                             : changed ? "the UI was still changing when the wait ended"
                                       : "no UI change was observed";
            //  quiet since the last event, and since the application took the input
            int64_t from = last > st->ping_ms ? last : st->ping_ms;
            if (changed && !queued && now - from >= desk->settle_ms
            &&  now - st->sent_ms >= desk->settle_ms)
                ufo_desktop_op_finish_ (op, true, st->target_note, NULL);
            else if (now > st->effect_deadline) {
                if (queued)
                    ufo_debug ("desktop: window %" PRId64 " had not taken the input after %"
                               PRId64 " ms", st->xid, now - st->ping_sent_ms);
                char *text = st->target_note ? g_strdup_printf ("%s; %s", st->target_note, note)
                                             : g_strdup (note);
                ufo_desktop_op_finish_ (op, true, text, NULL);
                g_free (text);
            }
            return op->done;
        }
    }
    return op->done;
}

//  When the action next advances by time alone (see ufo_desktop_op_wake).
static int64_t
s_act_wake (const ufo_desktop_op_t *op)
{
    const s_act_t *st = op->state;
    int64_t now = ufo_desktop_now_ms_ ();
    switch (st->wait) {
        case A_DRAG:
            return now + 10;                        //  the pointer moves in 10 ms steps
        case A_TEXT_EQUALS:
        case A_TEXT_CONTAINS:
        case A_FOCUS:           //  a poll in flight: its reply wakes the caller (the fd)
            if (st->polling)
                return st->wait == A_FOCUS ? st->focus_until : st->effect_deadline;
            return st->next_poll > now ? st->next_poll : now;
        case A_EFFECT: {
            if (st->keys)                   //  a reply comes first (it wakes the caller)
                return op->deadline;
            if (st->ping_waiting || st->typed_tail)     //  X's queue, the events: polled
                return now + 5 < st->effect_deadline ? now + 5 : st->effect_deadline;
            int64_t last = s_last_event_ms (op->desk, st->app_bus);
            int64_t from = last > st->ping_ms ? last : st->ping_ms;
            int64_t quiet = (from > st->sent_ms ? from : st->sent_ms) + op->desk->settle_ms;
            return quiet < st->effect_deadline ? quiet : st->effect_deadline;
        }
        default:
            return op->deadline;
    }
}

//  The int32 in a Properties.Get reply "(v)" (CharacterCount, CaretOffset), or -1.
static int
s_int_property (GVariant *reply)
{
    int value = -1;
    GVariant *v = NULL;
    if (reply) {
        g_variant_get (reply, "(v)", &v);
        if (v && g_variant_is_of_type (v, G_VARIANT_TYPE_INT32))
            value = g_variant_get_int32 (v);
        if (v)
            g_variant_unref (v);
    }
    return value;
}

//  Reads the whole text of the action's control and calls fn with the (s) reply: exactly
//  CharacterCount characters (GTK4, Qt and Firefox answer "" to GetText (0, -1)). The count
//  and GetText (0, -1) are asked together: when the latter has exactly that many characters
//  (GTK3) it is the answer, one round trip instead of two; else GetText (0, count) follows;
//  without a count, GetText (0, -1) is the answer.
typedef struct {
    int refs;                   //  one per call in flight
    bool got_count, got_whole;
    int count;                  //  CharacterCount, -1 if it could not be read
    GVariant *whole;            //  GetText (0, -1)'s reply, NULL if it failed
    char *whole_error;
    ufo_reply_fn fn;
    void *data;
} s_text_read_t;

static void
s_text_read_unref (s_text_read_t *tr)
{
    if (--tr->refs > 0)
        return;
    if (tr->whole)
        g_variant_unref (tr->whole);
    g_free (tr->whole_error);
    free (tr);
}

//  Both replies are in: the answer, or the second call.
static void
s_text_read_settle (ufo_desktop_op_t *op, s_text_read_t *tr)
{
    if (!tr->got_count || !tr->got_whole || !op || op->done)
        return;
    s_act_t *st = op->state;
    const char *whole = NULL;
    if (tr->whole)
        g_variant_get (tr->whole, "(&s)", &whole);
    if (tr->count < 0)
        tr->fn (op, tr->whole, tr->whole ? NULL : tr->whole_error, tr->data);
    else if (whole && g_utf8_strlen (whole, -1) == tr->count)
        tr->fn (op, tr->whole, NULL, tr->data);
    else
        ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Text", "GetText",
                           g_variant_new ("(ii)", 0, tr->count), "(s)", tr->fn, tr->data);
}

static void
s_on_count (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    s_text_read_t *tr = data;
    tr->got_count = true;
    tr->count = s_int_property (reply);
    s_text_read_settle (op, tr);
    s_text_read_unref (tr);
}

static void
s_on_whole (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    s_text_read_t *tr = data;
    tr->got_whole = true;
    tr->whole = reply ? g_variant_ref (reply) : NULL;
    tr->whole_error = g_strdup (error ? error : "D-Bus error");
    s_text_read_settle (op, tr);
    s_text_read_unref (tr);
}

//  (fn gets data with the text)
static void
s_get_text (ufo_desktop_op_t *op, ufo_reply_fn fn, void *data)
{
    s_act_t *st = op->state;
    s_text_read_t *tr = ufo_calloc (1, sizeof (*tr));
    tr->refs = 2;
    tr->fn = fn;
    tr->data = data;
    ufo_desktop_call_ (op, st->bus, st->path, "org.freedesktop.DBus.Properties", "Get",
                       g_variant_new ("(ss)", "org.a11y.atspi.Text", "CharacterCount"), "(v)",
                       s_on_count, tr);
    ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Text", "GetText",
                       g_variant_new ("(ii)", 0, -1), "(s)", s_on_whole, tr);
}

//  The action is sent: from now on it waits for the application (its focus, its effect),
//  or for the time the model asked for; the result's wait_s counts from the first wait.
static void
s_wait_begins (ufo_desktop_op_t *op)
{
    if (!op->wait_from_us)
        op->wait_from_us = ufo_time_mono_us ();
}

static void
s_start_effect_wait (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    if (st->wait != A_DONE)
        s_wait_begins (op);
    st->sent_ms = ufo_desktop_now_ms_ ();
    st->effect_deadline = st->sent_ms + op->desk->action_timeout_ms;
    op->deadline = st->effect_deadline + 1000;
}

//  Generic reply for calls whose answer only says whether they worked.
static void
s_on_done_call (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    const char *what = data;
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    gboolean ok = reply != NULL;
    if (reply && g_variant_is_of_type (reply, G_VARIANT_TYPE ("(b)")))
        g_variant_get (reply, "(b)", &ok);
    if (!ok && st->keys)            //  the control would not take the focus: the window has
        ufo_debug ("desktop: %s failed; typing into the focused window", what);   //  it
    else if (!reply && !st->typed && st->expect
         &&  (st->wait == A_TEXT_EQUALS || st->wait == A_TEXT_CONTAINS)) {
        //  an editable control whose EditableText call fails (Chromium's entries are
        //  editable but answer InsertText with "no such method"): type the text instead
        ufo_debug ("desktop: %s failed (%s); typing the text", what, error ? error : "");
        s_type_instead (op);
        return;
    }
    else if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s failed: %s", what, error);
        return;
    }
    else if (!ok) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s was refused by the application", what);
        return;
    }
    if (st->restore_caret >= 0 && streq (what, "focusing the control")) {
        //  focusing selected the text or moved the caret (GTK entries select all): put the
        //  caret back where it was, which also drops the selection, before typing
        int caret = st->restore_caret;
        st->restore_caret = -1;
        ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Text", "SetCaretOffset",
                           g_variant_new ("(i)", caret), "(b)", s_on_done_call,
                           "restoring the caret");
        return;
    }
    if (st->keys && st->key && st->wait != A_FOCUS && !st->focus_until) {
        //  focus granted: type once the control says it has the focus (Firefox moves the
        //  focus asynchronously: keys sent at once went to the field before); bounded
        st->after_focus = st->wait;
        st->wait = A_FOCUS;
        s_wait_begins (op);             //  for the control to say it has the focus
        st->focus_until = ufo_desktop_now_ms_ () + S_FOCUS_WAIT_MS;
        st->next_poll = 0;
        return;
    }
    if (st->keys) {                 //  focus granted: now type
        ufo_error_t err = { 0 };
        s_expect_typed (op, st->keys);
        if (ufo_desktop_send_keys_ (op->desk, st->keys, &err) != 0) {
            ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
            return;
        }
        ufo_value_destroy (&st->keys);
        s_barrier (op);
    }
    if (st->wait != A_TEXT_EQUALS && st->wait != A_TEXT_CONTAINS)
        st->wait = A_EFFECT;
    s_start_effect_wait (op);
}

static void
s_on_texts (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "reading the text failed: %s", error);
        return;
    }
    const char *text = NULL;
    g_variant_get (reply, "(&s)", &text);
    ufo_desktop_op_finish_ (op, true, text ? text : "", NULL);
}

static void
s_on_caret (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    UFO_UNUSED (error);
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    int caret = s_int_property (reply);
    //  insert at the caret (at the end if the caret is unknown); length is in bytes
    ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.EditableText", "InsertText",
                       g_variant_new ("(isi)", caret < 0 ? INT32_MAX : caret, st->expect,
                                      (gint32) strlen (st->expect)),
                       "(b)", s_on_done_call, "inserting text");
}

//  --- helpers -------------------------------------------------------------------------------

static void
s_on_focus_caret (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    UFO_UNUSED (error);
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    st->restore_caret = s_int_property (reply);
    ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Component", "GrabFocus",
                       NULL, "(b)", s_on_done_call, "focusing the control");
}

//  Gives the control the keyboard focus without changing its content or caret, then types
//  st->keys (s_on_done_call). A control that has the focus already is left alone; for a text
//  control the caret offset is read first and put back after GrabFocus.
static void
s_focus_then_type (ufo_desktop_op_t *op, const ufo_dnode_t *node)
{
    s_act_t *st = op->state;
    if (node->valid && ufo_dnode_has_state_ (node, ATSPI_STATE_FOCUSED)) {    //  fresh states
        GVariant *empty = g_variant_ref_sink (g_variant_new ("()"));
        s_on_done_call (op, empty, NULL, "typing");
        g_variant_unref (empty);
    }
    else if (node->ifaces & S_IF_TEXT)
        ufo_desktop_call_ (op, st->bus, st->path, "org.freedesktop.DBus.Properties", "Get",
                           g_variant_new ("(ss)", "org.a11y.atspi.Text", "CaretOffset"), "(v)",
                           s_on_focus_caret, NULL);
    else
        ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Component", "GrabFocus",
                           NULL, "(b)", s_on_done_call, "focusing the control");
}

//  "the focused control, Edit 'Name' (label 3)" or what is known of where keys without a
//  target go. Caller frees (g_free).
static char *
s_focus_where (ufo_desktop_t *desk, int64_t xid, const char *app_bus)
{
    ufo_dnode_t *f = desk->focus_key ? g_hash_table_lookup (desk->nodes, desk->focus_key) : NULL;
    ufo_dwin_t *win = ufo_desktop_win_ (desk, xid, false);
    if (!f || (app_bus && !streq (f->bus, app_bus))) {
        //  no focus event seen from this application: the latest snapshot's focused control
        f = NULL;
        for (guint i = 0; win && !f && i < win->labels->len; i++) {
            const ufo_dlabel_t *l = g_ptr_array_index (win->labels, i);
            ufo_dnode_t *n = g_hash_table_lookup (desk->nodes, l->key);
            if (n && n->valid && ufo_dnode_has_state_ (n, ATSPI_STATE_FOCUSED))
                f = n;
        }
    }
    if (!f)
        return g_strdup ("the window's focus (no focused control was reported)");
    char *fkey = ufo_dnode_key_ (f->bus, f->path);
    const char *type = ufo_desktop_control_type_ (desk, f);
    const char *name = f->name ? f->name : "";
    while (*name == ' ')
        name++;
    for (guint i = 0; win && i < win->labels->len; i++) {
        const ufo_dlabel_t *l = g_ptr_array_index (win->labels, i);
        if (streq (l->key, fkey)) {
            const ufo_value_t *c = ufo_value_list_at (win->controls, l->index);
            g_free (fkey);
            return g_strdup_printf ("the focused control, %s '%s' (label %d)",
                                    ufo_value_map_str (c, "control_type", "?"),
                                    ufo_value_map_str (c, "control_text", ""), l->label);
        }
    }
    g_free (fkey);
    return g_strdup_printf ("the focused control, %s '%s' (not in the latest snapshot)",
                            type ? type : "control", name);
}

static bool
s_xtest_click (ufo_desktop_op_t *op, int x, int y, int button, bool dbl)
{
    s_act_t *st = op->state;
    ufo_error_t err = { 0 };
    if (ufo_desktop_focus (op->desk, st->xid, &err) != 0) {
        ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
        return false;
    }
    ufo_desktop_pointer_move_ (op->desk, x, y);
    for (int i = 0; i < (dbl ? 2 : 1); i++) {
        ufo_desktop_pointer_button_ (op->desk, button, true);
        ufo_desktop_pointer_button_ (op->desk, button, false);
    }
    XSync (op->desk->dpy, False);
    s_barrier (op);
    //  a pointer in the window can move what it shows without an event: LibreOffice learns
    //  where its drawing area is from the first pointer motion (its own objects reported
    //  25 px too high until then) and tells no one; the next walk reads all extents again
    ufo_dwin_t *win = ufo_desktop_win_ (op->desk, st->xid, false);
    if (win)
        win->scrolled = true;
    st->wait = A_EFFECT;
    s_start_effect_wait (op);
    return true;
}

static int
s_button (const ufo_value_t *args, ufo_desktop_op_t *op)
{
    const char *b = ufo_value_map_str (args, "button", "left");
    if (streq (b, "left")) return 1;
    if (streq (b, "middle")) return 2;
    if (streq (b, "right")) return 3;
    ufo_desktop_op_finish_ (op, false, NULL, "button must be left, middle or right, not '%s'", b);
    return 0;
}

//  A fraction argument in 0..1, else an error.
static bool
s_fraction (ufo_desktop_op_t *op, const ufo_value_t *args, const char *key, double *out)
{
    const ufo_value_t *v = ufo_value_map_get (args, key);
    if (ufo_value_type (v) != UFO_TINT && ufo_value_type (v) != UFO_TFLOAT) {
        ufo_desktop_op_finish_ (op, false, NULL, "argument '%s' (a number 0..1) is missing", key);
        return false;
    }
    *out = ufo_value_float (v);
    if (!(*out >= 0 && *out <= 1)) {
        ufo_desktop_op_finish_ (op, false, NULL, "argument '%s' must be between 0 and 1", key);
        return false;
    }
    return true;
}

//  Key events that type `text` literally (the syntax characters escaped), after Ctrl+A and
//  Delete when `clear`. NULL with err if the text is not valid UTF-8 or too long.
static ufo_value_t *
s_literal_keys (const char *text, bool clear, ufo_error_t *err)
{
    ufo_buf_t buf = { 0 };
    if (clear)
        ufo_buf_puts (&buf, "^a{DELETE}");
    for (const char *p = text; *p; p++) {
        if (strchr ("+^%~(){}#", *p)) {
            ufo_buf_putc (&buf, '{');
            ufo_buf_putc (&buf, *p);
            ufo_buf_putc (&buf, '}');
        }
        else
            ufo_buf_putc (&buf, *p);
    }
    char *keys = ufo_buf_detach (&buf, NULL);
    ufo_value_t *events = ufo_desktop_keys_parse (keys, err);
    free (keys);
    return events;
}

//  by name (GetName), never by position: Firefox's check boxes say check/uncheck, tabs switch
static const char *s_click_actions [] = { "click", "press", "activate", "jump", "toggle", "select",
                                          "open", "check", "uncheck", "switch" };

//  Index of the node's click-like action, or -1.
static int
s_click_action (const ufo_dnode_t *node)
{
    for (size_t k = 0; k < UFO_ARRAY_SIZE (s_click_actions); k++)
        for (int i = 0; node && node->actions && node->actions [i]; i++)
            if (strcasecmp (node->actions [i], s_click_actions [k]) == 0)
                return i;
    return -1;
}

static void
s_on_inner_actions (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    int index = -1;
    if (reply) {
        GVariant *arr = g_variant_get_child_value (reply, 0);
        for (size_t k = 0; k < UFO_ARRAY_SIZE (s_click_actions) && index < 0; k++)
            for (gsize i = 0; i < g_variant_n_children (arr) && index < 0; i++) {
                const char *name = NULL;
                g_variant_get_child (arr, i, "(&sss)", &name, NULL, NULL);
                if (name && strcasecmp (name, s_click_actions [k]) == 0)
                    index = (int) i;
            }
        g_variant_unref (arr);
    }
    if (index < 0) {
        s_xtest_click (op, st->cx, st->cy, 1, false);
        return;
    }
    ufo_desktop_call_ (op, st->bus, st->inner_path, "org.a11y.atspi.Action", "DoAction",
                       g_variant_new ("(i)", index), "(b)", s_on_done_call, "the click");
}

static void
s_on_inner_kids (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (error);
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    s_act_t *st = op->state;
    GVariant *arr = reply ? g_variant_get_child_value (reply, 0) : NULL;
    if (arr && g_variant_n_children (arr) > 0) {
        const char *bus = NULL, *path = NULL;
        g_variant_get_child (arr, 0, "(&s&o)", &bus, &path);
        if (streq (bus, st->bus)) {
            st->inner_path = ufo_strdup (path);
            ufo_desktop_call_ (op, st->bus, st->inner_path, "org.a11y.atspi.Action", "GetActions",
                               NULL, "(a(sss))", s_on_inner_actions, NULL);
            g_variant_unref (arr);
            return;
        }
    }
    if (arr)
        g_variant_unref (arr);
    s_xtest_click (op, st->cx, st->cy, 1, false);
}

//  Actions that give the control input (a click, text, keys, the wheel); reading its
//  text does not.
static bool
s_acts_on_control (const char *function, const ufo_value_t *args)
{
    return streq (function, "click_input") || streq (function, "set_edit_text")
        || streq (function, "wheel_mouse_input")
        || (streq (function, "keyboard_input") && ufo_value_map_bool (args, "control_focus", true));
}

static void s_act_dispatch (ufo_desktop_op_t *op);
static bool s_text_known (ufo_desktop_t *desk, const ufo_dnode_t *node);

//  Runs the action, or ends it with an error naming the control when states (AtspiStateType
//  bits) say it is disabled: neither sensitive nor enabled (LibreOffice's cells say only
//  enabled, toolkits both).
static void
s_check_enabled (ufo_desktop_op_t *op, uint64_t states)
{
    s_act_t *st = op->state;
    if (!(states & (1ull << ATSPI_STATE_SENSITIVE)) && !(states & (1ull << ATSPI_STATE_ENABLED))) {
        ufo_desktop_op_finish_ (op, false, NULL,
                                "control %s is disabled: %s was not run (it takes no input until "
                                "the application enables it)", st->what, st->function);
        return;
    }
    s_act_dispatch (op);
}

//  The control's states, read because an event changed them after the snapshot.
static void
s_on_enabled_state (ufo_desktop_op_t *op, GVariant *reply, const char *error, void *data)
{
    UFO_UNUSED (data);
    if (!op || op->done)
        return;
    if (!reply) {
        ufo_desktop_op_finish_ (op, false, NULL, "control %s: reading its states failed: %s",
                                ((s_act_t *) op->state)->what, error);
        return;
    }
    uint64_t states = 0;
    GVariant *au = g_variant_get_child_value (reply, 0);
    gsize n = 0;
    const guint32 *bits = g_variant_get_fixed_array (au, &n, sizeof (guint32));
    for (gsize i = 0; i < n && i < 2; i++)
        states |= (uint64_t) bits [i] << (32 * i);
    g_variant_unref (au);
    s_check_enabled (op, states);
}

//  Runs the action of st (function, args, control) once its control is known to take
//  input; ends the operation or starts its wait.
static void
s_act_dispatch (ufo_desktop_op_t *op)
{
    s_act_t *st = op->state;
    ufo_desktop_t *self = op->desk;
    const char *function = st->function;
    const ufo_value_t *args = st->args;
    const ufo_value_t *control = st->control;
    int64_t xid = st->xid;
    int wx = st->wx, wy = st->wy, ww = st->ww, wh = st->wh;
    ufo_dnode_t *node = st->key ? g_hash_table_lookup (self->nodes, st->key) : NULL;
    if (st->key && !node) {
        ufo_desktop_op_finish_ (op, false, NULL, "control %s no longer exists; take a new snapshot",
                                st->what);
        return;
    }
    if (streq (function, "click_input")) {
        int button = s_button (args, op);
        bool dbl = ufo_value_map_bool (args, "double", false);
        int index = s_click_action (node);
        if (!button)
            return;
        //  a cell or row: a click selects it (its "activate" would open it, as a double
        //  click does): click it for real, as pywinauto's click_input does
        if (node->role == ATSPI_ROLE_TABLE_CELL || node->role == ATSPI_ROLE_LIST_ITEM
        ||  node->role == ATSPI_ROLE_TREE_ITEM)
            index = -1;
        if (button == 1 && !dbl && index >= 0 && (node->ifaces & S_IF_ACTION)) {
            st->wait = A_EFFECT;
            ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Action", "DoAction",
                               g_variant_new ("(i)", index), "(b)", s_on_done_call, "the click");
        }
        else if (button == 1 && !dbl && (node->role == ATSPI_ROLE_PUSH_BUTTON
                                         || node->role == ATSPI_ROLE_TOGGLE_BUTTON)) {
            //  a button without a click action (GTK4's menu button): the button inside it
            //  has one; else a pointer click
            st->wait = A_EFFECT;
            ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Accessible", "GetChildren",
                               NULL, "(a(so))", s_on_inner_kids, NULL);
        }
        else
            s_xtest_click (op, st->cx, st->cy, button, dbl);
    }
    else if (streq (function, "click_on_coordinates")) {
        double fx, fy;
        int button = s_button (args, op);
        if (button && s_fraction (op, args, "x", &fx) && s_fraction (op, args, "y", &fy))
            s_xtest_click (op, wx + (int) (fx * ww), wy + (int) (fy * wh), button,
                           ufo_value_map_bool (args, "double", false));
    }
    else if (streq (function, "drag_on_coordinates")) {
        double f [4];
        const char *keys [4] = { "start_x", "start_y", "end_x", "end_y" };
        int button = s_button (args, op);
        for (int i = 0; i < 4 && button; i++)
            if (!s_fraction (op, args, keys [i], &f [i]))
                return;
        double duration = ufo_value_map_float (args, "duration", 1.0);
        if (!button)
            return;
        if (!(duration >= 0 && duration <= 60)) {
            ufo_desktop_op_finish_ (op, false, NULL, "duration must be 0..60 seconds");
            return;
        }
        ufo_error_t err = { 0 };
        if (ufo_desktop_focus (self, xid, &err) != 0) {
            ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
            return;
        }
        st->sx = wx + (int) (f [0] * ww);
        st->sy = wy + (int) (f [1] * wh);
        st->ex = wx + (int) (f [2] * ww);
        st->ey = wy + (int) (f [3] * wh);
        st->button = button;
        ufo_desktop_pointer_move_ (self, st->sx, st->sy);
        ufo_desktop_pointer_button_ (self, button, true);
        ufo_dwin_t *dragged = ufo_desktop_win_ (self, xid, false);
        if (dragged)                //  as after a click (s_xtest_click): extents read again
            dragged->scrolled = true;
        st->drag_start = ufo_desktop_now_ms_ ();
        st->drag_ms = (int64_t) (duration * 1000);
        st->wait = A_DRAG;
        op->deadline = st->drag_start + st->drag_ms + self->action_timeout_ms + 1000;
    }
    else if (streq (function, "set_edit_text")) {
        const ufo_value_t *text_v = ufo_value_map_get (args, "text");
        if (ufo_value_type (text_v) != UFO_TSTRING
        ||  !g_utf8_validate (ufo_value_str (text_v), (gssize) ufo_value_strlen (text_v), NULL)) {
            ufo_desktop_op_finish_ (op, false, NULL,
                                    "set_edit_text needs a string 'text' (UTF-8, no NUL)");
            return;
        }
        st->expect = ufo_strdup (ufo_value_str (text_v));
        if (!(node->ifaces & S_IF_EDITABLE) && !ufo_dnode_has_state_ (node, ATSPI_STATE_EDITABLE)) {
            ufo_desktop_op_finish_ (op, false, NULL,
                                    "control %s is not editable: set_edit_text needs an editable "
                                    "control (Edit); nothing was typed", st->what);
            return;
        }
        if (!(node->ifaces & S_IF_EDITABLE)) {
            //  no EditableText: type the text (literally) into the focused control
            ufo_error_t err = { 0 };
            bool clear = ufo_value_map_bool (args, "clear_current_text", false);
            st->keys = s_literal_keys (st->expect, clear, &err);
            if (!st->keys || ufo_desktop_focus (self, xid, &err) != 0) {
                ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
                return;
            }
            st->wait = (node->ifaces & S_IF_TEXT) ? A_TEXT_CONTAINS : A_EFFECT;
            st->typed = true;
            s_focus_then_type (op, node);
            return;
        }
        if (ufo_value_map_bool (args, "clear_current_text", false)) {
            st->wait = A_TEXT_EQUALS;
            ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.EditableText",
                               "SetTextContents", g_variant_new ("(s)", st->expect), "(b)",
                               s_on_done_call, "setting the text");
        }
        else {
            st->wait = A_TEXT_CONTAINS;
            ufo_desktop_call_ (op, st->bus, st->path, "org.freedesktop.DBus.Properties", "Get",
                               g_variant_new ("(ss)", "org.a11y.atspi.Text", "CaretOffset"),
                               "(v)", s_on_caret, NULL);
        }
    }
    else if (streq (function, "keyboard_input")) {
        ufo_error_t err = { 0 };
        const char *keys = ufo_value_map_str (args, "keys", NULL);
        if (!keys) {
            ufo_desktop_op_finish_ (op, false, NULL, "keyboard_input needs a string 'keys'");
            return;
        }
        st->keys = ufo_desktop_keys_parse (keys, &err);
        if (!st->keys || ufo_desktop_focus (self, xid, &err) != 0) {
            ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
            return;
        }
        st->wait = A_EFFECT;
        if (node && (node->ifaces & S_IF_COMPONENT))
            s_focus_then_type (op, node);
        else {
            //  no target: the keys go wherever the focus is; the result says where that was
            char *where = s_focus_where (self, xid, st->app_bus);
            st->target_note = g_strdup_printf ("keys sent to %s", where);
            g_free (where);
            GVariant *empty = g_variant_ref_sink (g_variant_new ("()"));
            s_on_done_call (op, empty, NULL, "typing");
            g_variant_unref (empty);
        }
    }
    else if (streq (function, "wheel_mouse_input")) {
        const ufo_value_t *d = ufo_value_map_get (args, "wheel_dist");
        int64_t dist = ufo_value_int (d);
        if (ufo_value_type (d) != UFO_TINT || dist < -100 || dist > 100) {
            ufo_desktop_op_finish_ (op, false, NULL, "wheel_dist must be an integer -100..100");
            return;
        }
        ufo_error_t err = { 0 };
        if (ufo_desktop_focus (self, xid, &err) != 0) {
            ufo_desktop_op_finish_ (op, false, NULL, "%s", err.message);
            return;
        }
        ufo_desktop_pointer_move_ (self, st->cx, st->cy);
        //  content moves without bounds events (Firefox, Qt): the next snapshot reads the
        //  extents of all it shows again, not only inside scroll panes (ufo_desktop_act_begin)
        ufo_dwin_t *scrolled = ufo_desktop_win_ (self, xid, false);
        if (scrolled)
            scrolled->scrolled = true;
        int button = dist > 0 ? 4 : 5;
        for (int64_t i = 0; i < (dist > 0 ? dist : -dist); i++) {
            ufo_desktop_pointer_button_ (self, button, true);
            ufo_desktop_pointer_button_ (self, button, false);
        }
        s_barrier (op);
        st->wait = A_EFFECT;
        s_start_effect_wait (op);
    }
    else if (streq (function, "texts")) {
        if ((node->ifaces & S_IF_TEXT) && s_text_known (self, node))
            ufo_desktop_op_finish_ (op, true, node->text, NULL);
        else if (node->ifaces & S_IF_TEXT)
            s_get_text (op, s_on_texts, NULL);
        else
            ufo_desktop_op_finish_ (op, true, ufo_value_map_str (control, "control_text", ""),
                                    NULL);
    }
    else if (streq (function, "annotation")) {
        const ufo_value_t *labels = ufo_value_map_get (args, "control_labels");
        ufo_dwin_t *win = ufo_desktop_win_ (self, xid, false);
        if (ufo_value_type (labels) != UFO_TLIST || !win) {
            ufo_desktop_op_finish_ (op, false, NULL,
                                    "annotation needs a list 'control_labels' and a snapshot");
            return;
        }
        ufo_value_t *picked = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (labels); i++) {
            const ufo_value_t *l = ufo_value_list_at (labels, i);
            char buf [32];
            const char *s = ufo_value_str (l);
            if (ufo_value_type (l) == UFO_TINT) {
                snprintf (buf, sizeof (buf), "%" PRId64, ufo_value_int (l));
                s = buf;
            }
            if (ufo_desktop_label_find_ (win, s))
                ufo_value_list_push_str (picked, s);
        }
        op->result = ufo_value_new_map ();
        ufo_value_map_set (op->result, "control_labels", &picked);
        ufo_desktop_op_finish_ (op, true, "", NULL);
    }
    else
        ufo_desktop_op_finish_ (op, false, NULL, "unknown action '%s'", function);
}

//  True when the cache holds the control's whole text and it cannot have changed unseen:
//  read by the latest snapshot with no event since (a text change drops it), from an
//  application whose toolkit reports every change by an event (UFO_DTK_EVENTS: GTK3, the
//  same rule that spares it the re-validation after an action). `texts` then answers
//  without asking the application again.
static bool
s_text_known (ufo_desktop_t *desk, const ufo_dnode_t *node)
{
    int flags = GPOINTER_TO_INT (g_hash_table_lookup (desk->bus_toolkit, node->bus));
    return (flags & UFO_DTK_EVENTS) && node->valid && node->extra_valid && node->text_whole
        && node->text;
}

static const char *s_needs_control [] = {
    "click_input", "set_edit_text", "texts", "wheel_mouse_input"
};

ufo_desktop_op_t *
ufo_desktop_act_begin (ufo_desktop_t *self, int64_t xid, const char *label, const char *function,
                       const ufo_value_t *args)
{
    assert (self);
    //  toolkits send no event for some effects of an action (Qt: an area scrolled; Chromium:
    //  a select closed; Firefox: a page followed): the next snapshot of the window re-reads
    //  the states and extents of what it shows (ufo_desktop_controls_begin)
    ufo_dwin_t *acted = ufo_desktop_win_ (self, xid, false);
    if (acted)
        acted->acted = true;
    //  `texts` may answer from the cache (s_text_known): the events already received are
    //  applied first, so that a change the application reported is never missed
    if (function && streq (function, "texts"))
        ufo_desktop_pump (self);
    if (ufo_desktop_sheet_action_ (function))        //  spreadsheets: ufo_desktop_sheet.c
        return ufo_desktop_sheet_begin_ (self, xid, function, args);
    if (ufo_desktop_caret_action_ (function))        //  documents: ufo_desktop_caret.c
        return ufo_desktop_caret_begin_ (self, xid, label, function, args);
    ufo_desktop_op_t *op = ufo_desktop_op_new_ (self, self->action_timeout_ms + 1000);
    s_act_t *st = ufo_calloc (1, sizeof (*st));
    op->state = st;
    op->free_state = s_act_free;
    op->poll = s_act_poll;
    op->wake = s_act_wake;
    st->xid = xid;
    st->wait = A_DONE;
    st->restore_caret = -1;
    s_start_effect_wait (op);
    if (args && ufo_value_type (args) != UFO_TMAP) {
        ufo_desktop_op_finish_ (op, false, NULL, "Args must be an object");
        return op;
    }
    if (!function || !*function) {
        ufo_desktop_op_finish_ (op, true, "no action", NULL);
        return op;
    }
    //  actions that need neither window nor control
    if (streq (function, "summary")) {
        ufo_desktop_op_finish_ (op, true, ufo_value_map_str (args, "text", ""), NULL);
        return op;
    }
    if (streq (function, "wait")) {
        double seconds = ufo_value_map_float (args, "seconds", 1.0);
        if (!(seconds >= 0 && seconds <= 300)) {
            ufo_desktop_op_finish_ (op, false, NULL, "wait: seconds must be 0..300");
            return op;
        }
        st->wait = A_DEADLINE;
        s_wait_begins (op);             //  the time the model asked for
        op->deadline = ufo_desktop_now_ms_ () + (int64_t) (seconds * 1000);
        return op;
    }
    int wx, wy, ww, wh;
    if (!ufo_desktop_x_window_info_ (self, xid, &wx, &wy, &ww, &wh, NULL, NULL)) {
        ufo_desktop_win_forget_ (self, xid);
        ufo_desktop_op_finish_ (op, false, NULL, "window %" PRId64 " does not exist (closed?)", xid);
        return op;
    }
    ufo_dwin_t *known = ufo_desktop_win_ (self, xid, false);
    if (known && known->root)
        st->app_bus = ufo_strdup (known->root->bus);
    //  the control, by label of the latest snapshot
    ufo_dnode_t *node = NULL;
    const ufo_value_t *control = NULL;
    bool needs = false;
    for (size_t i = 0; i < UFO_ARRAY_SIZE (s_needs_control); i++)
        needs |= streq (function, s_needs_control [i]);
    if (streq (function, "keyboard_input") && ufo_value_map_bool (args, "control_focus", true)
    &&  label && *label)
        needs = true;
    if (needs || (label && *label && !streq (function, "annotation"))) {
        ufo_dwin_t *win = ufo_desktop_win_ (self, xid, false);
        if (!label || !*label) {
            ufo_desktop_op_finish_ (op, false, NULL, "%s needs a control label", function);
            return op;
        }
        if (label [strspn (label, "0123456789")]) {
            ufo_desktop_op_finish_ (op, false, NULL, "control label '%.64s' is not a number",
                                    label);
            return op;
        }
        const ufo_dlabel_t *entry = ufo_desktop_label_find_ (win, label);
        if (!entry) {
            ufo_desktop_op_finish_ (op, false, NULL,
                                    "no control labelled '%.64s' in the latest snapshot of window %"
                                    PRId64, label, xid);
            return op;
        }
        control = ufo_value_list_at (win->controls, entry->index);
        st->key = ufo_strdup (entry->key);
        st->what = g_strdup_printf ("%s '%s' (label %s)",
                                    ufo_value_map_str (control, "control_type", "?"),
                                    ufo_value_map_str (control, "control_text", ""), label);
        node = g_hash_table_lookup (self->nodes, st->key);
        if (!node) {
            ufo_desktop_op_finish_ (op, false, NULL,
                                    "control '%s' (%s '%s') no longer exists; take a new snapshot",
                                    label, ufo_value_map_str (control, "control_type", "?"),
                                    ufo_value_map_str (control, "control_text", ""));
            return op;
        }
        char *space = strchr (st->key, ' ');
        st->bus = ufo_strndup (st->key, (size_t) (space - st->key));
        st->path = space + 1;
        const ufo_value_t *rect = ufo_value_map_get (control, "control_rect");
        st->cx = (int) (ufo_value_int (ufo_value_list_at (rect, 0))
                        + ufo_value_int (ufo_value_list_at (rect, 2))) / 2;
        st->cy = (int) (ufo_value_int (ufo_value_list_at (rect, 1))
                        + ufo_value_int (ufo_value_list_at (rect, 3))) / 2;
    }
    else {
        st->cx = wx + ww / 2;
        st->cy = wy + wh / 2;
    }

    st->function = ufo_strdup (function);
    st->args = args ? ufo_value_dup (args) : NULL;
    st->control = control ? ufo_value_dup (control) : NULL;
    st->wx = wx, st->wy = wy, st->ww = ww, st->wh = wh;
    if (node && s_acts_on_control (function, args)) {
        //  a disabled control takes no input: say so instead of acting on nothing
        if (node->valid)
            s_check_enabled (op, node->states);
        else                    //  its states changed since the snapshot: read them
            ufo_desktop_call_ (op, st->bus, st->path, "org.a11y.atspi.Accessible", "GetState",
                               NULL, "(au)", s_on_enabled_state, NULL);
        return op;
    }
    s_act_dispatch (op);
    return op;
}
