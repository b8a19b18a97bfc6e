/*  bb_durability.c - the broker's durability pipeline: the end of a burst (log write and
    fdatasync ticket), the sync thread's completions, and compaction (forked snapshot
    writer, then removal of the log segments it covers). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_wal.h"
#include "bb_server_int.h"
#include "bb_dispatch.h"
#include <sys/prctl.h>
#include <sys/wait.h>

static void s_snapshot_start (bb_server_t *self);

void
bb_durability_disk_full (bb_server_t *self, const char *reason)
{
    if (!self->disk_full)
        ufo_error ("disk full: %s; writes are refused (unavailable) until space returns (checked every "
                   "second); reads, snapshots, the bus and dispatch of what is durable go on", reason);
    self->disk_full = true;
    snprintf (self->full_reason, sizeof self->full_reason, "%s", reason);
}

bool
bb_durability_room (bb_server_t *self, size_t len, bool floor, char *why, size_t size)
{
    ufo_error_t err;
    if (floor && self->disk_full)
        ufo_error_set (&err, UFO_E_UNAVAILABLE, "%s", self->full_reason);
    else {
        uint64_t need = 2 * (uint64_t) len + 65536 + (floor ? BB_RESERVE_FLOOR : 0);
        if (ufo_wal_reserve (self->wal, need, BB_RESERVE_CHUNK, &err) == 0)
            return true;
        bb_durability_disk_full (self, err.message);
    }
    self->writes_refused++;
    if (self->log_failed)
        snprintf (why, size, "the broker's log is being repaired (%s): nothing was written; retry later",
                  err.message);
    else
        snprintf (why, size, "the broker's disk is full (%s): nothing was written; retry later", err.message);
    return false;
}

uint64_t
bb_durability_sync_log (bb_server_t *self)
{
    uint64_t ticket = bb_sync_data (self->sync, ufo_wal_fd (self->wal));
    uint64_t segment = ufo_wal_segment (self->wal), end = ufo_wal_size (self->wal);
    if (self->nlog_syncs > 0 && self->log_syncs [self->nlog_syncs - 1].ticket == ticket) {
        self->log_syncs [self->nlog_syncs - 1].end = end;      //  joined the waiting job
        return ticket;
    }
    if (self->nlog_syncs == self->cap_log_syncs) {
        self->cap_log_syncs = self->cap_log_syncs ? self->cap_log_syncs * 2 : 16;
        self->log_syncs = ufo_realloc (self->log_syncs, self->cap_log_syncs * sizeof *self->log_syncs);
    }
    self->log_syncs [self->nlog_syncs++] = (struct bb_log_sync_s) { ticket, segment, end };
    return ticket;
}

//  A log job finished: what it covered is durable (ok), or not known to be.
static void
s_log_synced (bb_server_t *self, uint64_t ticket, bool ok)
{
    size_t n = 0;
    while (n < self->nlog_syncs && self->log_syncs [n].ticket <= ticket) {
        if (ok && !self->log_failed && self->log_syncs [n].ticket == ticket)
            ufo_wal_synced (self->wal, self->log_syncs [n].segment, self->log_syncs [n].end);
        n++;
    }
    memmove (self->log_syncs, self->log_syncs + n, (self->nlog_syncs - n) * sizeof *self->log_syncs);
    self->nlog_syncs -= n;
}

//  After a failed write or fdatasync the kernel may have dropped the written pages and
//  marked them clean, and a later fdatasync of the same file may report success without
//  them (the error is reported once). So nothing written since the last good fdatasync
//  is acknowledged: every reply and event still queued is held (they all wait for that
//  record or a later one), the log is marked broken, and a repair cuts each file back to
//  its last confirmed end and writes the kept bytes again through a new descriptor.
void
bb_durability_log_failed (bb_server_t *self, const char *message)
{
    if (!self->log_failed) {
        ufo_error ("the log failed: %s; writes are refused (unavailable) and the replies of the records "
                   "since the last good fdatasync are held until a repair (tried every second) has written "
                   "them again; reads, snapshots, the bus and dispatch of what is durable go on", message);
        self->repairs_failed = 0;
    }
    if (self->snap_pid != 0) {
        //  A snapshot is valid only once the checkpoint heading its new segment is durable,
        //  which this failure leaves unknown: a restart from it would drop the older
        //  segments, and the task state with them. It is stopped and removed.
        kill (self->snap_pid, SIGKILL);
        waitpid (self->snap_pid, NULL, 0);
        self->snap_pid = 0;
        bb_store_remove_snapshot (self->data_dir, self->snap_seq);
        self->items_at_snap = 0;
        ufo_warn ("snapshot of seq %" PRIu64 " dropped: the log failed while it was written", self->snap_seq);
    }
    self->log_failed = true;
    self->disk_full = true;
    snprintf (self->full_reason, sizeof self->full_reason, "%s", message);
    bb_out_flush (self, 0);
    bb_out_hold (self, false);
    ufo_wal_prepare_repair (self->wal);
}

//  The repair job finished.
static void
s_repaired (bb_server_t *self, int status)
{
    self->repairing = false;
    ufo_wal_repaired (self->wal, status == 0);
    if (status != 0) {
        if (self->repairs_failed++ == 0)
            ufo_warn ("repair of the log failed: %s; retrying every second", strerror (status));
        return;
    }
    size_t held = self->nheld;
    self->log_failed = false;
    self->disk_full = false;
    self->nlog_syncs = 0;
    bb_out_release_held (self, true);
    ufo_info ("the log is repaired and durable (%" PRIu64 " failed attempt(s)); %zu held replies and events "
              "sent; writes are taken again (%" PRIu64 " refused)", self->repairs_failed, held,
              self->writes_refused);
    bb_durability_space_check (self);
}

void
bb_durability_space_check (bb_server_t *self)
{
    if (self->log_failed) {
        if (!self->repairing) {
            ufo_wal_prepare_repair (self->wal);
            self->repair_ticket = bb_sync_call (self->sync, ufo_wal_repair, self->wal);
            self->repairing = true;
        }
        return;
    }
    if (!self->disk_full)
        return;
    ufo_error_t err;
    if (ufo_wal_reserve (self->wal, 65536 + BB_RESERVE_FLOOR, BB_RESERVE_CHUNK, &err) != 0)
        return;
    self->disk_full = false;
    ufo_info ("disk space is back: writes are taken again (%" PRIu64 " refused while it was full)",
              self->writes_refused);
}

//  Ends a burst: writes the log buffer and gives every queued output of the burst a ticket.
void
bb_durability_commit_burst (bb_server_t *self)
{
    uint64_t ticket = 0;
    if (self->log_failed) {
        //  The records of this burst (dispatch's own) wait for the repair with their
        //  replies and events; outputs of a burst that wrote nothing go now.
        if (self->burst_wrote)
            bb_out_hold (self, true);
        self->burst_wrote = false;
        for (size_t i = self->out_head; i < self->out_tail; i++)
            if (self->out [i].burst) {
                self->out [i].burst = false;
                self->out [i].ticket = 0;
            }
        bb_out_flush (self, 0);
        return;
    }
    if (self->burst_wrote) {
        ufo_error_t err;
        if (ufo_wal_write (self->wal, &err) != 0) {
            self->burst_wrote = false;
            bb_durability_log_failed (self, err.message);
            return;
        }
        if (self->cfg.fsync == BB_FSYNC_ALWAYS)
            ticket = bb_durability_sync_log (self);
        else
            self->unsynced = true;
        self->burst_wrote = false;
    }
    //  Outputs of this burst wait for its job, or for the latest job issued (reads and
    //  errors must not overtake earlier writes still on their way to disk).
    if (ticket == 0 && self->cfg.fsync == BB_FSYNC_ALWAYS)
        ticket = bb_sync_issued (self->sync);
    for (size_t i = self->out_tail; i > self->out_head; i--) {
        bb_out_t *o = &self->out [i - 1];
        if (!o->burst)
            continue;
        o->burst = false;
        o->ticket = ticket;
    }
    bb_out_flush (self, 0);
    if (self->snap_pid == 0 && bb_durability_snapshot_due (self))
        s_snapshot_start (self);
}

//  Compaction rewrites every board, so its cost grows with what the broker holds: starting
//  one every snapshot_every records alone made a big store spend a core on snapshots under
//  a steady stream of writes. Like Redis' auto-aof-rewrite-percentage, the log must also
//  have grown by snapshot_growth % of the last snapshot, counted in items (an add counts the
//  items it brought, any other record one), which keeps the snapshot work per write bounded
//  and the log to replay about that share of the store.
bool
bb_durability_snapshot_due (bb_server_t *self)
{
    if (self->disk_full || self->records_since_snap < self->cfg.snapshot_every)
        return false;
    uint64_t growth = self->cfg.snapshot_growth;
    //  (growth is at most 100000, so the product fits for any count of items that fits memory)
    return growth == 0 || self->log_items_since_snap * 100 >= self->items_at_snap * growth;
}

int
bb_durability_on_sync (bb_server_t *self)
{
    bb_sync_done_t done [64];
    size_t n;
    uint64_t replies_before = self->replies_sent;
    //  A short read leaves the pipe empty (later completions wake the loop again): no
    //  second read(2) just to hear EAGAIN.
    bool more = true;
    while (more && (n = bb_sync_read (self->sync, done, UFO_ARRAY_SIZE (done))) > 0) {
        more = n == UFO_ARRAY_SIZE (done);
        for (size_t i = 0; i < n; i++) {
            if (done [i].kind == BB_SYNC_CALL && done [i].ticket == self->repair_ticket) {
                self->done_ticket = done [i].ticket;
                s_repaired (self, done [i].status);
                bb_out_flush (self, 0);
                continue;
            }
            if (done [i].kind == BB_SYNC_DATA || done [i].kind == BB_SYNC_CLOSE) {
                s_log_synced (self, done [i].ticket, done [i].status == 0);
                if (done [i].status != 0) {
                    char message [128];
                    snprintf (message, sizeof message, "fdatasync of the log failed: %s",
                              strerror (done [i].status));
                    bb_durability_log_failed (self, message);
                }
            }
            self->done_ticket = done [i].ticket;
            bb_out_flush (self, done [i].status && done [i].kind == BB_SYNC_BLOB ? done [i].ticket : 0);
            size_t keep = 0;
            for (size_t j = 0; j < self->npblobs; j++)
                if (self->pblobs [j].ticket > self->done_ticket)
                    self->pblobs [keep++] = self->pblobs [j];
            self->npblobs = keep;
        }
    }
    if (bb_sync_holding (self->sync)) {
        //  The next log job waits for the writes of the clients just answered (bb_sync.h):
        //  s_on_request lets it go when as many requests have come as replies went out.
        uint64_t released = self->replies_sent - replies_before;
        self->refill_target = released;
        self->refill_seen = 0;
        if (released == 0)
            bb_sync_go (self->sync);
    }
    return 0;
}

static void
s_snapshot_start (bb_server_t *self)
{
    int old_fd = -1;
    ufo_error_t err;
    uint64_t old_segment = ufo_wal_segment (self->wal), old_end = ufo_wal_size (self->wal);
    uint64_t segment = ufo_wal_rotate (self->wal, &old_fd, &err);
    if (segment == 0) {
        ufo_warn ("snapshot postponed: %s", err.message);
        self->records_since_snap = 0;
        return;
    }
    //  The old segment must still become durable before its records are acknowledged.
    uint64_t ticket = bb_sync_close (self->sync, old_fd);
    if (self->nlog_syncs == self->cap_log_syncs) {
        self->cap_log_syncs = self->cap_log_syncs ? self->cap_log_syncs * 2 : 16;
        self->log_syncs = ufo_realloc (self->log_syncs, self->cap_log_syncs * sizeof *self->log_syncs);
    }
    self->log_syncs [self->nlog_syncs++] = (struct bb_log_sync_s) { ticket, old_segment, old_end };
    self->records_since_snap = 0;
    self->log_items_since_snap = 0;
    //  Task state is not in the board snapshot: a checkpoint heads the new segment, and
    //  older segments are removed only once it is durable (bb_durability_snapshot_reap).
    ufo_buf_reset (&self->scratch);
    bb_dispatch_checkpoint (self->dispatch, &self->scratch);
    ufo_wal_append (self->wal, self->scratch.data, self->scratch.len);
    if (ufo_wal_reserve (self->wal, BB_RESERVE_FLOOR, BB_RESERVE_CHUNK, &err) != 0)
        bb_durability_disk_full (self, err.message);       //  the checkpoint is written all the same
    if (ufo_wal_write (self->wal, &err) != 0) {
        bb_durability_log_failed (self, err.message);
        return;
    }
    self->cp_ticket = bb_durability_sync_log (self);
    pid_t parent = getpid ();
    pid_t pid = fork ();
    if (pid < 0) {
        ufo_warn ("snapshot: fork failed: %s", strerror (errno));
        return;
    }
    if (pid == 0) {
        //  Child: a copy-on-write image of the boards. No sockets, no atexit handlers.
        //  It dies with the broker (a killed broker must not leave a writer behind that
        //  races its successor), and it keeps the data directory lock until it is gone.
        prctl (PR_SET_PDEATHSIG, SIGKILL);
        if (getppid () != parent)
            _exit (1);
        int rc = bb_store_write_snapshot (self->store, self->data_dir, segment, &err);
        if (rc != 0)
            ufo_error ("snapshot: %s", err.message);
        _exit (rc == 0 ? 0 : 1);
    }
    self->snap_pid = pid;
    self->snapshots++;
    self->items_at_snap = bb_store_items (self->store);
    self->snap_seq = bb_store_seq (self->store);
    self->snap_segment = segment;
    ufo_debug ("snapshot of seq %" PRIu64 " started (pid %d)", self->snap_seq, (int) pid);
}

void
bb_durability_snapshot_reap (bb_server_t *self, bool wait)
{
    if (self->snap_pid == 0 || (!wait && self->cp_ticket > self->done_ticket))
        return;
    int status;
    pid_t rc = waitpid (self->snap_pid, &status, wait ? 0 : WNOHANG);
    if (rc == 0)
        return;
    self->snap_pid = 0;
    if (rc < 0 || !WIFEXITED (status) || WEXITSTATUS (status) != 0) {
        ufo_warn ("snapshot of seq %" PRIu64 " failed; the log keeps everything", self->snap_seq);
        self->items_at_snap = 0;        //  retry after snapshot_every records, not a growth period
        return;
    }
    int removed = ufo_wal_remove_before (self->wal, self->snap_segment);
    bb_store_prune_snapshots (self->data_dir, self->snap_seq);
    ufo_info ("snapshot of seq %" PRIu64 " done; %d log segment(s) compacted", self->snap_seq, removed);
}

void
bb_durability_everysec (bb_server_t *self)
{
    //  Once a second, and only when something was written since the last time.
    self->sync_ticks++;
    if (self->unsynced && !self->log_failed) {
        self->unsynced = false;
        bb_durability_sync_log (self);
    }
}
