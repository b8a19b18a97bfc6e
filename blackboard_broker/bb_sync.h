/*  bb_sync.h - the broker's durability thread: fdatasync / fsync off the event loop.

    Group commit: the event loop write()s log records to the kernel, then asks this thread
    to make them durable and gets a ticket. While the thread is inside one fdatasync, every
    further request for the same file joins the single job waiting behind it, so one
    fdatasync covers every write that happened before it started. Jobs run strictly in
    ticket order; each finished job writes {ticket, status} to a pipe whose read end the
    event loop polls, and the loop then releases the replies and bus events that waited for
    that ticket. The loop is never blocked by a disk flush. */
#ifndef BB_SYNC_H_INCLUDED
#define BB_SYNC_H_INCLUDED

#include "ufo_error.h"
#include "ufo_blob.h"

typedef struct _bb_sync_t bb_sync_t;

typedef struct {
    uint64_t ticket;
    int32_t status;             //  0 = done, otherwise an errno value
    int32_t kind;
} bb_sync_done_t;

enum { BB_SYNC_DATA = 1, BB_SYNC_CLOSE = 2, BB_SYNC_BLOB = 3, BB_SYNC_CALL = 4 };

//  Starts the thread. Returns NULL with err if it cannot.
bb_sync_t *bb_sync_new (ufo_error_t *err);

//  Runs every queued job, stops the thread, closes the pipe. Safe with NULL.
void bb_sync_destroy (bb_sync_t **self_p);

//  Asks for fdatasync(fd); joins a job for the same fd that has not started yet.
//  Returns the ticket that completes when every byte written to fd so far is durable.
uint64_t bb_sync_data (bb_sync_t *self, int fd);

//  Asks for fdatasync(fd) then close(fd) (a rotated log segment). Returns its ticket.
uint64_t bb_sync_close (bb_sync_t *self, int fd);

//  Asks for ufo_blob_commit(*stage_p, durable) (ownership of the heap stage taken).
uint64_t bb_sync_blob (bb_sync_t *self, ufo_blob_stage_t **stage_p, bool durable);

//  Runs call(arg) on the thread, in ticket order with the other jobs (the log's repair after
//  a failed write or fdatasync: ufo_wal_repair). Its return value (0 or an errno value) is
//  the completion's status. The caller keeps arg alive and untouched until it completes.
uint64_t bb_sync_call (bb_sync_t *self, int (*call) (void *arg), void *arg);

//  Read end of the completion pipe (non-blocking), for the event loop's poller.
int bb_sync_fd (const bb_sync_t *self);

//  Reads available completions into out[0..max). Returns how many (0 when none).
size_t bb_sync_read (bb_sync_t *self, bb_sync_done_t *out, size_t max);

//  Highest ticket issued so far (0 before the first job).
uint64_t bb_sync_issued (const bb_sync_t *self);

//  Group commit across round trips: when a log job was queued while the previous one ran
//  (writers keep requests in flight), the thread holds it for up to hold_us (0: never, the
//  default) before starting it, so that the writes of the clients whose acknowledgements just
//  went out join the same fdatasync. bb_sync_go ends a hold early (the event loop calls it
//  when those writes have come); bb_sync_holding tells whether a job is held now. A hold
//  that ends by its time limit (clients that do not pipeline: they were not waiting to write)
//  turns holding off for the next 64 jobs that could have been held.
void bb_sync_set_hold (bb_sync_t *self, uint64_t hold_us);
bool bb_sync_holding (bb_sync_t *self);
void bb_sync_go (bb_sync_t *self);

//  Replaces fdatasync(2) for DATA and CLOSE jobs (NULL: fdatasync again). For tests, which
//  need a flush they can hold open; call it before the first job.
void bb_sync_set_datasync (bb_sync_t *self, int (*datasync) (int fd));

//  Number of fdatasync calls made, and their total and last duration in microseconds.
void bb_sync_stats (bb_sync_t *self, uint64_t *syncs, uint64_t *total_us, uint64_t *last_us);

#endif
