/*  app_board.c - blackboard access of the AppAgent: broker (over the process's one
    connection, ufo_conn.h) or in-process boards. */
#include "ufo_prelude.h"
#include "ufo_bb_mirror.h"
#include "ufo_board.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_hash.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "app_board.h"

#define S_READ_TIMEOUT_MS   5000
#define S_WRITE_TIMEOUT_MS  10000
#define S_LOCAL_BOARDS      64

struct _app_board_t {
    ufo_conn_t *conn;                   //  remote (borrowed), or NULL
    ufo_bb_mirror_t *mirror;            //  remote: the session board, kept in step incrementally
    char *mirror_name;
    uint64_t read_id;                   //  the mirror's read in flight (0: none)
    bool read_done;                     //  a read ended since the last take
    ufo_error_t read_err;               //  ... and how (code 0: applied)
    size_t writes;                      //  writes waiting for their outcome
    ufo_value_t *errors;                //  failed writes not yet taken (texts), or NULL
    struct s_read_t_ *reads;            //  app_board_snapshot_start reads in flight
    struct {
        char *name;
        ufo_board_t *board;
    } local [S_LOCAL_BOARDS];
};

//  A read of app_board_snapshot_start, in the board's list until it ends or is forgotten.
typedef struct s_read_t_ {
    struct s_read_t_ *next;
    app_board_t *owner;
    uint64_t id;
    app_board_read_fn *fn;
    void *arg;
    char board [160];
} s_read_t;

app_board_t *
app_board_new (ufo_conn_t *conn)
{
    app_board_t *self = ufo_calloc (1, sizeof *self);
    self->conn = conn;
    return self;
}

void
app_board_destroy (app_board_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_board_t *self = *self_p;
    if (self->conn) {
        if (app_board_flush (self, 2000) < 0)
            ufo_warn ("blackboard: %zu writes still without an answer at exit", self->writes);
        if (self->read_id)
            ufo_conn_call_forget (self->conn, self->read_id);
        while (self->reads)
            app_board_forget (self, self->reads->id);
    }
    ufo_bb_mirror_destroy (&self->mirror);
    free (self->mirror_name);
    ufo_value_destroy (&self->errors);
    for (size_t i = 0; i < S_LOCAL_BOARDS; i++) {
        free (self->local [i].name);
        ufo_board_destroy (&self->local [i].board);
    }
    free (self);
    *self_p = NULL;
}

bool
app_board_remote (const app_board_t *self)
{
    return self->conn != NULL;
}

//  The in-process board of a session (created on first use; the oldest is recycled when
//  all slots are taken).
static ufo_board_t *
s_local (app_board_t *self, const char *name)
{
    size_t free_slot = S_LOCAL_BOARDS;
    for (size_t i = 0; i < S_LOCAL_BOARDS; i++) {
        if (self->local [i].name && strcmp (self->local [i].name, name) == 0)
            return self->local [i].board;
        if (!self->local [i].name && free_slot == S_LOCAL_BOARDS)
            free_slot = i;
    }
    if (free_slot == S_LOCAL_BOARDS) {
        free_slot = 0;
        free (self->local [0].name);
        ufo_board_destroy (&self->local [0].board);
    }
    self->local [free_slot].name = ufo_strdup (name);
    self->local [free_slot].board = ufo_board_new ();
    return self->local [free_slot].board;
}

ufo_value_t *
app_board_snapshot (app_board_t *self, const char *board, ufo_error_t *err)
{
    if (!self->conn)
        return ufo_board_to_map (s_local (self, board));
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_t *reply = ufo_conn_call_wait (self->conn, "bb.snapshot", &body, NULL, 0, S_READ_TIMEOUT_MS,
                                             NULL, NULL, err);
    if (!reply)
        return NULL;
    ufo_value_t *map = ufo_value_map_get (reply, "board");
    if (ufo_value_type (map) != UFO_TMAP) {
        ufo_value_destroy (&reply);
        ufo_error_set (err, UFO_E_SYNTAX, "blackboard snapshot of '%s' has no board map", board);
        return NULL;
    }
    ufo_value_t *copy = ufo_value_dup (map);
    ufo_value_destroy (&reply);
    return copy;
}


static void
s_read_unlink (app_board_t *self, s_read_t *r)
{
    for (s_read_t **p = (s_read_t **) &self->reads; *p; p = &(*p)->next)
        if (*p == r) {
            *p = r->next;
            break;
        }
    free (r);
}

static void
s_on_snapshot (void *arg, ufo_conn_reply_t *reply)
{
    s_read_t *r = arg;
    ufo_error_t err;
    ufo_error_clear (&err);
    const ufo_value_t *map = NULL;
    if (!reply->ok)
        err = reply->err;
    else {
        map = ufo_value_map_get (*reply->body_p, "board");
        if (ufo_value_type (map) != UFO_TMAP) {
            map = NULL;
            ufo_error_set (&err, UFO_E_SYNTAX, "blackboard snapshot of '%s' has no board map", r->board);
        }
    }
    r->fn (r->arg, map, &err);
    s_read_unlink (r->owner, r);
}

uint64_t
app_board_snapshot_start (app_board_t *self, const char *board, app_board_read_fn *fn, void *arg)
{
    if (!self->conn) {
        ufo_value_t *map = ufo_board_to_map (s_local (self, board));
        ufo_error_t err;
        ufo_error_clear (&err);
        fn (arg, map, &err);
        ufo_value_destroy (&map);
        return 0;
    }
    s_read_t *r = ufo_calloc (1, sizeof *r);
    r->owner = self;
    r->fn = fn;
    r->arg = arg;
    snprintf (r->board, sizeof r->board, "%s", board);
    r->next = self->reads;
    self->reads = r;
    r->id = ufo_conn_snapshot (self->conn, board, 0, false, S_READ_TIMEOUT_MS, s_on_snapshot, r);
    return r->id;
}

void
app_board_forget (app_board_t *self, uint64_t id)
{
    for (s_read_t *r = self->reads; r && id; r = r->next)
        if (r->id == id) {
            ufo_conn_call_forget (self->conn, id);
            s_read_unlink (self, r);
            return;
        }
}

//  The mirror's read ended: applied to the mirror, or failed (the mirror is unchanged and
//  the next read asks again).
static void
s_on_read (void *arg, ufo_conn_reply_t *reply)
{
    app_board_t *self = arg;
    self->read_id = 0;
    self->read_done = true;
    ufo_error_clear (&self->read_err);
    if (!reply->ok)
        self->read_err = reply->err;
    else
    if (ufo_bb_mirror_apply (self->mirror, reply->body_p, &self->read_err) >= 0)
        ufo_error_clear (&self->read_err);
}

void
app_board_prompt_start (app_board_t *self, const char *board)
{
    if (!self->conn)
        return;
    //  A mirror of the session board: each step fetches only what was added since the
    //  last one, so the prompt's cached text grows instead of being rebuilt.
    if (!self->mirror || strcmp (self->mirror_name, board) != 0) {
        if (self->read_id)
            ufo_conn_call_forget (self->conn, self->read_id);
        self->read_id = 0;
        ufo_bb_mirror_destroy (&self->mirror);
        free (self->mirror_name);
        self->mirror = ufo_bb_mirror_new (board);
        self->mirror_name = ufo_strdup (board);
    }
    if (self->read_id)
        return;
    self->read_done = false;
    self->read_id = ufo_conn_snapshot (self->conn, board, ufo_bb_mirror_seq (self->mirror), true,
                                       S_READ_TIMEOUT_MS, s_on_read, self);
}

bool
app_board_prompt_ready (app_board_t *self, const char *board)
{
    if (!self->conn)
        return true;
    bool same = self->mirror && strcmp (self->mirror_name, board) == 0;
    return !same || !self->read_id;
}

ufo_value_t *
app_board_prompt_take (app_board_t *self, const char *board, ufo_error_t *err)
{
    if (!self->conn)
        return ufo_board_to_prompt (s_local (self, board));
    if (!self->mirror || strcmp (self->mirror_name, board) != 0 || (!self->read_id && !self->read_done))
        app_board_prompt_start (self, board);
    //  not ended yet (a caller that did not wait for app_board_prompt_ready): wait for it
    for (int64_t until = ufo_time_mono_ms () + S_READ_TIMEOUT_MS + 1000;
         self->read_id && ufo_time_mono_ms () < until;)
        ufo_conn_flush (self->conn, 50);
    self->read_done = false;
    if (self->read_err.code) {
        if (err)
            *err = self->read_err;
        ufo_error_clear (&self->read_err);
        return NULL;
    }
    return ufo_board_to_prompt (ufo_bb_mirror_board (self->mirror));
}

size_t
app_board_pending (app_board_t *self)
{
    return self->writes;
}

ufo_value_t *
app_board_take_errors (app_board_t *self)
{
    ufo_value_t *errors = self->errors;
    self->errors = NULL;
    return errors;
}

int
app_board_flush (app_board_t *self, int timeout_ms)
{
    if (!self->conn)
        return 0;
    for (int64_t until = ufo_time_mono_ms () + timeout_ms; self->writes > 0 && ufo_time_mono_ms () < until;)
        ufo_conn_flush (self->conn, 50);
    return self->writes > 0 ? -1 : 0;
}

//  The outcome of a write.
typedef struct {
    app_board_t *board;
    char what [160];                    //  "<board>/<memory>" or "the blob of <path>"
} s_write_t;

static void
s_on_write (void *arg, ufo_conn_reply_t *reply)
{
    s_write_t *w = arg;
    app_board_t *self = w->board;
    self->writes--;
    if (!reply->ok) {
        char text [700];
        snprintf (text, sizeof text, "blackboard write to %s failed: %s", w->what, reply->err.message);
        ufo_warn ("%s", text);
        if (!self->errors)
            self->errors = ufo_value_new_list ();
        ufo_value_list_push_str (self->errors, text);
    }
    free (w);
}

//  Sends one write; its outcome comes to s_on_write.
static void
s_write (app_board_t *self, const char *type, ufo_value_t **body_p, const void *frame, size_t len,
         const char *what)
{
    s_write_t *w = ufo_malloc (sizeof *w);
    w->board = self;
    snprintf (w->what, sizeof w->what, "%s", what);
    self->writes++;
    ufo_conn_call (self->conn, type, body_p, frame, len, S_WRITE_TIMEOUT_MS, s_on_write, w);
}

int
app_board_add (app_board_t *self, const char *board, const char *memory, ufo_value_t **item_p,
               ufo_error_t *err)
{
    if (!self->conn) {
        int which = ufo_board_memory_parse (memory);
        if (which < 0) {
            ufo_value_destroy (item_p);
            return ufo_error_set (err, UFO_E_INVALID, "no blackboard memory '%s'", memory);
        }
        return ufo_board_add_data_take (s_local (self, board), which, item_p, err);
    }
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_map_set_str (body, "memory", memory);
    ufo_value_t *items = ufo_value_new_list ();
    ufo_value_list_push (items, item_p);
    ufo_value_map_set (body, "items", &items);
    char what [160];
    snprintf (what, sizeof what, "%.100s/%.40s", board, memory);
    s_write (self, "bb.add", &body, NULL, 0, what);
    return 0;
}

char *
app_data_url (const char *mime, const void *data, size_t len)
{
    ufo_buf_t buf = { 0 };
    ufo_buf_printf (&buf, "data:%s;base64,", mime);
    ufo_buf_base64 (&buf, data, len);
    return ufo_buf_detach (&buf, NULL);
}

int
app_board_add_screenshot (app_board_t *self, const char *board, const char *image_path,
                          const void *png, size_t len, const ufo_value_t *metadata,
                          ufo_error_t *err)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set (item, "metadata", &(ufo_value_t *) {
        metadata ? ufo_value_dup (metadata) : ufo_value_new_null () });
    ufo_value_map_set_str (item, "image_path", image_path);
    if (self->conn) {
        //  the blob store names a blob by its SHA-256: the item can name it before the
        //  broker has answered, and blob.put goes first on the same socket
        char hex [65], what [160];
        ufo_sha256_hex (png, len, hex);
        snprintf (what, sizeof what, "the blob of %.100s", image_path);
        s_write (self, "blob.put", NULL, png, len, what);
        ufo_value_map_set_str (item, "blob", hex);
        ufo_value_map_set_str (item, "mime", "image/png");
    }
    else {
        char *url = app_data_url ("image/png", png, len);
        ufo_value_map_set_str (item, "image_str", url);
        free (url);
    }
    return app_board_add (self, board, "screenshots", &item, err);
}
