/*  bb_bench.h - private to bb_bench: what its two files share (bb_bench.c measures the
    broker, bb_bench_base.c its baselines). */
#ifndef BB_BENCH_H_INCLUDED
#define BB_BENCH_H_INCLUDED

#include "ufo_buf.h"
#include <stdatomic.h>

#define BBB_WINDOW 64               //  requests in flight per writer

extern double bbb_seconds;          //  length of a throughput run
extern const char *bbb_base;        //  directory for data, logs and ipc endpoints
extern char bbb_item_pad [80];      //  the Action text of every bench item

//  Monotonic seconds; the median of v[0..n) (sorts v).
double bbb_now (void);
double bbb_p50 (double *v, size_t n);

//  One lean pipelined writer (a thread): BBB_WINDOW bb.add requests in flight, for `seconds`,
//  or, when `next` is set, until the writers sharing *next have taken `count` request
//  numbers between them (then it waits for its own replies and ends).
typedef struct {
    bb_test_broker_t *broker;
    char board [32];
    double seconds;
    atomic_long *next;
    long count;
    long acked;
    long failed;
} bbb_writer_t;
void *bbb_writer (void *arg);
//  Runs `writers` (at most 16) timed writers against broker for bbb_seconds, on boards
//  "<prefix>-<i>", and returns the writes acknowledged; *failed_p (optional) gets the others.
long bbb_run_writers (bb_test_broker_t *broker, int writers, const char *prefix, long *failed_p);

//  Encodes one bb.add of one item without a value tree; receives one reply with the raw API
//  (1: "ok", 0: another reply, -1: timeout).
void bbb_encode_add (ufo_buf_t *buf, const char *board, int64_t n);
int bbb_recv_reply (void *dealer);

//  Baselines (bb_bench_base.c). Rates per second, times in seconds.
double bbb_raw_log (size_t record, size_t batch);
double bbb_fsync_p50 (void);
double bbb_raw_rtt_p50 (size_t size);
double bbb_echo_writes (int writers);
double bbb_redis_writes (int writers, bool *ok);

#endif
