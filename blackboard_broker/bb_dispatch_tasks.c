/*  bb_dispatch_tasks.c - the dispatcher's task table (hashed by id and by idempotency key),
    service queues sorted by submission order, finished-task retention, log replay and
    checkpoints. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_msgpack.h"
#include "ufo_task_proto.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_bb_proto.h"
#include "bb_dispatch_int.h"

static const char *s_state_names [] = { "queued", "running", "done", "failed", "cancelled" };

const char *
bbd_state_name (int state)
{
    return state >= 0 && state < (int) UFO_ARRAY_SIZE (s_state_names) ? s_state_names [state] : "unknown";
}

int
bbd_state_parse (const char *name)
{
    for (int i = 0; name && i < (int) UFO_ARRAY_SIZE (s_state_names); i++)
        if (strcmp (name, s_state_names [i]) == 0)
            return i;
    return -1;
}

//  --- Hash tables -----------------------------------------------------------------

static size_t
s_hash (const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (uint8_t) *s) * 1099511628211ULL;
    return (size_t) h;
}

//  Idempotency keys are scoped to the submitter's identity: the hash covers both.
static size_t
s_idem_hash (const char *scope, const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *scope; scope++)
        h = (h ^ (uint8_t) *scope) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (; *key; key++)
        h = (h ^ (uint8_t) *key) * 1099511628211ULL;
    return (size_t) h;
}

static void
s_rehash (bb_dispatch_t *self)
{
    size_t n = self->nbuckets ? self->nbuckets * 2 : 1024;
    s_task_t **by_id = ufo_calloc (n, sizeof *by_id);
    s_task_t **by_idem = ufo_calloc (n, sizeof *by_idem);
    for (size_t b = 0; b < self->nbuckets; b++) {
        for (s_task_t *t = self->by_id [b], *next; t; t = next) {
            next = t->hnext;
            size_t h = s_hash (t->id) & (n - 1);
            t->hnext = by_id [h];
            by_id [h] = t;
        }
        for (s_task_t *t = self->by_idem [b], *next; t; t = next) {
            next = t->inext;
            size_t h = s_idem_hash (t->scope, t->idem) & (n - 1);
            t->inext = by_idem [h];
            by_idem [h] = t;
        }
    }
    free (self->by_id);
    free (self->by_idem);
    self->by_id = by_id;
    self->by_idem = by_idem;
    self->nbuckets = n;
}

s_task_t *
bbd_task_find (bb_dispatch_t *self, const char *id)
{
    if (!self->nbuckets)
        return NULL;
    for (s_task_t *t = self->by_id [s_hash (id) & (self->nbuckets - 1)]; t; t = t->hnext)
        if (strcmp (t->id, id) == 0)
            return t;
    return NULL;
}

s_task_t *
bbd_task_find_idem (bb_dispatch_t *self, const char *scope, const char *key)
{
    if (!self->nbuckets)
        return NULL;
    for (s_task_t *t = self->by_idem [s_idem_hash (scope, key) & (self->nbuckets - 1)]; t; t = t->inext)
        if (strcmp (t->idem, key) == 0 && strcmp (t->scope, scope) == 0)
            return t;
    return NULL;
}

//  Creates a task with this id (not yet in any queue); the caller fills it in, then
//  indexes its idempotency key with bbd_index_idem.
s_task_t *
bbd_task_add (bb_dispatch_t *self, const char *id)
{
    if (self->ntasks + 1 > self->nbuckets)
        s_rehash (self);
    s_task_t *t = ufo_calloc (1, sizeof *t);
    snprintf (t->id, sizeof t->id, "%s", id);
    size_t h = s_hash (t->id) & (self->nbuckets - 1);
    t->hnext = self->by_id [h];
    self->by_id [h] = t;
    self->ntasks++;
    return t;
}

//  Indexes a task's idempotency key (call once has_idem and idem are set).
void
bbd_index_idem (bb_dispatch_t *self, s_task_t *t)
{
    if (!t->has_idem || bbd_task_find_idem (self, t->scope, t->idem))
        return;
    size_t h = s_idem_hash (t->scope, t->idem) & (self->nbuckets - 1);
    t->inext = self->by_idem [h];
    self->by_idem [h] = t;
}

static void
s_task_remove (bb_dispatch_t *self, s_task_t *t)
{
    s_task_t **pp = &self->by_id [s_hash (t->id) & (self->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->hnext)
        if (*pp == t) {
            *pp = t->hnext;
            break;
        }
    if (t->has_idem) {
        pp = &self->by_idem [s_idem_hash (t->scope, t->idem) & (self->nbuckets - 1)];
        for (; *pp; pp = &(*pp)->inext)
            if (*pp == t) {
                *pp = t->inext;
                break;
            }
    }
    self->ntasks--;
    ufo_value_destroy (&t->body);
    ufo_value_destroy (&t->result);
    free (t);
}

void
bbd_task_each (bb_dispatch_t *self, void (*fn) (bb_dispatch_t *, s_task_t *, void *), void *arg)
{
    for (size_t b = 0; b < self->nbuckets; b++)
        for (s_task_t *t = self->by_id [b], *next; t; t = next) {
            next = t->hnext;
            fn (self, t, arg);
        }
}

void
bbd_task_free_all (bb_dispatch_t *self)
{
    for (size_t b = 0; b < self->nbuckets; b++)
        for (s_task_t *t = self->by_id [b], *next; t; t = next) {
            next = t->hnext;
            ufo_value_destroy (&t->body);
            ufo_value_destroy (&t->result);
            free (t);
        }
    free (self->by_id);
    free (self->by_idem);
    self->by_id = self->by_idem = NULL;
    self->nbuckets = self->ntasks = 0;
    self->fin_head = self->fin_tail = NULL;
    self->nfinished = 0;
    for (size_t i = 0; i < self->nservices; i++) {
        self->services [i]->head = self->services [i]->tail = NULL;
        self->services [i]->queued = self->services [i]->running = 0;
    }
}

//  --- Services and queues ---------------------------------------------------------

s_service_t *
bbd_service (bb_dispatch_t *self, const char *name, bool create)
{
    for (size_t i = 0; i < self->nservices; i++)
        if (strcmp (self->services [i]->name, name) == 0)
            return self->services [i];
    if (!create)
        return NULL;
    if (self->nservices == self->cap_services) {
        self->cap_services = self->cap_services ? self->cap_services * 2 : 16;
        self->services = ufo_realloc (self->services, self->cap_services * sizeof *self->services);
    }
    s_service_t *svc = ufo_calloc (1, sizeof *svc);
    snprintf (svc->name, sizeof svc->name, "%s", name);
    self->services [self->nservices++] = svc;
    return svc;
}

//  Inserts a queued task in its service queue, keeping submission order (a requeued task
//  goes back ahead of younger ones).
void
bbd_enqueue (bb_dispatch_t *self, s_task_t *t)
{
    s_service_t *svc = bbd_service (self, t->service, true);
    s_task_t *after = svc->tail;
    while (after && after->order > t->order)
        after = after->qprev;
    t->svc = svc;
    t->qprev = after;
    t->qnext = after ? after->qnext : svc->head;
    if (t->qnext)
        t->qnext->qprev = t;
    else
        svc->tail = t;
    if (after)
        after->qnext = t;
    else
        svc->head = t;
    svc->queued++;
}

void
bbd_dequeue (s_task_t *t)
{
    s_service_t *svc = t->svc;
    if (!svc)
        return;
    if (t->qprev)
        t->qprev->qnext = t->qnext;
    else
        svc->head = t->qnext;
    if (t->qnext)
        t->qnext->qprev = t->qprev;
    else
        svc->tail = t->qprev;
    t->qprev = t->qnext = NULL;
    t->svc = NULL;
    svc->queued--;
}

void
bbd_finished_push (bb_dispatch_t *self, s_task_t *t)
{
    t->fprev = self->fin_tail;
    t->fnext = NULL;
    if (self->fin_tail)
        self->fin_tail->fnext = t;
    else
        self->fin_head = t;
    self->fin_tail = t;
    self->nfinished++;
}

//  Forgets the oldest finished tasks beyond the retention limit.
void
bbd_evict (bb_dispatch_t *self)
{
    size_t keep = self->cfg.keep_finished ? self->cfg.keep_finished : 10000;
    while (self->nfinished > keep && self->fin_head) {
        s_task_t *t = self->fin_head;
        self->fin_head = t->fnext;
        if (self->fin_head)
            self->fin_head->fprev = NULL;
        else
            self->fin_tail = NULL;
        self->nfinished--;
        s_task_remove (self, t);
    }
}

//  --- Records -----------------------------------------------------------------------

void
bbd_task_record (const s_task_t *t, ufo_value_t *map, bool full)
{
    ufo_value_map_set_str (map, "task", t->id);
    ufo_value_map_set_str (map, "service", t->service);
    if (t->has_device)
        ufo_value_map_set_str (map, "device", t->device);
    else
        ufo_value_map_set_null (map, "device");
    ufo_value_map_set_str (map, "session", t->session);
    ufo_value_map_set_str (map, "submitter", t->submitter);
    ufo_value_map_set_str (map, "client", t->client);
    if (t->has_idem)
        ufo_value_map_set_str (map, "idempotency_key", t->idem);
    else
        ufo_value_map_set_null (map, "idempotency_key");
    ufo_value_map_set_str (map, "scope", t->scope);
    ufo_value_map_set_int (map, "max_attempts", t->max_attempts);
    ufo_value_map_set_int (map, "deadline_us", t->deadline_us);
    ufo_value_map_set_int (map, "submitted_us", t->submitted_us);
    if (t->body)
        ufo_value_map_set_copy (map, "body", t->body);
    else
        ufo_value_map_set_null (map, "body");
    if (!full)
        return;
    ufo_value_map_set_str (map, "state", bbd_state_name (t->state));
    ufo_value_map_set_bool (map, "bound", t->bound);
    ufo_value_map_set_int (map, "attempts", t->attempts);
    ufo_value_map_set_int (map, "order", (int64_t) t->order);
    ufo_value_map_set_str (map, "worker", t->worker);
    ufo_value_map_set_str (map, "worker_name", t->worker_name);
    ufo_value_map_set_str (map, "reason", t->reason);
    if (t->result)
        ufo_value_map_set_copy (map, "result", t->result);
    else
        ufo_value_map_set_null (map, "result");
}

static void
s_copy_str (char *out, size_t size, const ufo_value_t *map, const char *key)
{
    const char *s = ufo_value_map_str (map, key, "");
    snprintf (out, size, "%s", s);
}

//  Creates (or refreshes) a task from a task.submitted record or checkpoint entry.
static s_task_t *
s_task_from_record (bb_dispatch_t *self, ufo_value_t *map, ufo_error_t *err)
{
    const char *id = ufo_value_map_str (map, "task", NULL);
    const char *service = ufo_value_map_str (map, "service", NULL);
    if (!ufo_task_id_valid (id) || !ufo_task_service_valid (service, false)) {
        ufo_error_set (err, UFO_E_SYNTAX, "dispatch record without a valid task id or service");
        return NULL;
    }
    s_task_t *t = bbd_task_find (self, id);
    if (t)
        return t;               //  submitted twice in the log cannot happen; keep the first
    t = bbd_task_add (self, id);
    s_copy_str (t->service, sizeof t->service, map, "service");
    const char *device = ufo_value_map_str (map, "device", NULL);
    t->has_device = device && *device;
    s_copy_str (t->device, sizeof t->device, map, "device");
    s_copy_str (t->session, sizeof t->session, map, "session");
    s_copy_str (t->submitter, sizeof t->submitter, map, "submitter");
    s_copy_str (t->client, sizeof t->client, map, "client");
    const char *idem = ufo_value_map_str (map, "idempotency_key", NULL);
    t->has_idem = idem && *idem;
    s_copy_str (t->idem, sizeof t->idem, map, "idempotency_key");
    s_copy_str (t->scope, sizeof t->scope, map, "scope");
    t->max_attempts = ufo_value_map_int (map, "max_attempts", 1);
    if (t->max_attempts < 1)
        t->max_attempts = 1;
    t->deadline_us = ufo_value_map_int (map, "deadline_us", 0);
    t->submitted_us = ufo_value_map_int (map, "submitted_us", 0);
    const ufo_value_t *body = ufo_value_map_get (map, "body");
    t->body = body ? ufo_value_dup (body) : ufo_value_new_null ();
    t->state = S_QUEUED;
    t->order = ++self->order;
    bbd_index_idem (self, t);
    return t;
}

static void
s_replay_end (bb_dispatch_t *self, s_task_t *t, int state, ufo_value_t *body)
{
    if (t->state >= S_DONE)
        return;
    bbd_dequeue (t);
    t->state = state;
    s_copy_str (t->reason, sizeof t->reason, body, "reason");
    const ufo_value_t *result = ufo_value_map_get (body, "result");
    ufo_value_destroy (&t->result);
    t->result = result ? ufo_value_dup (result) : NULL;
    ufo_value_destroy (&t->body);
    int64_t attempts = ufo_value_map_int (body, "attempts", t->attempts);
    t->attempts = attempts;
    bbd_finished_push (self, t);
}

static int
s_replay_checkpoint (bb_dispatch_t *self, ufo_value_t *body, ufo_error_t *err)
{
    bbd_task_free_all (self);
    self->order = 0;
    const ufo_value_t *tasks = ufo_value_map_get (body, "tasks");
    //  entries are in submission order
    for (size_t i = 0; i < ufo_value_size (tasks); i++) {
        ufo_value_t *entry = ufo_value_list_at (tasks, i);
        s_task_t *t = s_task_from_record (self, entry, err);
        if (!t)
            return -1;
        int state = bbd_state_parse (ufo_value_map_str (entry, "state", ""));
        t->attempts = ufo_value_map_int (entry, "attempts", 0);
        t->bound = t->has_device && ufo_value_map_bool (entry, "bound", false);
        s_copy_str (t->worker, sizeof t->worker, entry, "worker");
        s_copy_str (t->worker_name, sizeof t->worker_name, entry, "worker_name");
        if (state == S_QUEUED)
            bbd_enqueue (self, t);
        else
        if (state == S_RUNNING)
            t->state = S_RUNNING;       //  requeued by the first tick
        else
        if (state >= S_DONE)
            s_replay_end (self, t, state, entry);
        else
            return ufo_error_set (err, UFO_E_SYNTAX, "checkpoint entry %zu has no valid state", i);
    }
    self->last_seq = (uint64_t) ufo_value_map_int (body, "last", 0);
    return 0;
}

int
bb_dispatch_replay (bb_dispatch_t *self, const void *payload, size_t len, uint64_t *seq_p,
                    ufo_error_t *err)
{
    *seq_p = 0;
    ufo_msg_limits_t limits = { len + 1, 64 };
    ufo_msg_t *msg = ufo_msg_decode (payload, len, &limits, err);
    if (!msg)
        return -1;
    const char *type = ufo_msg_type (msg);
    ufo_value_t *body = ufo_msg_body (msg);
    int rc = 0;
    if (strcmp (type, "dispatch.checkpoint") == 0) {
        rc = s_replay_checkpoint (self, body, err);
        ufo_msg_destroy (&msg);
        return rc;
    }
    int64_t seq = ufo_value_map_int (body, "seq", -1);
    if (seq <= 0) {
        ufo_msg_destroy (&msg);
        return ufo_error_set (err, UFO_E_SYNTAX, "dispatch record '%s' lacks a valid seq", type);
    }
    *seq_p = (uint64_t) seq;
    if ((uint64_t) seq <= self->last_seq) {
        //  dispatch records follow each other in seq order: this one was replayed already
        ufo_warn ("log record '%s' of dispatch seq %" PRId64 " repeats a record already replayed (a duplicated "
                  "record, e.g. appended twice at the tail): skipped", type, seq);
        ufo_msg_destroy (&msg);
        return 0;
    }
    self->last_seq = (uint64_t) seq;
    const char *id = ufo_value_map_str (body, "task", "");
    s_task_t *t = strncmp (type, "task.", 5) == 0 && strcmp (type, "task.submitted") != 0
                ? bbd_task_find (self, id) : NULL;
    if (strcmp (type, "task.submitted") == 0) {
        s_task_t *nt = s_task_from_record (self, body, err);
        if (!nt)
            rc = -1;
        else
        if (nt->state == S_QUEUED && !nt->svc)
            bbd_enqueue (self, nt);
    }
    else
    if (!t)
        ;                           //  worker events; events of tasks forgotten since
    else
    if (strcmp (type, "task.assigned") == 0) {
        bbd_dequeue (t);
        t->state = S_RUNNING;
        t->attempts = ufo_value_map_int (body, "attempt", t->attempts + 1);
        s_copy_str (t->worker, sizeof t->worker, body, "worker");
        s_copy_str (t->worker_name, sizeof t->worker_name, body, "worker_name");
        const char *device = ufo_value_map_str (body, "device", NULL);
        if (!t->has_device && device && *device) {         //  bound where it started
            snprintf (t->device, sizeof t->device, "%s", device);
            t->has_device = t->bound = true;
        }
    }
    else
    if (strcmp (type, "task.requeued") == 0) {
        const ufo_value_t *device = ufo_value_map_get (body, "device");
        if (t->bound && device && ufo_value_type (device) == UFO_TNULL) {
            t->bound = t->has_device = false;           //  unbound: it never started there
            t->device [0] = 0;
        }
        if (t->state == S_RUNNING) {
            t->state = S_QUEUED;
            bbd_enqueue (self, t);
        }
    }
    else
    if (strcmp (type, "task.cancel_requested") == 0)
        t->cancel_requested = true;
    else
    if (strcmp (type, "task.done") == 0)
        s_replay_end (self, t, S_DONE, body);
    else
    if (strcmp (type, "task.failed") == 0)
        s_replay_end (self, t, S_FAILED, body);
    else
    if (strcmp (type, "task.cancelled") == 0)
        s_replay_end (self, t, S_CANCELLED, body);
    ufo_msg_destroy (&msg);
    if (rc == 0)
        bbd_evict (self);
    return rc;
}

static void
s_collect (bb_dispatch_t *self, s_task_t *t, void *arg)
{
    UFO_UNUSED (self);
    s_task_t ***cursor = (s_task_t ***) arg;
    *(*cursor)++ = t;
}

static int
s_by_order (const void *a, const void *b)
{
    const s_task_t *x = *(s_task_t *const *) a, *y = *(s_task_t *const *) b;
    return x->order < y->order ? -1 : x->order > y->order;
}

void
bb_dispatch_checkpoint (bb_dispatch_t *self, ufo_buf_t *buf)
{
    s_task_t **all = ufo_malloc ((self->ntasks + 1) * sizeof *all);
    s_task_t **cursor = all;
    bbd_task_each (self, s_collect, &cursor);
    size_t n = (size_t) (cursor - all);
    qsort (all, n, sizeof *all, s_by_order);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_int (body, "last", (int64_t) self->last_seq);
    ufo_value_t *list = ufo_value_new_list ();
    for (size_t i = 0; i < n; i++) {
        ufo_value_t *entry = ufo_value_new_map ();
        bbd_task_record (all [i], entry, true);
        ufo_value_list_push (list, &entry);
    }
    ufo_value_map_set (body, "tasks", &list);
    free (all);
    char id [33];
    ufo_msg_new_id (id);
    ufo_bb_envelope_head (buf, "dispatch.checkpoint", id, "ufo-broker");
    ufo_msgpack_append (buf, body);
    ufo_value_destroy (&body);
}
