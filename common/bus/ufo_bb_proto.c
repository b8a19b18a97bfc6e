/*  ufo_bb_proto.c - blackboard broker protocol: request decoding, replies, topics. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_msgpack.h"
#include "ufo_utf8.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_hash.h"
#include "ufo_bb_proto.h"

static const char *s_req_names [UFO_BB_REQ_COUNT] = {
    "bb.add", "bb.snapshot", "bb.clear", "bb.delete", "bb.list",
    "blob.put", "blob.get", "stats", "ping"
};

static const char *s_memory_names [4] = { "questions", "requests", "trajectories", "screenshots" };

const char *
ufo_bb_req_name (int type)
{
    return type >= 0 && type < UFO_BB_REQ_COUNT ? s_req_names [type] : NULL;
}

int
ufo_bb_req_parse (const char *name)
{
    for (int i = 0; name && i < UFO_BB_REQ_COUNT; i++)
        if (strcmp (name, s_req_names [i]) == 0)
            return i;
    return -1;
}

const char *
ufo_bb_memory_name (int which)
{
    return which >= 0 && which < 4 ? s_memory_names [which] : NULL;
}

int
ufo_bb_memory_parse (const char *name)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp (name, s_memory_names [i]) == 0)
            return i;
    return -1;
}

bool
ufo_bb_board_valid (const char *name, size_t len)
{
    if (!name || len == 0 || len > UFO_BB_BOARD_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name [i];
        if (!(isalnum ((unsigned char) c) || c == '_' || c == '.' || c == ':' || c == '@' || c == '-'))
            return false;
    }
    return true;
}

void
ufo_bb_limits_default (ufo_bb_limits_t *limits)
{
    limits->max_message_bytes = 16u * 1024 * 1024;
    limits->max_item_bytes = 1024u * 1024;
    limits->max_blob_bytes = 16u * 1024 * 1024;
    limits->max_batch_items = 100000;
}

void
ufo_bb_request_init (ufo_bb_request_t *req)
{
    memset (req, 0, sizeof *req);
    req->type = -1;
    req->memory = UFO_BB_MEMORY_ALL;
    req->item_ends = req->ends_inline;
}

//  Makes room for n item end offsets.
static void
s_ends_reserve (ufo_bb_request_t *req, size_t n)
{
    if (n > sizeof req->ends_inline / sizeof req->ends_inline [0]) {
        if (req->ends_heap)
            free (req->item_ends);
        req->item_ends = ufo_malloc (n * sizeof *req->item_ends);
        req->ends_heap = true;
    }
}

void
ufo_bb_request_reset (ufo_bb_request_t *req)
{
    ufo_value_destroy (&req->holder);
    if (req->ends_heap)
        free (req->item_ends);
    ufo_buf_free (&req->items_mp);
    ufo_bb_request_init (req);
}

//  Reads a required or optional string field into dst (cap bytes incl. NUL).
//  Returns 1 if present, 0 if absent (and optional), -1 on error.
static int
s_get_str (const ufo_value_t *body, const char *key, bool required, const char **out, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        if (required)
            return ufo_error_set (err, UFO_E_MISSING, "field '%s' is required", key);
        return 0;
    }
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "field '%s' must be a string, not %s", key,
                              ufo_value_type_name (ufo_value_type (v)));
    *out = ufo_value_str (v);
    return 1;
}

static int
s_get_board (const ufo_value_t *body, ufo_bb_request_t *req, ufo_error_t *err)
{
    const char *board;
    if (s_get_str (body, "board", true, &board, err) < 0)
        return -1;
    size_t len = ufo_value_strlen (ufo_value_map_get (body, "board"));
    if (!ufo_bb_board_valid (board, len) || strlen (board) != len)
        return ufo_error_set (err, UFO_E_INVALID,
                              "field 'board' must be 1..%d characters of [A-Za-z0-9_.:@-]", UFO_BB_BOARD_MAX);
    memcpy (req->board, board, len + 1);
    return 0;
}

static int
s_get_memory (const ufo_value_t *body, ufo_bb_request_t *req, bool required, ufo_error_t *err)
{
    const char *memory = NULL;
    int rc = s_get_str (body, "memory", required, &memory, err);
    if (rc < 0)
        return -1;
    req->memory = UFO_BB_MEMORY_ALL;
    if (rc == 1) {
        req->memory = ufo_bb_memory_parse (memory);
        if (req->memory < 0)
            return ufo_error_set (err, UFO_E_INVALID,
                "field 'memory' must be questions, requests, trajectories or screenshots");
    }
    return 0;
}

static int
s_decode_items (ufo_value_t **body_p, ufo_bb_request_t *req, const ufo_bb_limits_t *limits,
                ufo_error_t *err)
{
    const ufo_value_t *body = *body_p;
    const ufo_value_t *list = ufo_value_map_get (body, "items");
    const ufo_value_t *single = ufo_value_map_get (body, "item");
    if (list && single)
        return ufo_error_set (err, UFO_E_INVALID, "give either 'items' or 'item', not both");
    if (!list && !single)
        return ufo_error_set (err, UFO_E_MISSING, "field 'items' (or 'item') is required");
    size_t count = 1;
    bool all_maps = list != NULL;
    if (list) {
        if (ufo_value_type (list) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_TYPE, "field 'items' must be a list, not %s",
                                  ufo_value_type_name (ufo_value_type (list)));
        count = ufo_value_size (list);
        if (count == 0)
            return ufo_error_set (err, UFO_E_INVALID, "field 'items' is empty");
        if (count > limits->max_batch_items)
            return ufo_error_set (err, UFO_E_TOO_LARGE, "%zu items in one request; the limit is %zu",
                                  count, limits->max_batch_items);
        for (size_t i = 0; i < count && all_maps; i++)
            all_maps = ufo_value_type (ufo_value_list_at (list, i)) == UFO_TMAP;
    }
    if (all_maps) {
        //  Common case: adopt the request body as it is, no copy.
        req->holder = *body_p;
        *body_p = NULL;
        req->items = ufo_value_map_get (req->holder, "items");
    }
    else {
        req->holder = ufo_value_new_list ();
        req->items = req->holder;
        for (size_t i = 0; i < count; i++) {
            const ufo_value_t *v = list ? ufo_value_list_at (list, i) : single;
            ufo_value_t *item = NULL;
            if (ufo_value_type (v) == UFO_TSTRING) {
                item = ufo_value_new_map ();
                ufo_value_map_set_copy (item, "text", v);
            }
            else
            if (ufo_value_type (v) == UFO_TMAP)
                item = ufo_value_dup (v);
            else
                return ufo_error_set (err, UFO_E_TYPE, "item %zu must be a map or a string, not %s", i,
                                      ufo_value_type_name (ufo_value_type (v)));
            ufo_value_list_push (req->items, &item);
        }
    }
    s_ends_reserve (req, count);
    for (size_t i = 0; i < count; i++) {
        const ufo_value_t *item = ufo_value_list_at (req->items, i);
        size_t before = req->items_mp.len;
        ufo_msgpack_append (&req->items_mp, item);
        req->item_ends [i] = (uint32_t) req->items_mp.len;   //  bounded by the record limit below
        if (req->items_mp.len - before > limits->max_item_bytes)
            return ufo_error_set (err, UFO_E_TOO_LARGE, "item %zu is %zu bytes; max_item_bytes is %zu",
                                  i, req->items_mp.len - before, limits->max_item_bytes);
        //  one add is one log record (ufo_wal.h): keep room for the event's other fields
        if (req->items_mp.len > UFO_BB_MAX_RECORD - 65536)
            return ufo_error_set (err, UFO_E_TOO_LARGE, "items of one bb.add exceed %u bytes (one log record)",
                                  (unsigned) (UFO_BB_MAX_RECORD - 65536));
        const ufo_value_t *blob = ufo_value_map_get (item, "blob");
        if (blob && ufo_value_type (blob) != UFO_TNULL && !ufo_sha256_hex_valid (ufo_value_str (blob)))
            return ufo_error_set (err, UFO_E_INVALID,
                                  "item %zu: 'blob' must be a blob reference (64 lowercase hex digits)", i);
    }
    req->items_data = (const uint8_t *) req->items_mp.data;
    req->items_len = req->items_mp.len;
    req->nitems = count;
    return 0;
}

int
ufo_bb_request_decode_tree (ufo_bb_request_t *req, const void *const *frames, const size_t *sizes,
                            size_t nframes, const ufo_bb_limits_t *limits, ufo_error_t *err)
{
    ufo_bb_request_reset (req);
    ufo_bb_limits_t dflt;
    if (!limits) {
        ufo_bb_limits_default (&dflt);
        limits = &dflt;
    }
    if (nframes == 0)
        return ufo_error_set (err, UFO_E_INVALID, "request has no envelope frame");
    if (sizes [0] > limits->max_message_bytes) {
        ufo_bb_peek_id (frames [0], sizes [0], req->id);
        return ufo_error_set (err, UFO_E_TOO_LARGE, "request frame of %zu bytes exceeds max_message_bytes %zu",
                              sizes [0], limits->max_message_bytes);
    }
    ufo_msg_limits_t msg_limits = { limits->max_message_bytes, 32 };
    ufo_msg_t *msg = ufo_msg_decode (frames [0], sizes [0], &msg_limits, err);
    if (!msg) {
        ufo_bb_peek_id (frames [0], sizes [0], req->id);
        return -1;
    }
    snprintf (req->id, sizeof req->id, "%s", ufo_msg_id (msg));
    snprintf (req->sender, sizeof req->sender, "%s", ufo_msg_sender (msg));
    snprintf (req->type_name, sizeof req->type_name, "%s", ufo_msg_type (msg));
    int rc = 0;
    int type = ufo_bb_req_parse (ufo_msg_type (msg));
    ufo_value_t *owned = ufo_msg_take_body (msg);
    const ufo_value_t *body = owned;
    size_t want = type == UFO_BB_REQ_BLOB_PUT ? 2 : 1;
    if (type < 0)
        rc = ufo_error_set (err, UFO_E_INVALID, "unknown request type '%s'", ufo_msg_type (msg));
    else
    if (nframes != want)
        rc = ufo_error_set (err, UFO_E_INVALID, "request '%s' takes %zu frame(s) after routing, got %zu",
                            ufo_msg_type (msg), want, nframes);
    else
    if (ufo_value_type (body) != UFO_TMAP && ufo_value_type (body) != UFO_TNULL)
        rc = ufo_error_set (err, UFO_E_TYPE, "request body must be a map, not %s",
                            ufo_value_type_name (ufo_value_type (body)));
    if (rc == 0) {
        req->type = type;
        switch (type) {
            case UFO_BB_REQ_ADD:
                if (s_get_board (body, req, err) || s_get_memory (body, req, true, err)
                ||  s_decode_items (&owned, req, limits, err))
                    rc = -1;
                break;
            case UFO_BB_REQ_SNAPSHOT: {
                if (s_get_board (body, req, err) || s_get_memory (body, req, false, err)) {
                    rc = -1;
                    break;
                }
                const ufo_value_t *after = ufo_value_map_get (body, "after");
                if (after && ufo_value_type (after) != UFO_TNULL) {
                    if (ufo_value_type (after) != UFO_TINT)
                        rc = ufo_error_set (err, UFO_E_TYPE, "field 'after' must be an integer");
                    else
                    if (ufo_value_int (after) < 0)
                        rc = ufo_error_set (err, UFO_E_RANGE, "field 'after' must not be negative");
                    else
                        req->after = (uint64_t) ufo_value_int (after);
                }
                break;
            }
            case UFO_BB_REQ_CLEAR:
                if (s_get_board (body, req, err) || s_get_memory (body, req, false, err))
                    rc = -1;
                break;
            case UFO_BB_REQ_DELETE:
                rc = s_get_board (body, req, err);
                break;
            case UFO_BB_REQ_BLOB_PUT:
                if (sizes [1] > limits->max_blob_bytes)
                    rc = ufo_error_set (err, UFO_E_TOO_LARGE, "blob of %zu bytes exceeds max_blob_bytes %zu",
                                        sizes [1], limits->max_blob_bytes);
                req->blob_data = frames [1];
                req->blob_len = sizes [1];
                if (rc == 0) {
                    const ufo_value_t *ttl = ufo_value_map_get (body, "ttl_ms");
                    if (ttl && ufo_value_type (ttl) != UFO_TNULL && ufo_value_type (ttl) != UFO_TINT)
                        rc = ufo_error_set (err, UFO_E_TYPE, "field 'ttl_ms' must be an integer");
                    else
                    if (ttl && ufo_value_type (ttl) == UFO_TINT
                    &&  (ufo_value_int (ttl) < UFO_BB_BLOB_TTL_MIN_MS || ufo_value_int (ttl) > UFO_BB_BLOB_TTL_MAX_MS))
                        rc = ufo_error_set (err, UFO_E_RANGE, "field 'ttl_ms' must be %d .. %lld (1 s .. 7 days)",
                                            UFO_BB_BLOB_TTL_MIN_MS, UFO_BB_BLOB_TTL_MAX_MS);
                    else
                    if (ttl && ufo_value_type (ttl) == UFO_TINT)
                        req->ttl_ms = ufo_value_int (ttl);
                }
                break;
            case UFO_BB_REQ_BLOB_GET: {
                const char *blob;
                if (s_get_str (body, "blob", true, &blob, err) < 0)
                    rc = -1;
                else
                if (!ufo_sha256_hex_valid (blob))
                    rc = ufo_error_set (err, UFO_E_INVALID, "field 'blob' must be 64 lowercase hex digits");
                else
                    memcpy (req->blob, blob, 65);
                break;
            }
            default:
                break;          //  list, stats, ping: no fields
        }
    }
    ufo_value_destroy (&owned);
    ufo_msg_destroy (&msg);
    if (rc != 0) {
        ufo_value_destroy (&req->holder);
        ufo_buf_free (&req->items_mp);
        req->items = NULL;
        req->items_data = NULL;
        req->items_len = req->nitems = 0;
        req->type = -1;
    }
    return rc;
}

void
ufo_bb_encode_ok (ufo_buf_t *buf, const char *id, ufo_value_t **body_p)
{
    ufo_bb_envelope_head (buf, "ok", id, "ufo-broker");
    if (body_p && *body_p) {
        ufo_msgpack_append (buf, *body_p);
        ufo_value_destroy (body_p);
    }
    else
        ufo_mp_put_map (buf, 0);
}

void
ufo_bb_encode_error (ufo_buf_t *buf, const char *id, int code, const char *message)
{
    ufo_bb_envelope_head (buf, "error", id, "ufo-broker");
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "code", ufo_errcode_name (code));
    ufo_value_map_set_str (body, "message", message ? message : "");
    ufo_msgpack_append (buf, body);
    ufo_value_destroy (&body);
}

size_t
ufo_bb_topic (char *out, size_t size, const char *board, int memory)
{
    //  "bb/" board "/" memory, cut to size - 1 bytes (on the broker's hot path: no printf)
    const char *name = ufo_bb_memory_name (memory);
    const char *parts [4] = { "bb/", board, "/", name ? name : "*" };
    size_t n = 0;
    for (int i = 0; i < 4 && size > 0; i++) {
        size_t len = strlen (parts [i]);
        if (len > size - 1 - n)
            len = size - 1 - n;
        memcpy (out + n, parts [i], len);
        n += len;
    }
    if (size > 0)
        out [n] = 0;
    return n;
}

size_t
ufo_bb_topic_prefix (char *out, size_t size, const char *board)
{
    int n = snprintf (out, size, "bb/%s/", board);
    return n < 0 ? 0 : (size_t) n < size ? (size_t) n : size - 1;
}

void
ufo_bb_envelope_head (ufo_buf_t *buf, const char *type, const char *id, const char *sender)
{
    ufo_bb_envelope_head_at (buf, type, id, sender, ufo_time_now_us ());
}

void
ufo_bb_envelope_head_at (ufo_buf_t *buf, const char *type, const char *id, const char *sender, int64_t now)
{
    //  no allocation and no random id per message (the broker's hot path)
    ufo_msg_encode_head (buf, type, id, sender, "", now > 0 ? now : 0);
}

int
ufo_bb_endpoint (const char *configured, const char *which, char *out, size_t size, ufo_error_t *err)
{
    if (configured && *configured) {
        if (strlen (configured) >= size)
            return ufo_error_set (err, UFO_E_TOO_LARGE, "endpoint '%s' is too long", configured);
        memcpy (out, configured, strlen (configured) + 1);
        return 0;
    }
    char dir [256];
    const char *run = getenv ("UFO_RUN_DIR");
    const char *xdg = getenv ("XDG_RUNTIME_DIR");
    int n;
    if (run && *run)
        n = snprintf (dir, sizeof dir, "%s", run);
    else
    if (xdg && *xdg)
        n = snprintf (dir, sizeof dir, "%s/ufobus", xdg);
    else
        n = snprintf (dir, sizeof dir, "/tmp/ufobus-%u", (unsigned) getuid ());
    //  an ipc path must fit in sun_path (108 bytes with its NUL)
    if (n < 0 || (size_t) n >= sizeof dir || (size_t) n + strlen ("/broker-") + strlen (which) >= 108)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "run directory '%s' is too long for an ipc endpoint", dir);
    if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        return ufo_error_set (err, UFO_E_IO, "cannot create run directory %s: %s", dir, strerror (errno));
    n = snprintf (out, size, "ipc://%s/broker-%s", dir, which);
    if (n < 0 || (size_t) n >= size)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "endpoint buffer too small");
    return 0;
}

//  --- bb.add fast path --------------------------------------------------------------
//  The common bb.add, {"board": s, "memory": s, "items": [map, ...]} with plain items (see
//  ufo_msgpack_scan_plain) and no blob reference, is read in place: the items stay the
//  frame's bytes, checked but never decoded. Anything else (other fields, string items,
//  "item", a possible "blob" key, a limit reached, an error) returns false and goes to the
//  tree decoder, which gives the verdict and the error messages.

static bool
s_fast_add (ufo_bb_request_t *req, const uint8_t *frame, size_t size, const ufo_bb_limits_t *limits)
{
    ufo_msg_limits_t msg_limits = { limits->max_message_bytes, 32 };
    size_t off;
    ufo_msg_head_t head;
    if (ufo_msg_decode_head (frame, size, &msg_limits, &head, &off, NULL) != 0)
        return false;
    bool ok = strcmp (head.type, "bb.add") == 0;
    ufo_mp_reader_t r;
    ufo_mp_reader_init (&r, frame, size);
    r.p += off;
    uint32_t pairs = 0;
    ok = ok && ufo_mp_read_map (&r, &pairs) == 0 && pairs == 3;
    const char *board = NULL;
    const uint8_t *items = NULL, *items_end = NULL;
    size_t board_len = 0;
    uint32_t count = 0;
    int memory = -1;
    for (int pair = 0; ok && pair < 3; pair++) {
        const char *key, *s = NULL;
        size_t key_len, len = 0;
        ok = ufo_mp_read_str (&r, &key, &key_len) == 0;
        if (!ok)
            break;
        if (key_len == 5 && memcmp (key, "board", 5) == 0 && !board) {
            ok = ufo_mp_read_str (&r, &s, &len) == 0 && ufo_bb_board_valid (s, len);
            board = s;
            board_len = len;
        }
        else
        if (key_len == 6 && memcmp (key, "memory", 6) == 0 && memory < 0) {
            ok = ufo_mp_read_str (&r, &s, &len) == 0;
            for (int m = 0; ok && m < 4 && memory < 0; m++)
                if (strlen (s_memory_names [m]) == len && memcmp (s, s_memory_names [m], len) == 0)
                    memory = m;
            ok = ok && memory >= 0;
        }
        else
        if (key_len == 5 && memcmp (key, "items", 5) == 0 && !items) {
            ok = ufo_mp_read_array (&r, &count) == 0
              && count >= 1 && count <= limits->max_batch_items && count <= ufo_mp_left (&r);
            if (!ok)
                break;
            items = r.p;
            s_ends_reserve (req, count);
            for (size_t i = 0; ok && i < count; i++) {
                bool blob;
                size_t n = ufo_msgpack_scan_plain_map (r.p, ufo_mp_left (&r), 2, 32, "blob", &blob);
                ok = n > 0 && n <= limits->max_item_bytes && !blob;
                r.p += n;
                req->item_ends [i] = (uint32_t) (r.p - items);
            }
            items_end = r.p;
            ok = ok && (size_t) (items_end - items) <= UFO_BB_MAX_RECORD - 65536;
        }
        else
            ok = false;
    }
    ok = ok && !ufo_mp_left (&r) && board && items;
    if (ok) {
        req->type = UFO_BB_REQ_ADD;
        memcpy (req->type_name, "bb.add", 7);
        memcpy (req->id, head.id, strlen (head.id) + 1);           //  both UFO_MSG_ID_MAX + 1
        memcpy (req->sender, head.sender, strlen (head.sender) + 1);
        memcpy (req->board, board, board_len);
        req->board [board_len] = 0;
        req->memory = memory;
        req->items_data = items;
        req->items_len = (size_t) (items_end - items);
        req->nitems = count;
    }
    return ok;
}

int
ufo_bb_request_decode (ufo_bb_request_t *req, const void *const *frames, const size_t *sizes,
                       size_t nframes, const ufo_bb_limits_t *limits, ufo_error_t *err)
{
    ufo_bb_request_reset (req);
    ufo_bb_limits_t dflt;
    if (!limits) {
        ufo_bb_limits_default (&dflt);
        limits = &dflt;
    }
    if (nframes == 1 && frames [0] && sizes [0] <= limits->max_message_bytes
    &&  s_fast_add (req, (const uint8_t *) frames [0], sizes [0], limits)) {
        ufo_error_clear (err);
        return 0;
    }
    return ufo_bb_request_decode_tree (req, frames, sizes, nframes, limits, err);
}

//  --- Lenient reading of a rejected envelope's id --------------------------------------

bool
ufo_bb_peek_id (const void *frame, size_t len, char id [65])
{
    id [0] = 0;
    if (!frame || len < 3)
        return false;
    ufo_mp_reader_t r;
    ufo_mp_reader_init (&r, frame, len);
    uint32_t count;
    int64_t version;
    uint64_t uversion;
    const char *type, *data;
    size_t type_len, n;
    if (ufo_mp_read_array (&r, &count)
    ||  (ufo_mp_read_int (&r, &version) && ufo_mp_read_uint (&r, &uversion))      //  version: any int
    ||  ufo_mp_read_str (&r, &type, &type_len) || ufo_mp_read_str (&r, &data, &n))
        return false;
    if (n > 64 || memchr (data, 0, n) || !ufo_utf8_valid (data, n))
        return false;
    memcpy (id, data, n);
    id [n] = 0;
    return true;
}
