/*  ufo_loop.c - the one event loop of an agent process (ufo_loop.h). */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_http.h"
#include "ufo_llm.h"
#include "ufo_msg.h"
#include "ufo_loop.h"
#include <czmq.h>

#define S_MAX_ITEMS 256

enum { S_READER = 1, S_TIMER, S_SOURCE };

typedef struct {
    int id;                     //  0: removed (slot compacted after the turn)
    int kind;
    void *socket;
    int fd;
    ufo_loop_fn *fn;
    void *arg;
    int64_t due;                //  timers: monotonic ms
    int interval;
    ufo_loop_source_t source;
} s_entry_t;

struct _ufo_loop_t {
    s_entry_t *entries;
    size_t n, cap;
    int next_id;
    int depth;                  //  nested run_once calls (compaction waits for the outermost)
    bool stop;
    uint64_t turns;
};

ufo_loop_t *
ufo_loop_new (void)
{
    return ufo_calloc (1, sizeof (ufo_loop_t));
}

void
ufo_loop_destroy (ufo_loop_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    free ((*self_p)->entries);
    free (*self_p);
    *self_p = NULL;
}

static s_entry_t *
s_add (ufo_loop_t *self, int kind, ufo_loop_fn *fn, void *arg)
{
    if (self->n == self->cap) {
        self->cap = self->cap ? self->cap * 2 : 16;
        self->entries = ufo_realloc (self->entries, self->cap * sizeof *self->entries);
    }
    s_entry_t *e = &self->entries [self->n++];
    memset (e, 0, sizeof *e);
    e->id = ++self->next_id;
    e->kind = kind;
    e->fn = fn;
    e->arg = arg;
    e->fd = -1;
    return e;
}

int
ufo_loop_reader_add (ufo_loop_t *self, void *socket, int fd, ufo_loop_fn *fn, void *arg)
{
    assert (self && fn && (socket || fd >= 0));
    s_entry_t *e = s_add (self, S_READER, fn, arg);
    e->socket = socket;
    e->fd = fd;
    return e->id;
}

int
ufo_loop_timer_add (ufo_loop_t *self, int delay_ms, int interval_ms, ufo_loop_fn *fn, void *arg)
{
    assert (self && fn);
    s_entry_t *e = s_add (self, S_TIMER, fn, arg);
    e->due = ufo_time_mono_ms () + (delay_ms > 0 ? delay_ms : 0);
    e->interval = interval_ms > 0 ? interval_ms : 0;
    return e->id;
}

int
ufo_loop_source_add (ufo_loop_t *self, const ufo_loop_source_t *source, void *arg)
{
    assert (self && source);
    s_entry_t *e = s_add (self, S_SOURCE, NULL, arg);
    e->source = *source;
    return e->id;
}

void
ufo_loop_remove (ufo_loop_t *self, int id)
{
    for (size_t i = 0; id > 0 && self && i < self->n; i++)
        if (self->entries [i].id == id) {
            self->entries [i].id = 0;
            return;
        }
}

static void
s_compact (ufo_loop_t *self)
{
    size_t k = 0;
    for (size_t i = 0; i < self->n; i++)
        if (self->entries [i].id)
            self->entries [k++] = self->entries [i];
    self->n = k;
}

//  The entry with this id, or NULL once removed (entries may move while callbacks run).
static s_entry_t *
s_find (ufo_loop_t *self, int id)
{
    for (size_t i = 0; i < self->n; i++)
        if (self->entries [i].id == id)
            return &self->entries [i];
    return NULL;
}

static short
s_zevents (int events)
{
    return (short) ((events & UFO_LOOP_IN ? ZMQ_POLLIN : 0) | (events & UFO_LOOP_OUT ? ZMQ_POLLOUT : 0));
}

static int
s_revents (short re)
{
    return (re & ZMQ_POLLIN ? UFO_LOOP_IN : 0) | (re & ZMQ_POLLOUT ? UFO_LOOP_OUT : 0)
         | (re & ZMQ_POLLERR ? UFO_LOOP_ERR : 0);
}

static int
s_min_timeout (int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

int
ufo_loop_run_once (ufo_loop_t *self, int max_wait_ms)
{
    assert (self);
    self->depth++;
    self->turns++;
    //  1. due work of the sources (ids first: a callback may add entries and move them)
    size_t n0 = self->n;
    int ids [S_MAX_ITEMS];
    size_t nids = 0;
    for (size_t i = 0; i < n0 && nids < S_MAX_ITEMS; i++)
        if (self->entries [i].id && self->entries [i].kind == S_SOURCE)
            ids [nids++] = self->entries [i].id;
    for (size_t k = 0; k < nids; k++) {
        s_entry_t *e = s_find (self, ids [k]);
        if (e && e->source.service)
            e->source.service (e->arg);
    }
    //  2. items and the nearest deadline
    ufo_loop_item_t items [S_MAX_ITEMS];
    int owner [S_MAX_ITEMS];            //  entry id of each item
    size_t ni = 0;
    int timeout = max_wait_ms;
    int64_t now = ufo_time_mono_ms ();
    for (size_t i = 0; i < self->n; i++) {
        s_entry_t *e = &self->entries [i];
        if (!e->id)
            continue;
        if (e->kind == S_READER && ni < S_MAX_ITEMS) {
            items [ni] = (ufo_loop_item_t) { e->socket, e->fd, UFO_LOOP_IN, 0 };
            owner [ni++] = e->id;
        }
        else
        if (e->kind == S_TIMER) {
            int64_t wait = e->due - now;
            timeout = s_min_timeout (timeout, wait < 0 ? 0 : wait > INT_MAX ? INT_MAX : (int) wait);
        }
        else
        if (e->kind == S_SOURCE && e->source.items) {
            int t = -1;
            size_t got = e->source.items (e->arg, items + ni, S_MAX_ITEMS - ni, &t);
            if (got > S_MAX_ITEMS - ni)
                got = S_MAX_ITEMS - ni;
            for (size_t j = 0; j < got; j++)
                owner [ni + j] = e->id;
            ni += got;
            timeout = s_min_timeout (timeout, t);
        }
    }
    if (self->stop)
        timeout = 0;
    //  3. the poll
    zmq_pollitem_t zi [S_MAX_ITEMS];
    for (size_t i = 0; i < ni; i++)
        zi [i] = (zmq_pollitem_t) { items [i].socket ? zsock_resolve (items [i].socket) : NULL,
                                    items [i].socket ? 0 : items [i].fd, s_zevents (items [i].events), 0 };
    int rc = zmq_poll (zi, (int) ni, timeout);
    if (rc < 0 && zmq_errno () == ETERM) {
        self->depth--;
        return -1;
    }
    for (size_t i = 0; i < ni; i++)
        items [i].revents = rc > 0 ? s_revents (zi [i].revents) : 0;
    //  4. readers, sources, timers (looked up by id: callbacks may change the table)
    for (size_t i = 0; i < ni; ) {
        size_t j = i;
        while (j < ni && owner [j] == owner [i])
            j++;
        s_entry_t *e = s_find (self, owner [i]);
        if (e && e->kind == S_READER && (items [i].revents & (UFO_LOOP_IN | UFO_LOOP_ERR)))
            e->fn (self, e->arg);
        else
        if (e && e->kind == S_SOURCE && e->source.dispatch)
            e->source.dispatch (e->arg, items + i, j - i);
        i = j;
    }
    //  sources that added no items still get their dispatch
    nids = 0;
    for (size_t i = 0; i < self->n && nids < S_MAX_ITEMS; i++)
        if (self->entries [i].id && self->entries [i].kind == S_SOURCE && self->entries [i].source.dispatch) {
            bool polled = false;
            for (size_t k = 0; k < ni && !polled; k++)
                polled = owner [k] == self->entries [i].id;
            if (!polled)
                ids [nids++] = self->entries [i].id;
        }
    for (size_t k = 0; k < nids; k++) {
        s_entry_t *e = s_find (self, ids [k]);
        if (e)
            e->source.dispatch (e->arg, NULL, 0);
    }
    now = ufo_time_mono_ms ();
    nids = 0;
    for (size_t i = 0; i < self->n && nids < S_MAX_ITEMS; i++)
        if (self->entries [i].id && self->entries [i].kind == S_TIMER && self->entries [i].due <= now)
            ids [nids++] = self->entries [i].id;
    for (size_t k = 0; k < nids; k++) {
        s_entry_t *e = s_find (self, ids [k]);
        if (!e)
            continue;
        ufo_loop_fn *fn = e->fn;
        void *arg = e->arg;
        if (e->interval > 0)
            e->due = now + e->interval;
        else
            e->id = 0;                  //  one-shot: gone before its call
        fn (self, arg);
    }
    if (--self->depth == 0)
        s_compact (self);
    return 0;
}

int
ufo_loop_run (ufo_loop_t *self)
{
    assert (self);
    self->stop = false;
    while (!self->stop)
        if (ufo_loop_run_once (self, -1) < 0)
            return -1;
    return 0;
}

void
ufo_loop_stop (ufo_loop_t *self)
{
    self->stop = true;
}

bool
ufo_loop_stopped (ufo_loop_t *self)
{
    return self->stop;
}

static void
s_on_stop_fd (ufo_loop_t *loop, void *arg)
{
    int fd = (int) (intptr_t) arg;
    char buf [64];
    while (read (fd, buf, sizeof buf) > 0)
        ;
    ufo_loop_stop (loop);
}

int
ufo_loop_stop_on (ufo_loop_t *self, int fd)
{
    assert (fd >= 0);
    return ufo_loop_reader_add (self, NULL, fd, s_on_stop_fd, (void *) (intptr_t) fd);
}

uint64_t
ufo_loop_turns (ufo_loop_t *self)
{
    return self->turns;
}

//  --- Sources with {fd, events, revents} descriptors (LLM client, HTTP client, MCP) ------
//  ufo_llm_fd_t and ufo_http_fd_t have the same shape and bits as ufo_loop's; both are copied
//  through one triple type (memcpy: no aliasing between the two structs).

typedef struct {
    int fd;
    int events;
    int revents;
} s_fd_t;

_Static_assert (sizeof (s_fd_t) == sizeof (ufo_llm_fd_t) && sizeof (s_fd_t) == sizeof (ufo_http_fd_t),
                "descriptor triples differ in size");
_Static_assert (UFO_LLM_IN == UFO_LOOP_IN && UFO_LLM_OUT == UFO_LOOP_OUT && UFO_LLM_ERR == UFO_LOOP_ERR
             && UFO_HTTP_IN == UFO_LOOP_IN && UFO_HTTP_OUT == UFO_LOOP_OUT && UFO_HTTP_ERR == UFO_LOOP_ERR,
                "descriptor bits differ");

#define S_MAX_FDS 64

//  triples (n of them, n <= S_MAX_FDS) -> items; returns how many fit
static size_t
s_items_from (ufo_loop_item_t *items, size_t max, const void *triples, size_t n)
{
    s_fd_t fds [S_MAX_FDS];
    n = n > S_MAX_FDS ? S_MAX_FDS : n;
    n = n > max ? max : n;
    memcpy (fds, triples, n * sizeof *fds);
    for (size_t i = 0; i < n; i++)
        items [i] = (ufo_loop_item_t) { NULL, fds [i].fd, fds [i].events & (UFO_LOOP_IN | UFO_LOOP_OUT), 0 };
    return n;
}

//  items -> triples (n <= S_MAX_FDS); returns n
static size_t
s_items_to (void *triples, const ufo_loop_item_t *items, size_t n)
{
    s_fd_t fds [S_MAX_FDS];
    n = n > S_MAX_FDS ? S_MAX_FDS : n;
    for (size_t i = 0; i < n; i++)
        fds [i] = (s_fd_t) { items [i].fd, items [i].events, items [i].revents };
    memcpy (triples, fds, n * sizeof *fds);
    return n;
}

size_t
ufo_loop_items_from_http (ufo_loop_item_t *items, size_t max, const ufo_http_fd_t *fds, size_t n)
{
    return s_items_from (items, max, fds, n);
}

size_t
ufo_loop_items_to_http (ufo_http_fd_t *fds, const ufo_loop_item_t *items, size_t n)
{
    return s_items_to (fds, items, n);
}

static size_t
s_llm_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    ufo_llm_fd_t fds [S_MAX_FDS];
    size_t n = ufo_llm_fds ((ufo_llm_t *) arg, fds, S_MAX_FDS);
    *timeout_ms = ufo_llm_timeout ((ufo_llm_t *) arg);
    return s_items_from (items, max, fds, n);
}

static void
s_llm_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    ufo_llm_fd_t fds [S_MAX_FDS];
    n = s_items_to (fds, items, n);
    ufo_llm_process ((ufo_llm_t *) arg, fds, n);
}

int
ufo_loop_add_llm (ufo_loop_t *self, ufo_llm_t *llm)
{
    assert (self && llm);
    ufo_loop_source_t src = { NULL, s_llm_items, s_llm_dispatch };
    return ufo_loop_source_add (self, &src, llm);
}

static size_t
s_http_items (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms)
{
    ufo_http_fd_t fds [S_MAX_FDS];
    size_t n = ufo_http_fds ((ufo_http_t *) arg, fds, S_MAX_FDS);
    *timeout_ms = ufo_http_timeout ((ufo_http_t *) arg);
    return s_items_from (items, max, fds, n);
}

static void
s_http_dispatch (void *arg, ufo_loop_item_t *items, size_t n)
{
    ufo_http_fd_t fds [S_MAX_FDS];
    n = s_items_to (fds, items, n);
    ufo_http_process ((ufo_http_t *) arg, fds, n);
}

int
ufo_loop_add_http (ufo_loop_t *self, ufo_http_t *http)
{
    assert (self && http);
    ufo_loop_source_t src = { NULL, s_http_items, s_http_dispatch };
    return ufo_loop_source_add (self, &src, http);
}
