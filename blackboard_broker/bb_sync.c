/*  bb_sync.c - durability thread with group commit; see bb_sync.h. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_blob.h"
#include "bb_sync.h"
#include <pthread.h>

#define BB_SYNC_HOLD_BACKOFF 64     //  after a hold in vain, the next 64 chances are not taken

typedef struct s_job_t {
    uint64_t ticket;
    int kind;
    int fd;
    bool durable;
    ufo_blob_stage_t *stage;
    int (*call) (void *arg);    //  BB_SYNC_CALL
    void *call_arg;
    struct s_job_t *next;
} s_job_t;

struct _bb_sync_t {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    s_job_t *head, *tail;       //  queued, not started
    bool stopping;
    int (*datasync) (int fd);   //  fdatasync, or a test's stand-in (bb_sync_set_datasync)
    uint64_t hold_us;           //  0: never hold a job (bb_sync_set_hold)
    bool holding;               //  a job is held for writes to join it
    unsigned hold_skip;         //  after a hold that timed out: jobs to start without holding
    uint64_t issued;
    int pipe_r, pipe_w;
    uint64_t syncs, total_us, last_us;
};

static void *
s_thread (void *arg)
{
    bb_sync_t *self = (bb_sync_t *) arg;
    pthread_mutex_lock (&self->lock);
    while (true) {
        while (!self->head && !self->stopping)
            pthread_cond_wait (&self->wake, &self->lock);
        if (!self->head)
            break;              //  stopping and nothing left
        if (self->holding) {
            //  Pipelined writers: the replies of the job that just ended are going out and
            //  their writers' next writes will follow within a round trip. Keep this job
            //  queued (they join it) until the event loop says they came, or hold_us.
            struct timespec until;
            clock_gettime (CLOCK_MONOTONIC, &until);
            until.tv_sec += (time_t) (self->hold_us / 1000000);
            until.tv_nsec += (long) (self->hold_us % 1000000) * 1000;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            bool timed_out = false;
            while (self->holding && !self->stopping && !timed_out) {
                int rc = pthread_cond_timedwait (&self->wake, &self->lock, &until);
                timed_out = rc != 0 && rc != EINTR;     //  ETIMEDOUT (any other error: give up)
            }
            if (self->holding && timed_out)
                self->hold_skip = BB_SYNC_HOLD_BACKOFF;     //  the writes did not come: not pipelined
            self->holding = false;
        }
        s_job_t *job = self->head;
        self->head = job->next;
        if (!self->head)
            self->tail = NULL;
        pthread_mutex_unlock (&self->lock);

        //  The job has left the queue: later requests for the same fd make a new job,
        //  because this fdatasync may already have started.
        int status = 0;
        uint64_t start = (uint64_t) ufo_time_mono_us ();
        if (job->kind == BB_SYNC_DATA || job->kind == BB_SYNC_CLOSE) {
            if (self->datasync (job->fd) != 0)
                status = errno ? errno : EIO;
            if (job->kind == BB_SYNC_CLOSE)
                close (job->fd);
        }
        else if (job->kind == BB_SYNC_CALL)
            status = job->call (job->call_arg);
        else {
            ufo_error_t err;
            if (ufo_blob_commit (job->stage, job->durable, &err) != 0) {
                ufo_error ("blob commit: %s", err.message);
                status = EIO;
            }
            free (job->stage);
        }
        uint64_t took = (uint64_t) ufo_time_mono_us () - start;
        bb_sync_done_t done = { job->ticket, status, job->kind };
        free (job);
        //  Decided before the event loop hears of the completion, so that it sees the hold.
        pthread_mutex_lock (&self->lock);
        bool may_hold = self->hold_us && self->head && self->head->kind == BB_SYNC_DATA && !self->stopping;
        if (may_hold && self->hold_skip > 0) {
            self->hold_skip--;
            may_hold = false;
        }
        self->holding = may_hold;
        self->syncs++;
        self->total_us += took;
        self->last_us = took;
        pthread_mutex_unlock (&self->lock);
        ssize_t rc;
        do
            rc = write (self->pipe_w, &done, sizeof done);
        while (rc < 0 && errno == EINTR);
        pthread_mutex_lock (&self->lock);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

bb_sync_t *
bb_sync_new (ufo_error_t *err)
{
    bb_sync_t *self = ufo_calloc (1, sizeof *self);
    int fds [2];
    if (pipe2 (fds, O_CLOEXEC) != 0) {
        free (self);
        ufo_error_set (err, UFO_E_IO, "pipe: %s", strerror (errno));
        return NULL;
    }
    fcntl (fds [0], F_SETFL, O_NONBLOCK);
    self->pipe_r = fds [0];
    self->pipe_w = fds [1];
    self->datasync = fdatasync;
    pthread_mutex_init (&self->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init (&attr);
    pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
    pthread_cond_init (&self->wake, &attr);
    pthread_condattr_destroy (&attr);
    if (pthread_create (&self->thread, NULL, s_thread, self) != 0) {
        close (fds [0]);
        close (fds [1]);
        free (self);
        ufo_error_set (err, UFO_E_INTERNAL, "cannot start the sync thread");
        return NULL;
    }
    return self;
}

void
bb_sync_destroy (bb_sync_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_sync_t *self = *self_p;
    pthread_mutex_lock (&self->lock);
    self->stopping = true;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->lock);
    pthread_join (self->thread, NULL);
    close (self->pipe_r);
    close (self->pipe_w);
    pthread_mutex_destroy (&self->lock);
    pthread_cond_destroy (&self->wake);
    free (self);
    *self_p = NULL;
}

static uint64_t
s_enqueue (bb_sync_t *self, int kind, int fd, ufo_blob_stage_t *stage, bool durable)
{
    s_job_t *job = ufo_calloc (1, sizeof *job);
    pthread_mutex_lock (&self->lock);
    uint64_t ticket;
    bool created = false;
    if (kind == BB_SYNC_DATA && self->tail && self->tail->kind == BB_SYNC_DATA && self->tail->fd == fd)
        ticket = self->tail->ticket;            //  group commit: join the waiting job
    else {
        job->ticket = ticket = ++self->issued;
        job->kind = kind;
        job->fd = fd;
        job->stage = stage;
        job->durable = durable;
        if (self->tail)
            self->tail->next = job;
        else
            self->head = job;
        self->tail = job;
        created = true;
    }
    pthread_mutex_unlock (&self->lock);
    //  Signalled after the unlock: a thread woken while the lock is still held would only
    //  block on it again (two wake-ups on the way to every fdatasync).
    if (created)
        pthread_cond_signal (&self->wake);
    else
        free (job);
    return ticket;
}

uint64_t
bb_sync_data (bb_sync_t *self, int fd)
{
    return s_enqueue (self, BB_SYNC_DATA, fd, NULL, true);
}

uint64_t
bb_sync_close (bb_sync_t *self, int fd)
{
    return s_enqueue (self, BB_SYNC_CLOSE, fd, NULL, true);
}

uint64_t
bb_sync_call (bb_sync_t *self, int (*call) (void *arg), void *arg)
{
    s_job_t *job = ufo_calloc (1, sizeof *job);
    job->kind = BB_SYNC_CALL;
    job->call = call;
    job->call_arg = arg;
    job->fd = -1;
    pthread_mutex_lock (&self->lock);
    uint64_t ticket = job->ticket = ++self->issued;
    if (self->tail)
        self->tail->next = job;
    else
        self->head = job;
    self->tail = job;
    pthread_mutex_unlock (&self->lock);
    pthread_cond_signal (&self->wake);
    return ticket;
}

uint64_t
bb_sync_blob (bb_sync_t *self, ufo_blob_stage_t **stage_p, bool durable)
{
    ufo_blob_stage_t *stage = *stage_p;
    *stage_p = NULL;
    return s_enqueue (self, BB_SYNC_BLOB, -1, stage, durable);
}

int
bb_sync_fd (const bb_sync_t *self)
{
    return self->pipe_r;
}

size_t
bb_sync_read (bb_sync_t *self, bb_sync_done_t *out, size_t max)
{
    ssize_t rc;
    do
        rc = read (self->pipe_r, out, max * sizeof *out);
    while (rc < 0 && errno == EINTR);
    return rc > 0 ? (size_t) rc / sizeof *out : 0;
}

uint64_t
bb_sync_issued (const bb_sync_t *self)
{
    pthread_mutex_lock ((pthread_mutex_t *) &self->lock);
    uint64_t issued = self->issued;
    pthread_mutex_unlock ((pthread_mutex_t *) &self->lock);
    return issued;
}

void
bb_sync_stats (bb_sync_t *self, uint64_t *syncs, uint64_t *total_us, uint64_t *last_us)
{
    pthread_mutex_lock (&self->lock);
    *syncs = self->syncs;
    *total_us = self->total_us;
    *last_us = self->last_us;
    pthread_mutex_unlock (&self->lock);
}

void
bb_sync_set_hold (bb_sync_t *self, uint64_t hold_us)
{
    pthread_mutex_lock (&self->lock);
    self->hold_us = hold_us;
    pthread_mutex_unlock (&self->lock);
}

bool
bb_sync_holding (bb_sync_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool holding = self->holding;
    pthread_mutex_unlock (&self->lock);
    return holding;
}

void
bb_sync_go (bb_sync_t *self)
{
    pthread_mutex_lock (&self->lock);
    bool was_holding = self->holding;
    self->holding = false;
    pthread_mutex_unlock (&self->lock);
    if (was_holding)
        pthread_cond_signal (&self->wake);
}

void
bb_sync_set_datasync (bb_sync_t *self, int (*datasync) (int fd))
{
    pthread_mutex_lock (&self->lock);
    self->datasync = datasync ? datasync : fdatasync;
    pthread_mutex_unlock (&self->lock);
}
