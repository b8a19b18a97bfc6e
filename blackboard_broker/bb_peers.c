/*  bb_peers.c - bytes queued per command-socket peer; see bb_peers.h. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "bb_peers.h"
#include <stdatomic.h>

#define S_BUCKETS 1024                  //  power of two

typedef struct _s_peer_t s_peer_t;
struct _s_peer_t {
    uint8_t id [255];
    uint8_t len;
    bool over;                          //  refused busy since it last was under the limit
    atomic_size_t bytes;
    atomic_int refs;                    //  the table's + one per charge
    s_peer_t *next;
};

struct _bb_charge_t {
    s_peer_t *peer;
    size_t bytes;
};

struct _bb_peers_t {
    size_t limit;
    s_peer_t *buckets [S_BUCKETS];
    uint64_t refused;
};

static uint32_t
s_hash (const uint8_t *id, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ id [i]) * 16777619u;
    return h & (S_BUCKETS - 1);
}

static void
s_unref (s_peer_t *peer)
{
    if (atomic_fetch_sub (&peer->refs, 1) == 1)
        free (peer);
}

static s_peer_t *
s_find (bb_peers_t *self, const void *id, size_t len, bool create)
{
    if (len > 255)
        len = 255;
    uint32_t h = s_hash (id, len);
    for (s_peer_t *p = self->buckets [h]; p; p = p->next)
        if (p->len == len && memcmp (p->id, id, len) == 0)
            return p;
    if (!create)
        return NULL;
    s_peer_t *p = ufo_calloc (1, sizeof *p);
    memcpy (p->id, id, len);
    p->len = (uint8_t) len;
    atomic_init (&p->bytes, 0);
    atomic_init (&p->refs, 1);
    p->next = self->buckets [h];
    self->buckets [h] = p;
    return p;
}

//  The peer's routing id for a log line: text when printable, else hex.
static void
s_name (const s_peer_t *p, char *out, size_t size)
{
    bool text = p->len > 0;
    for (size_t i = 0; i < p->len; i++)
        text = text && p->id [i] >= 0x20 && p->id [i] < 0x7f;
    size_t n = 0;
    out [0] = 0;
    for (size_t i = 0; i < p->len && n + 3 < size; i++)
        n += (size_t) snprintf (out + n, size - n, text ? "%c" : "%02x", p->id [i]);
}

bb_peers_t *
bb_peers_new (size_t limit)
{
    bb_peers_t *self = ufo_calloc (1, sizeof *self);
    self->limit = limit ? limit : 64u << 20;
    return self;
}

void
bb_peers_destroy (bb_peers_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_peers_t *self = *self_p;
    for (size_t b = 0; b < S_BUCKETS; b++)
        for (s_peer_t *p = self->buckets [b], *next; p; p = next) {
            next = p->next;
            s_unref (p);
        }
    free (self);
    *self_p = NULL;
}

size_t
bb_peers_queued (bb_peers_t *self, const void *id, size_t len)
{
    s_peer_t *p = s_find (self, id, len, false);
    return p ? atomic_load (&p->bytes) : 0;
}

bool
bb_peers_over (bb_peers_t *self, const void *id, size_t len)
{
    s_peer_t *p = s_find (self, id, len, false);
    if (!p)
        return false;
    size_t queued = atomic_load (&p->bytes);
    char name [520];
    if (queued > self->limit) {
        self->refused++;
        if (!p->over) {
            s_name (p, name, sizeof name);
            ufo_warn ("peer %s has %zu bytes of replies it has not read (limit %zu, "
                      "broker.max_peer_output_bytes): its requests get busy until it reads them",
                      name, queued, self->limit);
        }
        p->over = true;
        return true;
    }
    if (p->over) {
        s_name (p, name, sizeof name);
        ufo_info ("peer %s read its replies (%zu bytes queued): its requests are served again", name, queued);
        p->over = false;
    }
    return false;
}

bb_charge_t *
bb_peers_charge (bb_peers_t *self, const void *id, size_t len, size_t bytes)
{
    s_peer_t *p = s_find (self, id, len, true);
    bb_charge_t *c = ufo_malloc (sizeof *c);
    c->peer = p;
    c->bytes = bytes;
    atomic_fetch_add (&p->refs, 1);
    atomic_fetch_add (&p->bytes, bytes);
    return c;
}

void
bb_peers_release (bb_charge_t *c)
{
    if (!c)
        return;
    atomic_fetch_sub (&c->peer->bytes, c->bytes);
    s_unref (c->peer);
    free (c);
}

void
bb_peers_free (void *data, void *hint)
{
    free (data);
    bb_peers_release ((bb_charge_t *) hint);
}

void
bb_peers_sweep (bb_peers_t *self)
{
    for (size_t b = 0; b < S_BUCKETS; b++)
        for (s_peer_t **pp = &self->buckets [b]; *pp;) {
            s_peer_t *p = *pp;
            if (atomic_load (&p->bytes) == 0 && !p->over) {
                *pp = p->next;
                s_unref (p);
            }
            else
                pp = &p->next;
        }
}

size_t
bb_peers_total (bb_peers_t *self)
{
    size_t total = 0;
    for (size_t b = 0; b < S_BUCKETS; b++)
        for (s_peer_t *p = self->buckets [b]; p; p = p->next)
            total += atomic_load (&p->bytes);
    return total;
}

uint64_t
bb_peers_refused (bb_peers_t *self)
{
    return self->refused;
}
