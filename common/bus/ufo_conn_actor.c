/*  ufo_conn_actor.c - a ufo_conn in a thread of its own (czmq actor), for callers without
    a loop: ufo_worker_new and ufo_tasks_new (the CLI, tools, tests). See dispatch_private.h. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_conn.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_loop.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"
#include "dispatch_private.h"
#include <czmq.h>

typedef struct {
    ufo_conn_config_t config;       //  strings copied into the owner's storage (s_args_t)
    int *connected;                 //  shared with the caller (atomic access)
} s_args_t;

typedef struct {
    zsock_t *pipe;
    ufo_conn_t *conn;
    ufo_loop_t *loop;
    int *connected;
    zlistx_t *backlog;              //  events that did not fit in the pipe yet (zframe_t *)
    bool stop;
} s_actor_t;

//  Sends backlogged events; true when the backlog is empty.
static bool
s_flush (s_actor_t *a)
{
    void *handle = zsock_resolve (a->pipe);
    zframe_t *f;
    while ((f = (zframe_t *) zlistx_first (a->backlog))) {
        if (zmq_send (handle, zframe_data (f), zframe_size (f), ZMQ_DONTWAIT) < 0)
            return false;
        zlistx_detach_cur (a->backlog);
        zframe_destroy (&f);
    }
    return true;
}

//  An event for the caller, one msgpack frame; never blocks (the backlog keeps the order).
static void
s_to_caller (s_actor_t *a, ufo_value_t **event_p)
{
    ufo_buf_t buf = { 0 };
    ufo_msgpack_append (&buf, *event_p);
    ufo_value_destroy (event_p);
    if (s_flush (a) && zmq_send (zsock_resolve (a->pipe), buf.data, buf.len, ZMQ_DONTWAIT) >= 0) {
        ufo_buf_free (&buf);
        return;
    }
    zlistx_add_end (a->backlog, zframe_new (buf.data, buf.len));
    ufo_buf_free (&buf);
}

static void
s_on_event (void *arg, ufo_value_t **event_p)
{
    s_actor_t *a = arg;
    const char *kind = ufo_value_map_str (*event_p, "kind", "");
    if (strcmp (kind, "connected") == 0)
        __atomic_store_n (a->connected, 1, __ATOMIC_RELEASE);
    else
    if (strcmp (kind, "disconnected") == 0)
        __atomic_store_n (a->connected, 0, __ATOMIC_RELEASE);
    s_to_caller (a, event_p);
}

//  The answer to a FETCH: {"kind": "fetch", "tag", "ok", "body"} (an error's body is
//  {"code", "message"}, as the broker's).
static void
s_on_fetch (void *arg, ufo_conn_reply_t *reply)
{
    char *tag = arg;
    s_actor_t *a = (s_actor_t *) *(void **) tag;
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "fetch");
    ufo_value_map_set_str (ev, "tag", tag + sizeof (void *));
    ufo_value_map_set_bool (ev, "ok", reply->ok);
    if (reply->ok)
        ufo_value_map_set (ev, "body", reply->body_p);
    else {
        ufo_value_t *body = ufo_value_new_map ();
        ufo_value_map_set_str (body, "code", ufo_errcode_name (reply->err.code));
        ufo_value_map_set_str (body, "message", reply->err.message);
        ufo_value_map_set (ev, "body", &body);
    }
    free (tag);
    s_to_caller (a, &ev);
}

//  A command from the caller: [verb, msgpack body].
static void
s_command (s_actor_t *a, const char *verb, ufo_value_t **body_p)
{
    ufo_value_t *body = *body_p;
    const char *task = ufo_value_map_str (body, "task", "");
    if (strcmp (verb, "PROGRESS") == 0) {
        ufo_value_t *payload = ufo_value_dup (ufo_value_map_get (body, "body"));
        ufo_conn_progress (a->conn, task, &payload);
    }
    else
    if (strcmp (verb, "COMPLETE") == 0) {
        ufo_value_t *result = ufo_value_dup (ufo_value_map_get (body, "result"));
        ufo_conn_complete (a->conn, task, ufo_value_map_str (body, "status", "done"), &result);
    }
    else
    if (strcmp (verb, "SUBMIT") == 0) {
        ufo_error_t err;
        if (ufo_conn_submit (a->conn, body_p, NULL, &err) < 0)       //  checked by the caller already
            ufo_warn ("submit: %s", err.message);
    }
    else
    if (strcmp (verb, "INPUT") == 0) {
        ufo_value_t *payload = ufo_value_dup (ufo_value_map_get (body, "body"));
        ufo_conn_input (a->conn, task, &payload);
    }
    else
    if (strcmp (verb, "CANCEL") == 0)
        ufo_conn_cancel (a->conn, task);
    else
    if (strcmp (verb, "FETCH") == 0) {
        const char *tag = ufo_value_map_str (body, "tag", "");
        char *arg = ufo_malloc (sizeof (void *) + strlen (tag) + 1);
        *(void **) arg = a;
        strcpy (arg + sizeof (void *), tag);
        ufo_conn_fetch (a->conn, task, (int) ufo_value_map_int (body, "timeout_ms", 0), s_on_fetch, arg);
    }
}

static void
s_on_pipe (ufo_loop_t *loop, void *arg)
{
    UFO_UNUSED (loop);
    s_actor_t *a = arg;
    for (int k = 0; k < 1000 && !a->stop; k++) {
        zmsg_t *msg = zmsg_recv_nowait (a->pipe);
        if (!msg)
            break;
        char *verb = zmsg_popstr (msg);
        zframe_t *frame = zmsg_pop (msg);
        ufo_value_t *body = frame ? ufo_msgpack_decode (zframe_data (frame), zframe_size (frame), NULL, NULL) : NULL;
        zframe_destroy (&frame);
        if (verb && strcmp (verb, "$TERM") == 0) {
            a->stop = true;
            ufo_loop_stop (a->loop);
        }
        else
        if (verb)
            s_command (a, verb, &body);
        ufo_value_destroy (&body);
        free (verb);
        zmsg_destroy (&msg);
    }
}

static void
s_actor (zsock_t *pipe, void *args)
{
    s_args_t *in = args;
    s_actor_t a = { .pipe = pipe, .connected = in->connected };
    a.loop = ufo_loop_new ();
    a.backlog = zlistx_new ();
    ufo_error_t err;
    a.conn = ufo_conn_new (&in->config, a.loop, s_on_event, &a, &err);
    zsock_signal (pipe, 0);
    if (a.conn) {
        ufo_loop_reader_add (a.loop, pipe, -1, s_on_pipe, &a);
        while (!a.stop)
            //  while the caller is behind, try the backlog again soon
            if (ufo_loop_run_once (a.loop, s_flush (&a) ? -1 : 5) < 0)
                break;
        ufo_conn_destroy (&a.conn);     //  leaves, flushes what is queued (bounded)
    }
    else {
        ufo_warn ("%s", err.message);
        //  nothing to serve: wait for $TERM
        for (char *verb; (verb = zstr_recv (pipe)); free (verb))
            if (strcmp (verb, "$TERM") == 0) {
                free (verb);
                break;
            }
    }
    s_flush (&a);
    for (zframe_t *f = (zframe_t *) zlistx_first (a.backlog); f; f = (zframe_t *) zlistx_next (a.backlog))
        zframe_destroy (&f);
    zlistx_destroy (&a.backlog);
    ufo_loop_destroy (&a.loop);
}

void *
ufo_conn_actor_new (const ufo_conn_config_t *config, int *connected)
{
    s_args_t args = { *config, connected };
    //  zactor_new returns once the actor signalled, after ufo_conn_new copied everything
    return zactor_new (s_actor, &args);
}

ufo_value_t *
ufo_conn_actor_next (void *actor, int timeout_ms)
{
    void *handle = zsock_resolve (actor);
    zmq_pollitem_t item = { handle, 0, ZMQ_POLLIN, 0 };
    if (zmq_poll (&item, 1, timeout_ms) <= 0 || !(item.revents & ZMQ_POLLIN))
        return NULL;
    zmq_msg_t frame;
    zmq_msg_init (&frame);
    if (zmq_msg_recv (&frame, handle, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close (&frame);
        return NULL;
    }
    ufo_value_t *event = ufo_msgpack_decode (zmq_msg_data (&frame), zmq_msg_size (&frame), NULL, NULL);
    zmq_msg_close (&frame);
    return event;
}

void
ufo_conn_actor_command (void *actor, const char *verb, ufo_value_t **body_p)
{
    ufo_buf_t buf = { 0 };
    if (body_p && *body_p)
        ufo_msgpack_append (&buf, *body_p);
    else
        ufo_buf_putc (&buf, (char) 0xc0);
    if (body_p)
        ufo_value_destroy (body_p);
    zmsg_t *msg = zmsg_new ();
    zmsg_addstr (msg, verb);
    zmsg_addmem (msg, buf.data, buf.len);
    ufo_buf_free (&buf);
    zmsg_send (&msg, actor);
}

void
ufo_conn_actor_destroy (void **actor_p)
{
    zactor_destroy ((zactor_t **) actor_p);
}

int
ufo_conn_actor_fd (void *actor)
{
    return zsock_fd (actor);
}
