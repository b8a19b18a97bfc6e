/*  ufo_test_proxy.c - a proxy between agents and the broker's command endpoint, for tests
    that need a slow blackboard reply or the number of connections a process opens.

    ufo-test-proxy --front EP --back EP [--prefix bb.] [--hold-file PATH] [--fail-prefix T]
                   --stats PATH

    Binds a ROUTER on --front; every peer that connects gets a DEALER of its own to --back
    with the peer's routing id, so the broker sees each agent as it would without the proxy.
    Frames go through unchanged. While PATH (--hold-file) exists, the replies to requests
    whose envelope type starts with --prefix (default "bb.") are held back; every other
    message (heartbeats, tasks, cancels) passes at once. When the file goes, the held
    replies are sent, in order. Requests whose type starts with --fail-prefix (e.g. bb.add)
    are not passed on: the proxy answers them with an error reply (code "unavailable"), as a
    broker that cannot write would. --stats is rewritten on every change:
      "connections N\nheld N\nreleased N\n"
    connections: accepted front connections now open (ZeroMQ socket monitor), held: replies
    held now, released: replies held and then sent. SIGTERM ends it. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include <czmq.h>

#define S_MAX_PEERS 64

typedef struct {
    zframe_t *id;                   //  the peer's routing id
    zsock_t *back;
    zlistx_t *held_ids;             //  envelope ids of requests whose replies are to be held (char *)
} s_peer_t;

static s_peer_t s_peers [S_MAX_PEERS];
static size_t s_npeers;
static int s_connections;
static size_t s_held_total, s_released;
static zlistx_t *s_held;            //  held replies: zmsg_t * with the peer id first

static void
s_stats (const char *path)
{
    char tmp [1100];
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen (tmp, "w");
    if (!f)
        return;
    fprintf (f, "connections %d\nheld %zu\nreleased %zu\n", s_connections, zlistx_size (s_held), s_released);
    fclose (f);
    rename (tmp, path);
}

static s_peer_t *
s_peer (zframe_t *id, const char *back)
{
    for (size_t i = 0; i < s_npeers; i++)
        if (zframe_eq (s_peers [i].id, id))
            return &s_peers [i];
    if (s_npeers == S_MAX_PEERS)
        return NULL;
    s_peer_t *p = &s_peers [s_npeers++];
    p->id = zframe_dup (id);
    p->back = zsock_new (ZMQ_DEALER);
    zsock_set_linger (p->back, 0);
    zmq_setsockopt (zsock_resolve (p->back), ZMQ_ROUTING_ID, zframe_data (id), zframe_size (id));
    zsock_connect (p->back, "%s", back);
    p->held_ids = zlistx_new ();
    zlistx_set_destructor (p->held_ids, (czmq_destructor *) zstr_free);
    return p;
}

//  The envelope head of a frame (type and id), or false.
static bool
s_head (zframe_t *frame, ufo_msg_head_t *head)
{
    size_t off;
    return frame && ufo_msg_decode_head (zframe_data (frame), zframe_size (frame), NULL, head, &off, NULL) == 0;
}

int
main (int argc, char **argv)
{
    const char *front_ep = NULL, *back_ep = NULL, *prefix = "bb.", *hold = NULL, *stats = NULL, *fail = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp (argv [i], "--front")) front_ep = argv [i + 1];
        else if (!strcmp (argv [i], "--back")) back_ep = argv [i + 1];
        else if (!strcmp (argv [i], "--prefix")) prefix = argv [i + 1];
        else if (!strcmp (argv [i], "--hold-file")) hold = argv [i + 1];
        else if (!strcmp (argv [i], "--stats")) stats = argv [i + 1];
        else if (!strcmp (argv [i], "--fail-prefix")) fail = argv [i + 1];
    }
    if (!front_ep || !back_ep || !stats) {
        fprintf (stderr, "usage: ufo-test-proxy --front EP --back EP [--prefix P] [--hold-file F] --stats F\n");
        return 2;
    }
    zsys_handler_set (NULL);
    zsock_t *front = zsock_new (ZMQ_ROUTER);
    zsock_set_linger (front, 0);
    if (zsock_bind (front, "%s", front_ep) < 0) {
        fprintf (stderr, "cannot bind %s\n", front_ep);
        return 2;
    }
    char monitor_ep [64];
    snprintf (monitor_ep, sizeof monitor_ep, "inproc://proxy-monitor-%d", (int) getpid ());
    zmq_socket_monitor (zsock_resolve (front), monitor_ep, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED);
    void *monitor = zmq_socket (zsys_init (), ZMQ_PAIR);
    zmq_connect (monitor, monitor_ep);
    s_held = zlistx_new ();
    s_stats (stats);
    signal (SIGTERM, SIG_DFL);
    while (true) {
        zmq_pollitem_t items [S_MAX_PEERS + 2] = {
            { zsock_resolve (front), 0, ZMQ_POLLIN, 0 }, { monitor, 0, ZMQ_POLLIN, 0 } };
        for (size_t i = 0; i < s_npeers; i++)
            items [i + 2] = (zmq_pollitem_t) { zsock_resolve (s_peers [i].back), 0, ZMQ_POLLIN, 0 };
        size_t npeers = s_npeers;
        if (zmq_poll (items, (int) npeers + 2, 20) < 0 && zmq_errno () == ETERM)
            break;
        bool changed = false;
        if (items [1].revents & ZMQ_POLLIN) {
            zmq_msg_t ev;
            zmq_msg_init (&ev);
            while (zmq_msg_recv (&ev, monitor, ZMQ_DONTWAIT) >= 0) {
                if (zmq_msg_size (&ev) >= 2) {
                    uint16_t event;
                    memcpy (&event, zmq_msg_data (&ev), 2);
                    if (event == ZMQ_EVENT_ACCEPTED)
                        s_connections++;
                    else
                    if (event == ZMQ_EVENT_DISCONNECTED)
                        s_connections--;
                    changed = true;
                }
                int more = zmq_msg_more (&ev);
                zmq_msg_close (&ev);
                zmq_msg_init (&ev);
                if (more)               //  the endpoint frame
                    zmq_msg_recv (&ev, monitor, 0);
            }
            zmq_msg_close (&ev);
        }
        if (items [0].revents & ZMQ_POLLIN)
            for (zmsg_t *msg; (msg = zmsg_recv_nowait (front));) {
                zframe_t *id = zmsg_pop (msg);
                s_peer_t *p = id ? s_peer (id, back_ep) : NULL;
                ufo_msg_head_t head;
                if (p && fail && s_head (zmsg_first (msg), &head) && strncmp (head.type, fail, strlen (fail)) == 0) {
                    ufo_msg_t *reply = ufo_msg_new ("error");
                    ufo_msg_set_id (reply, head.id);
                    ufo_msg_set_sender (reply, "ufo-test-proxy");
                    ufo_value_t *body = ufo_value_new_map ();
                    ufo_value_map_set_str (body, "code", "unavailable");
                    ufo_value_map_set_str (body, "message", "refused by the test proxy");
                    ufo_msg_set_body (reply, &body);
                    ufo_buf_t buf = { 0 };
                    ufo_msg_encode (reply, &buf);
                    ufo_msg_destroy (&reply);
                    zmsg_t *out = zmsg_new ();
                    zmsg_addmem (out, zframe_data (id), zframe_size (id));
                    zmsg_addmem (out, buf.data, buf.len);
                    ufo_buf_free (&buf);
                    zmsg_send (&out, front);
                    zframe_destroy (&id);
                    zmsg_destroy (&msg);
                    continue;
                }
                if (p && hold && access (hold, F_OK) == 0 && s_head (zmsg_first (msg), &head)
                &&  strncmp (head.type, prefix, strlen (prefix)) == 0)
                    zlistx_add_end (p->held_ids, strdup (head.id));
                if (p)
                    zmsg_send (&msg, p->back);
                zframe_destroy (&id);
                zmsg_destroy (&msg);
            }
        for (size_t i = 0; i < npeers; i++) {
            if (!(items [i + 2].revents & ZMQ_POLLIN))
                continue;
            s_peer_t *p = &s_peers [i];
            for (zmsg_t *msg; (msg = zmsg_recv_nowait (p->back));) {
                ufo_msg_head_t head;
                bool held = false;
                if (s_head (zmsg_first (msg), &head))
                    for (char *h = (char *) zlistx_first (p->held_ids); h; h = (char *) zlistx_next (p->held_ids))
                        if (!strcmp (h, head.id)) {
                            zlistx_delete (p->held_ids, zlistx_cursor (p->held_ids));
                            held = true;
                            break;
                        }
                zmsg_pushmem (msg, zframe_data (p->id), zframe_size (p->id));
                if (held) {
                    zlistx_add_end (s_held, msg);
                    s_held_total++;
                    changed = true;
                }
                else
                    zmsg_send (&msg, front);
            }
        }
        if (zlistx_size (s_held) > 0 && (!hold || access (hold, F_OK) != 0)) {
            zmsg_t *msg;
            while ((msg = (zmsg_t *) zlistx_detach (s_held, NULL))) {
                zmsg_send (&msg, front);
                s_released++;
            }
            changed = true;
        }
        if (changed)
            s_stats (stats);
    }
    return 0;
}
