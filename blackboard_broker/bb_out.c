/*  bb_out.c - the broker's output queue: replies and bus events wait here, in order, until
    the durability job they depend on is done (see bb_server.h), then go to libzmq. */
#include "ufo_prelude.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "bb_server_int.h"
#include <czmq.h>

bb_out_t *
bb_out_new (bb_server_t *self, bool to_bus, uint64_t ticket, bool burst)
{
    if (self->out_tail == self->out_cap) {
        if (self->out_head > 0) {
            memmove (self->out, self->out + self->out_head,
                     (self->out_tail - self->out_head) * sizeof *self->out);
            self->out_tail -= self->out_head;
            self->out_head = 0;
        }
        if (self->out_tail == self->out_cap) {
            self->out_cap = self->out_cap ? self->out_cap * 2 : 1024;
            self->out = ufo_realloc (self->out, self->out_cap * sizeof *self->out);
        }
    }
    bb_out_t *o = &self->out [self->out_tail++];
    memset (o, 0, offsetof (bb_out_t, head));
    o->ticket = ticket;
    o->burst = burst;
    o->to_bus = to_bus;
    o->inl_used = false;
    o->data = o->extra = o->fail = NULL;
    o->len = o->extra_len = o->fail_len = 0;
    o->charge = o->extra_charge = NULL;
    return o;
}

char *
bb_out_copy (const void *data, size_t len)
{
    char *copy = ufo_malloc (len ? len : 1);
    memcpy (copy, data, len);
    return copy;
}

void
bb_out_set_data (bb_out_t *o, const void *data, size_t len)
{
    o->len = len;
    o->inl_used = len <= BB_OUT_INLINE;
    if (o->inl_used) {
        if (len)
            memcpy (o->inl, data, len);
    }
    else
        o->data = bb_out_copy (data, len);
}

//  Sends one frame, handing buf to libzmq (it frees it, and releases the peer's charge for
//  it, when it is done with it: bb_peers_free). more: more frames follow.
static void
s_send_owned (void *sock, char *buf, size_t len, bool more, bb_charge_t *charge)
{
    zmq_msg_t msg;
    if (zmq_msg_init_data (&msg, buf, len, bb_peers_free, charge) != 0) {
        bb_peers_free (buf, charge);
        return;
    }
    if (zmq_msg_send (&msg, sock, more ? ZMQ_SNDMORE : 0) < 0)
        zmq_msg_close (&msg);
}

void
bb_out_charge (bb_server_t *self, bb_out_t *o)
{
    if (o->to_bus)
        return;
    if (!o->inl_used && o->data && !o->charge)
        o->charge = bb_peers_charge (self->peers, o->head, o->head_len, o->len);
    if (o->extra && !o->extra_charge)
        o->extra_charge = bb_peers_charge (self->peers, o->head, o->head_len, o->extra_len);
}

void
bb_out_release (bb_out_t *o)
{
    free (o->data);
    free (o->extra);
    free (o->fail);
    bb_peers_release (o->charge);
    bb_peers_release (o->extra_charge);
    o->data = o->extra = o->fail = NULL;
    o->charge = o->extra_charge = NULL;
}

//  Sends one queued message (its buffers go to libzmq). failed_ticket: as for bb_out_flush.
static void
s_send (bb_server_t *self, bb_out_t *o, void *router, void *xpub, uint64_t failed_ticket)
{
    void *sock = o->to_bus ? xpub : router;
    if (o->fail && o->ticket == failed_ticket) {
        free (o->data);
        free (o->extra);
        bb_peers_release (o->charge);
        bb_peers_release (o->extra_charge);
        o->charge = o->extra_charge = NULL;
        o->data = o->fail;
        o->len = o->fail_len;
        o->extra = NULL;
        o->inl_used = false;
    }
    else
        free (o->fail);
    o->fail = NULL;
    if (!o->to_bus)
        self->replies_sent++;
    zmq_send (sock, o->head, o->head_len, ZMQ_SNDMORE);
    if (o->delim)
        zmq_send (sock, "", 0, ZMQ_SNDMORE);
    if (o->inl_used)
        zmq_send (sock, o->inl, o->len, o->extra ? ZMQ_SNDMORE : 0);
    else
        s_send_owned (sock, o->data, o->len, o->extra != NULL, o->charge);
    if (o->extra)
        s_send_owned (sock, o->extra, o->extra_len, false, o->extra_charge);
    o->data = o->extra = NULL;
    o->charge = o->extra_charge = NULL;
}

//  Sends queued messages whose durability job is done, in order. failed_ticket: a job that
//  failed (its alternative message is sent instead), or 0.
void
bb_out_flush (bb_server_t *self, uint64_t failed_ticket)
{
    void *router = zsock_resolve (self->router);
    void *xpub = zsock_resolve (self->xpub);
    bool subscriptions_read = false;
    while (self->out_head < self->out_tail) {
        bb_out_t *o = &self->out [self->out_head];
        if (o->burst || o->ticket > self->done_ticket)
            break;
        if (o->to_bus && !subscriptions_read) {
            bb_server_subscriptions (self);     //  new subscribers see what follows
            subscriptions_read = true;
        }
        s_send (self, o, router, xpub, failed_ticket);
        self->out_head++;
    }
    if (self->out_head == self->out_tail)
        self->out_head = self->out_tail = 0;
}

void
bb_out_hold (bb_server_t *self, bool burst_only)
{
    size_t keep = self->out_head;
    for (size_t i = self->out_head; i < self->out_tail; i++) {
        bb_out_t *o = &self->out [i];
        if (burst_only && !o->burst) {
            self->out [keep++] = *o;
            continue;
        }
        if (self->nheld == self->cap_held) {
            self->cap_held = self->cap_held ? self->cap_held * 2 : 64;
            self->held = ufo_realloc (self->held, self->cap_held * sizeof *self->held);
        }
        o->burst = false;
        o->ticket = 0;
        self->held [self->nheld++] = *o;
    }
    self->out_tail = keep;
    if (self->out_head == self->out_tail)
        self->out_head = self->out_tail = 0;
}

void
bb_out_release_held (bb_server_t *self, bool send)
{
    void *router = send ? zsock_resolve (self->router) : NULL;
    void *xpub = send ? zsock_resolve (self->xpub) : NULL;
    if (send)
        bb_server_subscriptions (self);
    for (size_t i = 0; i < self->nheld; i++) {
        if (send)
            s_send (self, &self->held [i], router, xpub, 0);
        else
            bb_out_release (&self->held [i]);
    }
    self->nheld = 0;
}

//  --- Replies -------------------------------------------------------------------

//  Queues a reply: the request's route, then the envelope in buf (copied).
bb_out_t *
bb_out_reply (bb_server_t *self, const bb_route_t *route, ufo_buf_t *buf, uint64_t ticket, bool burst)
{
    bb_out_t *o = bb_out_new (self, false, ticket, burst);
    o->head_len = (uint8_t) route->id_len;
    memcpy (o->head, route->id, route->id_len);
    o->delim = route->delim;
    bb_out_set_data (o, buf->data, buf->len);
    bb_out_charge (self, o);
    return o;
}

void
bb_out_reply_error (bb_server_t *self, const bb_route_t *route, const char *id, const char *what, int code,
               const char *message)
{
    self->errors++;
    ufo_warn ("request %s%s%s rejected: %s: %s", what ? what : "", id && *id ? " id=" : "",
              id && *id ? id : "", ufo_errcode_name (code), message);
    ufo_buf_reset (&self->scratch);
    ufo_bb_encode_error (&self->scratch, id, code, message);
    //  Errors queue like everything else, so replies keep their order.
    bb_out_reply (self, route, &self->scratch, 0, true);
}

void
bb_out_reply_ok (bb_server_t *self, const bb_route_t *route, const char *id, ufo_value_t **body_p)
{
    ufo_buf_reset (&self->scratch);
    ufo_bb_encode_ok (&self->scratch, id, body_p);
    bb_out_reply (self, route, &self->scratch, 0, true);
}
