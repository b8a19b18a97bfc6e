/*  bb_store.c - in-memory boards with sequence-tagged items; snapshots to JSON files. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "bb_store.h"
#include <dirent.h>

typedef struct {
    size_t refs;
    uint8_t data [];                //  the items' msgpack, back to back
} s_batch_t;

typedef struct {
    uint64_t seq;
    s_batch_t *batch;
    uint32_t off, len;              //  the item: batch->data[off .. off + len)
} s_entry_t;

typedef struct {
    s_entry_t *v;
    size_t n, cap;
    uint64_t base;                  //  seq of the last change that emptied this memory
} s_mem_t;

struct _bb_board_t {
    char *name;
    s_mem_t mem [4];
    uint64_t last;
    size_t items;
    bb_board_t *next;               //  hash chain
};

struct _bb_store_t {
    bb_board_t **buckets;
    size_t nbuckets;
    size_t nboards;
    uint64_t seq;
    uint64_t items;
    uint64_t snap_seq;              //  seq of the snapshot loaded (0: none)
};

//  A batch holding a copy of data[0..len), with the creator's reference.
static s_batch_t *
s_batch_new (const void *data, size_t len)
{
    s_batch_t *batch = ufo_malloc (sizeof *batch + len);
    batch->refs = 1;
    if (len)
        memcpy (batch->data, data, len);
    return batch;
}

static void
s_batch_release (s_batch_t *batch)
{
    if (--batch->refs == 0)
        free (batch);
}

static void
s_mem_push (s_mem_t *mem, uint64_t seq, s_batch_t *batch, size_t off, size_t len)
{
    if (mem->n == mem->cap) {
        mem->cap = mem->cap ? mem->cap * 2 : 8;
        mem->v = ufo_realloc (mem->v, mem->cap * sizeof *mem->v);
    }
    mem->v [mem->n++] = (s_entry_t) { seq, batch, (uint32_t) off, (uint32_t) len };
    batch->refs++;
}

//  Appends the msgpack of one item to bytes and its end offset to *end_p; false when the
//  bytes outgrow the 32-bit offsets of the entries.
static bool
s_encode_item (ufo_buf_t *bytes, const ufo_value_t *item, uint32_t *end_p)
{
    ufo_msgpack_append (bytes, item);
    if (bytes->len > UINT32_MAX)
        return false;
    *end_p = (uint32_t) bytes->len;
    return true;
}

static void
s_mem_clear (s_mem_t *mem)
{
    for (size_t i = 0; i < mem->n; i++)
        s_batch_release (mem->v [i].batch);
    mem->n = 0;
}

static uint64_t
s_hash (const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (uint8_t) *s++) * 1099511628211ull;
    return h;
}

bb_store_t *
bb_store_new (void)
{
    bb_store_t *self = ufo_calloc (1, sizeof *self);
    self->nbuckets = 64;
    self->buckets = ufo_calloc (self->nbuckets, sizeof *self->buckets);
    return self;
}

static void
s_board_free (bb_board_t *board)
{
    for (int m = 0; m < 4; m++) {
        s_mem_clear (&board->mem [m]);
        free (board->mem [m].v);
    }
    free (board->name);
    free (board);
}

void
bb_store_destroy (bb_store_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_store_t *self = *self_p;
    for (size_t b = 0; b < self->nbuckets; b++)
        for (bb_board_t *board = self->buckets [b], *next; board; board = next) {
            next = board->next;
            s_board_free (board);
        }
    free (self->buckets);
    free (self);
    *self_p = NULL;
}

uint64_t bb_store_seq (const bb_store_t *self) { return self->seq; }
uint64_t bb_store_snapshot_seq (const bb_store_t *self) { return self->snap_seq; }
size_t bb_store_boards (const bb_store_t *self) { return self->nboards; }
uint64_t bb_store_items (const bb_store_t *self) { return self->items; }
size_t bb_board_items (const bb_board_t *board) { return board->items; }
uint64_t bb_board_last (const bb_board_t *board) { return board->last; }

bb_board_t *
bb_store_board (bb_store_t *self, const char *name)
{
    for (bb_board_t *board = self->buckets [s_hash (name) % self->nbuckets]; board; board = board->next)
        if (strcmp (board->name, name) == 0)
            return board;
    return NULL;
}

static void
s_grow (bb_store_t *self)
{
    size_t n = self->nbuckets * 4;
    bb_board_t **buckets = ufo_calloc (n, sizeof *buckets);
    for (size_t b = 0; b < self->nbuckets; b++)
        for (bb_board_t *board = self->buckets [b], *next; board; board = next) {
            next = board->next;
            size_t i = s_hash (board->name) % n;
            board->next = buckets [i];
            buckets [i] = board;
        }
    free (self->buckets);
    self->buckets = buckets;
    self->nbuckets = n;
}

static bb_board_t *
s_board_require (bb_store_t *self, const char *name, uint64_t seq)
{
    bb_board_t *board = bb_store_board (self, name);
    if (board)
        return board;
    if (self->nboards >= self->nbuckets)
        s_grow (self);
    board = ufo_calloc (1, sizeof *board);
    board->name = ufo_strdup (name);
    for (int m = 0; m < 4; m++)
        board->mem [m].base = seq;      //  nothing of an earlier incarnation survives
    size_t i = s_hash (name) % self->nbuckets;
    board->next = self->buckets [i];
    self->buckets [i] = board;
    self->nboards++;
    return board;
}

uint64_t
bb_store_add (bb_store_t *self, const char *name, int memory, const uint8_t *data,
              const uint32_t *ends, size_t n, uint64_t seq)
{
    assert (memory >= 0 && memory < 4);
    assert (seq == self->seq + 1 && n > 0);
    bb_board_t *board = s_board_require (self, name, seq);
    uint64_t prev = board->last;
    s_batch_t *batch = s_batch_new (data, ends [n - 1]);
    s_mem_t *mem = &board->mem [memory];
    for (size_t i = 0; i < n; i++) {
        size_t start = i ? ends [i - 1] : 0;
        s_mem_push (mem, seq + i, batch, start, ends [i] - start);
    }
    s_batch_release (batch);
    board->items += n;
    self->items += n;
    board->last = seq + n - 1;
    self->seq = board->last;
    return prev;
}

void
bb_store_advance (bb_store_t *self, uint64_t seq)
{
    assert (seq > self->seq);
    self->seq = seq;
}

uint64_t
bb_store_clear (bb_store_t *self, const char *name, int memory, uint64_t seq)
{
    assert (seq == self->seq + 1);
    bb_board_t *board = s_board_require (self, name, seq);
    uint64_t prev = board->last;
    for (int m = 0; m < 4; m++)
        if (memory < 0 || memory == m) {
            board->items -= board->mem [m].n;
            self->items -= board->mem [m].n;
            s_mem_clear (&board->mem [m]);
            board->mem [m].base = seq;
        }
    board->last = seq;
    self->seq = seq;
    return prev;
}

uint64_t
bb_store_delete (bb_store_t *self, const char *name, uint64_t seq)
{
    assert (seq == self->seq + 1);
    self->seq = seq;
    bb_board_t **link = &self->buckets [s_hash (name) % self->nbuckets];
    for (bb_board_t *board = *link; board; link = &board->next, board = board->next)
        if (strcmp (board->name, name) == 0) {
            uint64_t prev = board->last;
            *link = board->next;
            self->items -= board->items;
            self->nboards--;
            s_board_free (board);
            return prev;
        }
    return 0;
}

void
bb_store_encode_snapshot (bb_store_t *self, const char *name, int memory, uint64_t after, ufo_buf_t *buf)
{
    bb_board_t *board = bb_store_board (self, name);
    bool full = after == 0 || !board;
    for (int m = 0; board && m < 4; m++)
        if ((memory < 0 || memory == m) && board->mem [m].base > after)
            full = true;
    int nmem = memory < 0 ? 4 : 1;
    ufo_mp_put_map (buf, 8);
    ufo_mp_put_cstr (buf, "name");
    ufo_mp_put_cstr (buf, name);
    ufo_mp_put_cstr (buf, "exists");
    ufo_mp_put_bool (buf, board != NULL);
    ufo_mp_put_cstr (buf, "seq");
    ufo_mp_put_uint (buf, self->seq);
    ufo_mp_put_cstr (buf, "last");
    ufo_mp_put_uint (buf, board ? board->last : 0);
    ufo_mp_put_cstr (buf, "after");
    ufo_mp_put_uint (buf, full ? 0 : after);
    ufo_mp_put_cstr (buf, "full");
    ufo_mp_put_bool (buf, full);
    for (int pass = 0; pass < 2; pass++) {
        ufo_mp_put_cstr (buf, pass == 0 ? "board" : "seqs");
        ufo_mp_put_map (buf, (uint32_t) nmem);
        for (int m = 0; m < 4; m++) {
            if (memory >= 0 && memory != m)
                continue;
            ufo_mp_put_cstr (buf, ufo_bb_memory_name (m));
            s_mem_t *mem = board ? &board->mem [m] : NULL;
            size_t start = 0, n = mem ? mem->n : 0;
            if (!full)
                while (start < n && mem->v [start].seq <= after)
                    start++;    //  linear is fine: "after" asks for a short tail
            ufo_mp_put_array (buf, (uint32_t) (n - start));
            for (size_t i = start; i < n; i++) {
                if (pass == 0)
                    ufo_buf_append (buf, mem->v [i].batch->data + mem->v [i].off, mem->v [i].len);
                else
                    ufo_mp_put_uint (buf, mem->v [i].seq);
            }
        }
    }
}

bool
bb_store_mentions (const bb_store_t *self, const char *text)
{
    size_t len = strlen (text);
    for (size_t b = 0; b < self->nbuckets; b++)
        for (const bb_board_t *board = self->buckets [b]; board; board = board->next)
            for (int m = 0; m < 4; m++)
                for (size_t i = 0; i < board->mem [m].n; i++) {
                    const s_entry_t *e = &board->mem [m].v [i];
                    if (e->len >= len && memmem (e->batch->data + e->off, e->len, text, len))
                        return true;
                }
    return false;
}

static int
s_cmp_name (const void *a, const void *b)
{
    return strcmp (ufo_value_map_str (*(ufo_value_t *const *) a, "name", ""),
                   ufo_value_map_str (*(ufo_value_t *const *) b, "name", ""));
}

ufo_value_t *
bb_store_list (bb_store_t *self)
{
    ufo_value_t **rows = ufo_malloc ((self->nboards + 1) * sizeof *rows);
    size_t n = 0;
    for (size_t b = 0; b < self->nbuckets; b++)
        for (bb_board_t *board = self->buckets [b]; board; board = board->next) {
            ufo_value_t *row = ufo_value_new_map ();
            ufo_value_map_set_str (row, "name", board->name);
            ufo_value_map_set_int (row, "items", (int64_t) board->items);
            ufo_value_map_set_int (row, "last", (int64_t) board->last);
            rows [n++] = row;
        }
    qsort (rows, n, sizeof *rows, s_cmp_name);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < n; i++)
        ufo_value_list_push (list, &rows [i]);
    free (rows);
    return list;
}

int
bb_store_apply_record (bb_store_t *self, const void *payload, size_t len, ufo_error_t *err)
{
    ufo_msg_limits_t limits = { len + 1, 64 };
    ufo_msg_t *msg = ufo_msg_decode (payload, len, &limits, err);
    if (!msg)
        return -1;
    const char *type = ufo_msg_type (msg);
    ufo_value_t *body = ufo_msg_take_body (msg);
    int rc = 0;
    const char *board = ufo_value_map_str (body, "board", NULL);
    const char *mem_name = ufo_value_map_str (body, "memory", NULL);
    int memory = mem_name ? ufo_bb_memory_parse (mem_name) : UFO_BB_MEMORY_ALL;
    int64_t seq = ufo_value_map_int (body, "seq", -1);
    int64_t last = ufo_value_map_int (body, "last", -1);
    const ufo_value_t *items = ufo_value_map_get (body, "items");
    if (!board || !ufo_bb_board_valid (board, strlen (board)) || seq <= 0 || last < seq
    ||  (mem_name && memory < 0))
        rc = ufo_error_set (err, UFO_E_SYNTAX, "log record '%s' lacks a valid board, memory or seq", type);
    else
    if ((uint64_t) last <= self->seq) {
        //  covered by the snapshot; past it, a copy of a record already replayed
        if ((uint64_t) last > self->snap_seq)
            ufo_warn ("log record '%s' seq %" PRId64 "..%" PRId64 " repeats a record already replayed (a duplicated "
                      "record, e.g. appended twice at the tail): skipped", type, seq, last);
    }
    else
    if ((uint64_t) seq != self->seq + 1)
        rc = ufo_error_set (err, UFO_E_SYNTAX, "log record seq %" PRId64 " does not follow %" PRIu64,
                            seq, self->seq);
    else
    if (strcmp (type, UFO_BB_EV_ADDED) == 0) {
        if (memory < 0 || ufo_value_type (items) != UFO_TLIST
        ||  ufo_value_size (items) != (size_t) (last - seq + 1))
            rc = ufo_error_set (err, UFO_E_SYNTAX, "log record %" PRId64 ": bad items", seq);
        else {
            for (size_t i = 0; i < ufo_value_size (items) && rc == 0; i++)
                if (ufo_value_type (ufo_value_list_at (items, i)) != UFO_TMAP)
                    rc = ufo_error_set (err, UFO_E_SYNTAX, "log record %" PRId64 ": item is not a map", seq);
            ufo_buf_t bytes = { 0 };
            size_t n = ufo_value_size (items);
            uint32_t *ends = rc == 0 ? ufo_malloc (n * sizeof *ends) : NULL;
            for (size_t i = 0; rc == 0 && i < n; i++)
                if (!s_encode_item (&bytes, ufo_value_list_at (items, i), &ends [i]))
                    rc = ufo_error_set (err, UFO_E_TOO_LARGE, "log record %" PRId64 ": items too large", seq);
            if (rc == 0)
                bb_store_add (self, board, memory, (const uint8_t *) bytes.data, ends, n, (uint64_t) seq);
            free (ends);
            ufo_buf_free (&bytes);
        }
    }
    else
    if (strcmp (type, UFO_BB_EV_CLEARED) == 0 && last == seq)
        bb_store_clear (self, board, memory, (uint64_t) seq);
    else
    if (strcmp (type, UFO_BB_EV_DELETED) == 0 && last == seq)
        bb_store_delete (self, board, (uint64_t) seq);
    else
        rc = ufo_error_set (err, UFO_E_SYNTAX, "log record of unknown type '%s'", type);
    ufo_value_destroy (&body);
    ufo_msg_destroy (&msg);
    return rc;
}

//  --- Snapshots ---------------------------------------------------------------
//  data_dir/snap-<seq as 16 hex>/manifest.json  {"version":1,"seq":G,"segment":K,
//                                                "boards":[{"name":..,"file":..},...]}
//  data_dir/snap-<seq>/board-NNNNNN.json         {"name":..,"last":L,"bases":[4 ints],
//      "seqs":{"questions":[..],...},"board":{"questions":[..],"requests":[..],
//      "trajectories":[..],"screenshots":[..]}}   ("board" is the original's JSON shape)

//  snprintf for paths; a path that does not fit is cut (and then simply not found).
static void s_pathf (char *out, size_t size, const char *format, ...)
    __attribute__ ((format (printf, 3, 4)));
static void
s_pathf (char *out, size_t size, const char *format, ...)
{
    va_list args;
    va_start (args, format);
    vsnprintf (out, size, format, args);
    va_end (args);
}

static void
s_remove_tree (const char *path)
{
    DIR *dir = opendir (path);
    struct dirent *entry;
    while (dir && (entry = readdir (dir))) {
        if (strcmp (entry->d_name, ".") == 0 || strcmp (entry->d_name, "..") == 0)
            continue;
        char child [PATH_MAX];
        s_pathf (child, sizeof child, "%s/%s", path, entry->d_name);
        unlink (child);
    }
    if (dir)
        closedir (dir);
    rmdir (path);
}

static int
s_write_all (int fd, ufo_buf_t *buf, ufo_error_t *err)
{
    size_t done = 0;
    while (done < buf->len) {
        ssize_t rc = write (fd, buf->data + done, buf->len - done);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return ufo_error_set (err, UFO_E_IO, "snapshot write: %s", strerror (errno));
        done += (size_t) rc;
    }
    ufo_buf_reset (buf);
    return 0;
}

static int
s_fsync_path (const char *path, ufo_error_t *err)
{
    int fd = open (path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fsync (fd) != 0) {
        int saved = errno;
        if (fd >= 0)
            close (fd);
        return ufo_error_set (err, UFO_E_IO, "fsync %s: %s", path, strerror (saved));
    }
    close (fd);
    return 0;
}

static int
s_write_board (bb_board_t *board, const char *path, ufo_error_t *err)
{
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", path, strerror (errno));
    ufo_buf_t buf = { 0 };
    int rc = 0;
    ufo_buf_puts (&buf, "{\"name\":");
    ufo_json_append_string (&buf, board->name, strlen (board->name), UFO_JSON_COMPACT);
    ufo_buf_printf (&buf, ",\"last\":%" PRIu64 ",\"bases\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                    board->last, board->mem [0].base, board->mem [1].base, board->mem [2].base,
                    board->mem [3].base);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        ufo_buf_puts (&buf, pass == 0 ? ",\"seqs\":{" : ",\"board\":{");
        for (int m = 0; m < 4 && rc == 0; m++) {
            ufo_buf_printf (&buf, "%s\"%s\":[", m ? "," : "", ufo_bb_memory_name (m));
            for (size_t i = 0; i < board->mem [m].n && rc == 0; i++) {
                if (i)
                    ufo_buf_putc (&buf, ',');
                if (pass == 0)
                    ufo_buf_printf (&buf, "%" PRIu64, board->mem [m].v [i].seq);
                else {
                    const s_entry_t *e = &board->mem [m].v [i];
                    ufo_value_t *item = ufo_msgpack_decode (e->batch->data + e->off, e->len, NULL, err);
                    if (!item) {
                        char why [sizeof ((ufo_error_t *) 0)->message];
                        snprintf (why, sizeof why, "%s", err ? err->message : "");
                        rc = ufo_error_set (err, UFO_E_SYNTAX, "%s: item seq %" PRIu64 " of board '%s' unreadable: %s",
                                            path, e->seq, board->name, why);
                        break;
                    }
                    ufo_json_append (&buf, item, UFO_JSON_COMPACT);
                    ufo_value_destroy (&item);
                }
                if (buf.len > (1u << 20))
                    rc = s_write_all (fd, &buf, err);
            }
            ufo_buf_putc (&buf, ']');
        }
        ufo_buf_putc (&buf, '}');
    }
    ufo_buf_puts (&buf, "}\n");
    if (rc == 0)
        rc = s_write_all (fd, &buf, err);
    if (rc == 0 && fsync (fd) != 0)
        rc = ufo_error_set (err, UFO_E_IO, "fsync %s: %s", path, strerror (errno));
    close (fd);
    ufo_buf_free (&buf);
    return rc;
}

int
bb_store_write_snapshot (bb_store_t *self, const char *data_dir, uint64_t segment, ufo_error_t *err)
{
    char tmp [PATH_MAX], final [PATH_MAX];
    s_pathf (tmp, sizeof tmp, "%s/snap-%016" PRIx64 ".tmp", data_dir, self->seq);
    s_pathf (final, sizeof final, "%s/snap-%016" PRIx64, data_dir, self->seq);
    s_remove_tree (tmp);
    if (mkdir (tmp, 0755) != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", tmp, strerror (errno));
    ufo_value_t *manifest = ufo_value_new_map ();
    ufo_value_map_set_int (manifest, "version", 1);
    ufo_value_map_set_int (manifest, "seq", (int64_t) self->seq);
    ufo_value_map_set_int (manifest, "segment", (int64_t) segment);
    ufo_value_t *boards = ufo_value_new_list ();
    size_t index = 0;
    int rc = 0;
    for (size_t b = 0; b < self->nbuckets && rc == 0; b++)
        for (bb_board_t *board = self->buckets [b]; board && rc == 0; board = board->next) {
            char file [64], path [PATH_MAX];
            s_pathf (file, sizeof file, "board-%06zu.json", index++);
            s_pathf (path, sizeof path, "%s/%s", tmp, file);
            rc = s_write_board (board, path, err);
            ufo_value_t *row = ufo_value_new_map ();
            ufo_value_map_set_str (row, "name", board->name);
            ufo_value_map_set_str (row, "file", file);
            ufo_value_list_push (boards, &row);
        }
    ufo_value_map_set (manifest, "boards", &boards);
    if (rc == 0) {
        char path [PATH_MAX];
        s_pathf (path, sizeof path, "%s/manifest.json", tmp);
        ufo_buf_t buf = { 0 };
        ufo_json_append (&buf, manifest, UFO_JSON_PRETTY);
        ufo_buf_putc (&buf, '\n');
        int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            rc = ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", path, strerror (errno));
        else {
            rc = s_write_all (fd, &buf, err);
            if (rc == 0 && fsync (fd) != 0)
                rc = ufo_error_set (err, UFO_E_IO, "fsync %s: %s", path, strerror (errno));
            close (fd);
        }
        ufo_buf_free (&buf);
    }
    ufo_value_destroy (&manifest);
    if (rc == 0)
        rc = s_fsync_path (tmp, err);
    if (rc == 0 && rename (tmp, final) != 0)
        rc = ufo_error_set (err, UFO_E_IO, "rename %s: %s", tmp, strerror (errno));
    if (rc == 0)
        rc = s_fsync_path (data_dir, err);
    if (rc != 0)
        s_remove_tree (tmp);
    return rc;
}

//  Lists snapshot directories; removes partial ones. Returns the newest seq (0: none).
static uint64_t
s_scan_snapshots (const char *data_dir, uint64_t remove_below)
{
    uint64_t newest = 0;
    DIR *dir = opendir (data_dir);
    struct dirent *entry;
    while (dir && (entry = readdir (dir))) {
        const char *name = entry->d_name;
        if (strncmp (name, "snap-", 5) != 0)
            continue;
        char path [PATH_MAX];
        s_pathf (path, sizeof path, "%s/%s", data_dir, name);
        char *end;
        uint64_t seq = strtoull (name + 5, &end, 16);
        if (end != name + 21 || *end) {
            if (strlen (name) > 21 && strcmp (name + 21, ".tmp") == 0)
                s_remove_tree (path);       //  a snapshot that never completed
            continue;
        }
        if (seq < remove_below) {
            s_remove_tree (path);
            continue;
        }
        char manifest [PATH_MAX];
        s_pathf (manifest, sizeof manifest, "%s/manifest.json", path);
        if (access (manifest, F_OK) == 0 && seq >= newest)
            newest = seq ? seq : newest;
    }
    if (dir)
        closedir (dir);
    return newest;
}

void
bb_store_remove_snapshot (const char *data_dir, uint64_t seq)
{
    char final [PATH_MAX], tmp [PATH_MAX];
    s_pathf (final, sizeof final, "%s/snap-%016" PRIx64, data_dir, seq);
    s_pathf (tmp, sizeof tmp, "%s/snap-%016" PRIx64 ".tmp", data_dir, seq);
    //  renamed first, and the rename made durable: a crash in the middle leaves a partial
    //  snapshot, which a start removes unread
    if (rename (final, tmp) == 0) {
        int fd = open (data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) {
            if (fsync (fd) != 0)
                ufo_warn ("snapshot %s: fsync of the data directory: %s", final, strerror (errno));
            close (fd);
        }
    }
    s_remove_tree (tmp);
}

void
bb_store_prune_snapshots (const char *data_dir, uint64_t keep_seq)
{
    s_scan_snapshots (data_dir, keep_seq);
}

static int
s_load_board (bb_store_t *self, const char *path, const char *name, uint64_t snap_seq, ufo_error_t *err)
{
    ufo_json_limits_t limits = { 128, 0, true };
    ufo_value_t *root = ufo_json_parse_file (path, &limits, err);
    if (!root)
        return -1;
    int64_t last = ufo_value_map_int (root, "last", -1);
    const ufo_value_t *bases = ufo_value_map_get (root, "bases");
    if (strcmp (ufo_value_map_str (root, "name", ""), name) != 0 || last < 0
    ||  (uint64_t) last > snap_seq || ufo_value_size (bases) != 4 || bb_store_board (self, name)) {
        ufo_value_destroy (&root);
        return ufo_error_set (err, UFO_E_SYNTAX, "snapshot %s: bad header", path);
    }
    bb_board_t *board = s_board_require (self, name, 0);
    board->last = (uint64_t) last;
    int rc = 0;
    ufo_buf_t bytes = { 0 };
    for (int m = 0; m < 4 && rc == 0; m++) {
        char key [64];
        s_pathf (key, sizeof key, "board.%s", ufo_bb_memory_name (m));
        const ufo_value_t *items = ufo_value_path (root, key);
        s_pathf (key, sizeof key, "seqs.%s", ufo_bb_memory_name (m));
        const ufo_value_t *seqs = ufo_value_path (root, key);
        board->mem [m].base = (uint64_t) ufo_value_int (ufo_value_list_at (bases, (size_t) m));
        if (ufo_value_type (items) != UFO_TLIST || ufo_value_type (seqs) != UFO_TLIST
        ||  ufo_value_size (items) != ufo_value_size (seqs)) {
            rc = ufo_error_set (err, UFO_E_SYNTAX, "snapshot %s: memory %s malformed", path,
                                ufo_bb_memory_name (m));
            break;
        }
        //  the memory's items, encoded back to back into one batch
        size_t n = ufo_value_size (items);
        uint32_t *ends = ufo_malloc ((n + 1) * sizeof *ends);
        ufo_buf_reset (&bytes);
        uint64_t prev = 0;
        for (size_t i = 0; i < n; i++) {
            const ufo_value_t *item = ufo_value_list_at (items, i);
            int64_t seq = ufo_value_int (ufo_value_list_at (seqs, i));
            if (ufo_value_type (item) != UFO_TMAP || seq <= 0 || (uint64_t) seq <= prev || seq > last) {
                rc = ufo_error_set (err, UFO_E_SYNTAX, "snapshot %s: item %zu of %s malformed", path, i,
                                    ufo_bb_memory_name (m));
                break;
            }
            prev = (uint64_t) seq;
            if (!s_encode_item (&bytes, item, &ends [i])) {
                rc = ufo_error_set (err, UFO_E_TOO_LARGE, "snapshot %s: memory %s too large", path,
                                    ufo_bb_memory_name (m));
                break;
            }
        }
        if (rc == 0 && n > 0) {
            s_batch_t *batch = s_batch_new (bytes.data, bytes.len);
            for (size_t i = 0; i < n; i++) {
                size_t start = i ? ends [i - 1] : 0;
                s_mem_push (&board->mem [m], (uint64_t) ufo_value_int (ufo_value_list_at (seqs, i)), batch,
                            start, ends [i] - start);
            }
            s_batch_release (batch);
        }
        free (ends);
        board->items += board->mem [m].n;
        self->items += board->mem [m].n;
    }
    ufo_buf_free (&bytes);
    ufo_value_destroy (&root);
    return rc;
}

int
bb_store_load_snapshot (bb_store_t *self, const char *data_dir, uint64_t *segment_p, ufo_error_t *err)
{
    *segment_p = 1;
    uint64_t newest = s_scan_snapshots (data_dir, 0);
    if (newest == 0)
        return 0;
    s_scan_snapshots (data_dir, newest);        //  older complete ones are superseded
    char dir [PATH_MAX], path [PATH_MAX];
    s_pathf (dir, sizeof dir, "%s/snap-%016" PRIx64, data_dir, newest);
    s_pathf (path, sizeof path, "%s/manifest.json", dir);
    ufo_value_t *manifest = ufo_json_parse_file (path, NULL, err);
    if (!manifest)
        return -1;
    int64_t seq = ufo_value_map_int (manifest, "seq", -1);
    int64_t segment = ufo_value_map_int (manifest, "segment", -1);
    const ufo_value_t *boards = ufo_value_map_get (manifest, "boards");
    int rc = 0;
    if ((uint64_t) seq != newest || segment <= 0 || ufo_value_type (boards) != UFO_TLIST)
        rc = ufo_error_set (err, UFO_E_SYNTAX, "%s: bad manifest", path);
    for (size_t i = 0; rc == 0 && i < ufo_value_size (boards); i++) {
        const ufo_value_t *row = ufo_value_list_at (boards, i);
        const char *name = ufo_value_map_str (row, "name", "");
        const char *file = ufo_value_map_str (row, "file", "");
        if (!ufo_bb_board_valid (name, strlen (name)) || strncmp (file, "board-", 6) != 0 || strchr (file, '/')) {
            rc = ufo_error_set (err, UFO_E_SYNTAX, "%s: bad board row %zu", path, i);
            break;
        }
        char board_path [PATH_MAX];
        s_pathf (board_path, sizeof board_path, "%s/%s", dir, file);
        rc = s_load_board (self, board_path, name, (uint64_t) seq, err);
    }
    if (rc == 0) {
        self->seq = self->snap_seq = (uint64_t) seq;
        *segment_p = (uint64_t) segment;
        ufo_info ("loaded snapshot %s: %zu boards, %" PRIu64 " items, seq %" PRIu64,
                  dir, self->nboards, self->items, self->seq);
    }
    ufo_value_destroy (&manifest);
    return rc;
}
