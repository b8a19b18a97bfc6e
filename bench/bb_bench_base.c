/*  bb_bench_base.c - the baselines bb_bench measures the broker against, in the same run:
    a raw group-commit log, one fdatasync, a raw DEALER/ROUTER round trip, the transport
    ceiling (the bench writers against a ROUTER that answers at once) and Redis XADD with
    appendfsync always (see bb_bench.c and docs/BENCHMARKS.md). */
#include "ufo_prelude.h"
#include "ufo_msgpack.h"
#include "bench_stats.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_wal.h"
#include "../tests/bb_test_util.h"
#include "bb_bench.h"
#include <czmq.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>

double
bbb_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

double
bbb_p50 (double *v, size_t n)
{
    qsort (v, n, sizeof *v, bench_cmp_double);
    return v [n / 2];
}

//  --- baselines ---------------------------------------------------------------------

//  Raw group commit: batches of `batch` records (what `writers` x BBB_WINDOW in flight give the
//  broker), write(2) + fdatasync per batch. Returns records made durable per second.
double
bbb_raw_log (size_t record, size_t batch)
{
    char path [400];
    snprintf (path, sizeof path, "%s/ufo-bbbench-raw-%d.log", bbb_base, (int) getpid ());
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return 0;
    ufo_buf_t buf = { 0 };
    char *payload = ufo_malloc (record);
    memset (payload, 'r', record);
    for (size_t i = 0; i < batch; i++)
        ufo_wal_encode_record (&buf, payload, record - UFO_WAL_HEADER_BYTES);
    long done = 0;
    double end = bbb_now () + bbb_seconds;
    while (bbb_now () < end) {
        if (write (fd, buf.data, buf.len) != (ssize_t) buf.len || fdatasync (fd) != 0)
            break;
        done += (long) batch;
    }
    close (fd);
    unlink (path);
    free (payload);
    ufo_buf_free (&buf);
    return (double) done / bbb_seconds;
}

double
bbb_fsync_p50 (void)
{
    char path [400];
    snprintf (path, sizeof path, "%s/ufo-bbbench-fsync-%d.log", bbb_base, (int) getpid ());
    int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    double v [300];
    char rec [256];
    memset (rec, 'f', sizeof rec);
    for (int i = 0; i < 300; i++) {
        double t0 = bbb_now ();
        if (write (fd, rec, sizeof rec) < 0 || fdatasync (fd) != 0)
            break;
        v [i] = bbb_now () - t0;
    }
    close (fd);
    unlink (path);
    return bbb_p50 (v, 300);
}

static void *
s_echo (void *arg)
{
    zsock_t *router = (zsock_t *) arg;
    while (true) {
        zmsg_t *msg = zmsg_recv (router);
        if (!msg)
            break;
        if (zmsg_size (msg) == 2 && zframe_size (zmsg_last (msg)) == 4
        &&  memcmp (zframe_data (zmsg_last (msg)), "STOP", 4) == 0) {
            zmsg_destroy (&msg);
            break;
        }
        zmsg_send (&msg, router);
    }
    return NULL;
}

//  Raw DEALER/ROUTER round trip over ipc with a request of the same size; p50 seconds.
double
bbb_raw_rtt_p50 (size_t size)
{
    char ep [400];
    snprintf (ep, sizeof ep, "ipc://%s/ufo-bbbench-rtt-%d", bbb_base, (int) getpid ());
    zsock_t *router = zsock_new_router (ep);
    zsock_t *dealer = zsock_new_dealer (ep);
    pthread_t thread;
    pthread_create (&thread, NULL, s_echo, router);
    char *payload = ufo_malloc (size);
    memset (payload, 'x', size);
    double v [2000];
    for (int i = 0; i < 2000; i++) {
        double t0 = bbb_now ();
        zsock_send (dealer, "b", payload, size);
        zmsg_t *reply = zmsg_recv (dealer);
        v [i] = bbb_now () - t0;
        zmsg_destroy (&reply);
    }
    zsock_send (dealer, "b", "STOP", (size_t) 4);
    pthread_join (thread, NULL);
    free (payload);
    zsock_destroy (&dealer);
    zsock_destroy (&router);
    unlink (ep + strlen ("ipc://"));
    return bbb_p50 (v + 200, 1800);
}

//  --- transport ceiling: the same writers against a raw ROUTER that answers at once -----

typedef struct {
    void *ctx;
    char endpoint [256];
    size_t reply_size;
    atomic_bool stop;
} s_echo_t;

//  Answers every request with a reply of the broker's size that reads as "ok"; no other work.
static void *
s_echo_router (void *arg)
{
    s_echo_t *e = (s_echo_t *) arg;
    void *router = zmq_socket (e->ctx, ZMQ_ROUTER);
    int hwm = 0, linger = 0;
    zmq_setsockopt (router, ZMQ_SNDHWM, &hwm, sizeof hwm);
    zmq_setsockopt (router, ZMQ_RCVHWM, &hwm, sizeof hwm);
    zmq_setsockopt (router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_bind (router, e->endpoint);
    char *reply = ufo_calloc (1, e->reply_size);
    memcpy (reply, "\x97\x01\xa2ok", 5);
    while (!atomic_load (&e->stop)) {
        zmq_pollitem_t item = { router, 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 100) <= 0)
            continue;
        for (int burst = 0; burst < 1024; burst++) {
            zmq_msg_t id, body;
            zmq_msg_init (&id);
            if (zmq_msg_recv (&id, router, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (&id);
                break;
            }
            zmq_msg_init (&body);
            while (zmq_msg_more (&id) && zmq_msg_recv (&body, router, 0) >= 0 && zmq_msg_more (&body))
                ;
            zmq_msg_send (&id, router, ZMQ_SNDMORE);
            zmq_send (router, reply, e->reply_size, 0);
            zmq_msg_close (&body);
        }
    }
    free (reply);
    zmq_close (router);
    return NULL;
}

//  Size of the broker's reply to one bb.add.
static size_t
s_reply_size (void)
{
    ufo_buf_t buf = { 0 };
    ufo_bb_envelope_head (&buf, "ok", "bench000000000000000000000123456", "ufo-broker");
    ufo_mp_put_map (&buf, 2);
    ufo_mp_put_cstr (&buf, "seq");
    ufo_mp_put_uint (&buf, 1234567);
    ufo_mp_put_cstr (&buf, "last");
    ufo_mp_put_uint (&buf, 1234567);
    size_t size = buf.len;
    ufo_buf_free (&buf);
    return size;
}

//  Acknowledged "writes"/s of `writers` bench writers against the raw echo (own context, so
//  its own I/O thread, like the broker process).
double
bbb_echo_writes (int writers)
{
    s_echo_t e;
    memset (&e, 0, sizeof e);
    e.ctx = zmq_ctx_new ();
    e.reply_size = s_reply_size ();
    snprintf (e.endpoint, sizeof e.endpoint, "ipc://%s/ufo-bbbench-echo-%d", bbb_base, (int) getpid ());
    pthread_t thread;
    pthread_create (&thread, NULL, s_echo_router, &e);
    usleep (100000);
    bb_test_broker_t b;
    memset (&b, 0, sizeof b);
    snprintf (b.cmd, sizeof b.cmd, "%s", e.endpoint);
    long acked = bbb_run_writers (&b, writers, "bench", NULL);
    atomic_store (&e.stop, true);
    pthread_join (thread, NULL);
    zmq_ctx_term (e.ctx);
    unlink (e.endpoint + strlen ("ipc://"));
    return (double) acked / bbb_seconds;
}

//  --- Redis ----------------------------------------------------------------------

typedef struct {
    int port;
    char key [32];
    long acked;
    bool failed;
} s_redis_t;

static int
s_redis_connect (int port)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    if (connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        close (fd);
        return -1;
    }
    int one = 1;
    setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

//  Counts complete RESP replies in data[0..len) (simple strings, errors, integers, bulk);
//  returns bytes consumed.
static size_t
s_resp_count (const char *data, size_t len, long *replies, long *errors)
{
    size_t off = 0;
    while (off < len) {
        const char *nl = memchr (data + off, '\n', len - off);
        if (!nl)
            break;
        size_t line_end = (size_t) (nl - data) + 1;
        if (data [off] == '$') {
            long n = strtol (data + off + 1, NULL, 10);
            size_t need = line_end + (n >= 0 ? (size_t) n + 2 : 0);
            if (need > len)
                break;
            off = need;
        }
        else {
            if (data [off] == '-')
                (*errors)++;
            off = line_end;
        }
        (*replies)++;
    }
    return off;
}

static void *
s_redis_writer (void *arg)
{
    s_redis_t *r = (s_redis_t *) arg;
    int fd = s_redis_connect (r->port);
    if (fd < 0) {
        r->failed = true;
        return NULL;
    }
    char cmd [512];
    char buf [65536];
    size_t have = 0;
    long inflight = 0, errors = 0;
    int64_t n = 0;
    double end = bbb_now () + bbb_seconds;
    while (bbb_now () < end) {
        ufo_buf_t out = { 0 };
        while (inflight < BBB_WINDOW) {
            int len = snprintf (cmd, sizeof cmd, "Step%" PRId64, n++);
            char step [32];
            snprintf (step, sizeof step, "%" PRId64, n);
            (void) len;
            ufo_buf_printf (&out, "*9\r\n$4\r\nXADD\r\n$%zu\r\n%s\r\n$1\r\n*\r\n$4\r\nStep\r\n$%zu\r\n%s\r\n"
                            "$7\r\nSubtask\r\n$15\r\ntype the report\r\n$6\r\nAction\r\n$%zu\r\n%s\r\n",
                            strlen (r->key), r->key, strlen (step), step, strlen (bbb_item_pad), bbb_item_pad);
            inflight++;
        }
        if (out.len && write (fd, out.data, out.len) != (ssize_t) out.len) {
            ufo_buf_free (&out);
            r->failed = true;
            break;
        }
        ufo_buf_free (&out);
        ssize_t got = read (fd, buf + have, sizeof buf - have);
        if (got <= 0) {
            r->failed = true;
            break;
        }
        have += (size_t) got;
        long replies = 0;
        size_t used = s_resp_count (buf, have, &replies, &errors);
        memmove (buf, buf + used, have - used);
        have -= used;
        inflight -= replies;
        r->acked += replies;
    }
    if (errors)
        r->failed = true;
    close (fd);
    return NULL;
}

double
bbb_redis_writes (int writers, bool *ok)
{
    *ok = false;
    char dir [400];
    snprintf (dir, sizeof dir, "%s/ufo-bbbench-redis-XXXXXX", bbb_base);
    if (!mkdtemp (dir))
        return 0;
    int port = 20000 + (int) (getpid () % 20000);
    char port_text [16];
    snprintf (port_text, sizeof port_text, "%d", port);
    pid_t pid = fork ();
    if (pid == 0) {
        int null = open ("/dev/null", O_WRONLY);
        dup2 (null, 1);
        execlp ("redis-server", "redis-server", "--port", port_text, "--bind", "127.0.0.1", "--dir", dir,
                "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
                (char *) NULL);
        _exit (127);
    }
    int fd = -1;
    for (int i = 0; i < 500 && fd < 0; i++) {
        usleep (10000);
        fd = s_redis_connect (port);
    }
    double rate = 0;
    if (fd >= 0) {
        close (fd);
        pthread_t threads [16];
        s_redis_t r [16];
        for (int i = 0; i < writers; i++) {
            memset (&r [i], 0, sizeof r [i]);
            r [i].port = port;
            snprintf (r [i].key, sizeof r [i].key, "bench-%d", i);
            pthread_create (&threads [i], NULL, s_redis_writer, &r [i]);
        }
        long acked = 0;
        bool failed = false;
        for (int i = 0; i < writers; i++) {
            pthread_join (threads [i], NULL);
            acked += r [i].acked;
            failed |= r [i].failed;
        }
        rate = (double) acked / bbb_seconds;
        *ok = !failed;
    }
    kill (pid, SIGTERM);
    waitpid (pid, NULL, 0);
    bb_test_rmtree (dir);
    return rate;
}

