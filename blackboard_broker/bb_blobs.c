/*  bb_blobs.c - the broker's blob.put and the expiry of blobs put with ttl_ms
    (docs/PROTOCOL.md 2.3, 2.8): an expiring blob is removed once its time has passed,
    unless an item of a board refers to it (then it becomes permanent) or a put without
    ttl_ms pinned it. The expiry is kept durably beside the blob (ufo_blob.h), and its
    changes and removals go through the durability thread in order with the blob commits
    (fsync always), so a restart finds what was acknowledged. bb_server_int.h. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_blob.h"
#include "ufo_bb_proto.h"
#include "bb_store.h"
#include "bb_sync.h"
#include "bb_server_int.h"

#define S_EXPIRE_PER_TICK 256       //  removals per timer tick (each may scan the boards)

static int64_t
s_wall_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bb_expiry_t *
s_find (bb_server_t *self, const char *hex)
{
    for (size_t i = 0; i < self->nexpiries; i++)
        if (!strcmp (self->expiries [i].hex, hex))
            return &self->expiries [i];
    return NULL;
}

static void
s_set (bb_server_t *self, const char *hex, int64_t expires_ms)
{
    bb_expiry_t *e = s_find (self, hex);
    if (!e) {
        if (self->nexpiries == self->cap_expiries) {
            self->cap_expiries = self->cap_expiries ? self->cap_expiries * 2 : 16;
            self->expiries = ufo_realloc (self->expiries, self->cap_expiries * sizeof *self->expiries);
        }
        e = &self->expiries [self->nexpiries++];
        memcpy (e->hex, hex, 65);
    }
    e->expires_ms = expires_ms;
}

static void
s_drop (bb_server_t *self, bb_expiry_t *e)
{
    *e = self->expiries [--self->nexpiries];
}

//  The table after a put's expiry op (e: hex's entry, or NULL).
static void
s_apply (bb_server_t *self, int op, const char *hex, int64_t expires, bb_expiry_t *e)
{
    if (op == UFO_BLOB_EXPIRY_SET)
        s_set (self, hex, expires);
    else
    if (op == UFO_BLOB_EXPIRY_CLEAR && e)
        s_drop (self, e);
}

static bool
s_pending (bb_server_t *self, const char *hex)
{
    for (size_t i = 0; i < self->npblobs; i++)
        if (!strcmp (self->pblobs [i].hex, hex))
            return true;
    return false;
}

static void
s_loaded (const char *hex, int64_t expires_ms, void *arg)
{
    s_set ((bb_server_t *) arg, hex, expires_ms);
}

void
bb_blobs_load (bb_server_t *self)
{
    size_t n = ufo_blob_expiries (self->blobs, s_loaded, self);
    if (n)
        ufo_info ("%zu blob(s) put with ttl_ms expire later", n);
}

void
bb_blobs_put (bb_server_t *self, const bb_route_t *route, ufo_bb_request_t *req)
{
    ufo_blob_stage_t *stage = ufo_calloc (1, sizeof *stage);
    ufo_error_t err;
    if (ufo_blob_stage (self->blobs, req->blob_data, req->blob_len, stage, &err) != 0) {
        free (stage);
        if (err.code == UFO_E_UNAVAILABLE) {
            bb_durability_disk_full (self, err.message);
            self->writes_refused++;
        }
        bb_out_reply_error (self, route, req->id, req->type_name, err.code, err.message);
        return;
    }
    self->blob_puts++;
    char hex [65];
    memcpy (hex, stage->hex, sizeof hex);
    bool existed = stage->existed;
    //  The expiry: a put with ttl_ms of a new or expiring blob sets (or extends) it; a put
    //  without pins the blob (permanent); a permanent blob stays permanent.
    bb_expiry_t *e = s_find (self, hex);
    bool permanent = (existed || s_pending (self, hex)) && !e;
    int op = UFO_BLOB_EXPIRY_KEEP;
    int64_t expires = 0;
    if (req->ttl_ms && !permanent) {
        expires = s_wall_ms () + req->ttl_ms;
        if (e && e->expires_ms > expires)
            expires = e->expires_ms;
        op = UFO_BLOB_EXPIRY_SET;
    }
    else
    if (!req->ttl_ms && e)
        op = UFO_BLOB_EXPIRY_CLEAR;
    if (op != UFO_BLOB_EXPIRY_KEEP)
        ufo_blob_stage_expiry (stage, op, expires);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "blob", hex);
    ufo_value_map_set_int (body, "size", (int64_t) req->blob_len);
    ufo_value_map_set_bool (body, "existed", existed);
    if (expires)
        ufo_value_map_set_int (body, "expires_ms", expires);
    if ((existed && op == UFO_BLOB_EXPIRY_KEEP) || self->cfg.fsync != BB_FSYNC_ALWAYS) {
        int rc = ufo_blob_commit (stage, false, &err);
        free (stage);
        if (rc != 0) {
            ufo_value_destroy (&body);
            bb_out_reply_error (self, route, req->id, req->type_name, err.code, err.message);
            return;
        }
        s_apply (self, op, hex, expires, e);
        bb_out_reply_ok (self, route, req->id, &body);
        return;
    }
    //  fsync always: committed (expiry file, blob, directory) on the durability thread, in
    //  order with every other blob job; answered when durable
    s_apply (self, op, hex, expires, e);
    uint64_t ticket = bb_sync_blob (self->sync, &stage, true);
    if (self->npblobs == self->cap_pblobs) {
        self->cap_pblobs = self->cap_pblobs ? self->cap_pblobs * 2 : 16;
        self->pblobs = ufo_realloc (self->pblobs, self->cap_pblobs * sizeof *self->pblobs);
    }
    self->pblobs [self->npblobs].ticket = ticket;
    memcpy (self->pblobs [self->npblobs++].hex, hex, sizeof hex);
    ufo_buf_reset (&self->scratch);
    ufo_bb_encode_ok (&self->scratch, req->id, &body);
    bb_out_t *o = bb_out_reply (self, route, &self->scratch, ticket, false);
    ufo_buf_reset (&self->scratch);
    ufo_bb_encode_error (&self->scratch, req->id, UFO_E_IO, "the blob could not be stored durably");
    o->fail = bb_out_copy (self->scratch.data, self->scratch.len);
    o->fail_len = self->scratch.len;
}

//  Hands a stage to commit: inline, or on the durability thread with fsync always.
static void
s_commit (bb_server_t *self, ufo_blob_stage_t **stage_p)
{
    if (self->cfg.fsync == BB_FSYNC_ALWAYS) {
        bb_sync_blob (self->sync, stage_p, true);
        return;
    }
    ufo_error_t err;
    if (ufo_blob_commit (*stage_p, false, &err) != 0)
        ufo_warn ("blob expiry: %s", err.message);
    free (*stage_p);
    *stage_p = NULL;
}

void
bb_blobs_expire (bb_server_t *self)
{
    int64_t now = s_wall_ms ();
    size_t done = 0;
    for (size_t i = 0; i < self->nexpiries && done < S_EXPIRE_PER_TICK; ) {
        bb_expiry_t *e = &self->expiries [i];
        if (e->expires_ms > now || s_pending (self, e->hex)) {
            i++;
            continue;
        }
        done++;
        ufo_blob_stage_t *stage = ufo_calloc (1, sizeof *stage);
        ufo_error_t err;
        if (bb_store_mentions (self->store, e->hex)) {
            //  an item of a board refers to it (a screenshot of an agent's step with the same
            //  bytes): it stays, and no longer expires
            ufo_blob_stage_of (self->blobs, e->hex, stage);
            ufo_blob_stage_expiry (stage, UFO_BLOB_EXPIRY_CLEAR, 0);
            self->blobs_kept++;
            ufo_info ("blob %.16s... expired but a board refers to it: kept, now permanent", e->hex);
            s_commit (self, &stage);
        }
        else
        if (ufo_blob_remove (self->blobs, e->hex, stage, &err) == 0 || err.code == UFO_E_NOT_FOUND) {
            self->blobs_expired++;
            ufo_debug ("blob %.16s... expired: removed", e->hex);
            s_commit (self, &stage);
        }
        else {
            ufo_warn ("blob %.16s... expired but could not be removed (retried later): %s", e->hex, err.message);
            free (stage);
            i++;
            continue;
        }
        s_drop (self, e);               //  the last entry moves to i: looked at next
    }
}

void
bb_blobs_stats (bb_server_t *self, ufo_value_t *s)
{
    ufo_value_map_set_int (s, "blobs_expiring", (int64_t) self->nexpiries);
    ufo_value_map_set_int (s, "blobs_expired", (int64_t) self->blobs_expired);
    ufo_value_map_set_int (s, "blobs_kept", (int64_t) self->blobs_kept);
}
