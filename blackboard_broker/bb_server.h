/*  bb_server.h - the blackboard broker: one event loop (czmq zloop) serving a ROUTER command
    socket and an XPUB bus socket, with a durable log, snapshots and a blob store.

    Write path (fsync "always"):
      1. The loop drains up to a burst of requests from the ROUTER socket. Each accepted
         change gets the next global sequence numbers, is encoded once as its bus event
         envelope, appended to the log buffer and applied to the in-memory boards; its reply
         and its event are queued, not sent.
      2. At the end of the burst the log buffer is written to the kernel (write(2)) and the
         durability thread (bb_sync) is asked for an fdatasync: every queued reply and event
         gets that job's ticket.
      3. When the thread reports the ticket done (through a pipe the loop polls), the loop
         sends the queued replies and publishes the events, in their original order.
    Reads queue behind earlier writes, so a client never sees state that is not yet durable
    in a reply, and every event on the bus is durable. With "everysec" the thread is asked
    once a second and replies go out at once; with "no" the kernel decides. */
#ifndef BB_SERVER_H_INCLUDED
#define BB_SERVER_H_INCLUDED

#include "ufo_error.h"
#include "bb_dispatch.h"
#include "bb_security.h"

typedef enum { BB_FSYNC_ALWAYS = 0, BB_FSYNC_EVERYSEC = 1, BB_FSYNC_NO = 2 } bb_fsync_t;

typedef struct {
    const char *data_dir;
    const char *cmd_endpoint;
    const char *bus_endpoint;
    bb_fsync_t fsync;
    bool repair;
    size_t max_message_bytes;
    size_t max_item_bytes;
    size_t max_items_per_board;
    size_t max_blob_bytes;
    uint64_t snapshot_every;        //  log records between snapshots (at least)
    uint64_t snapshot_growth;       //  and until the log grew by this % of the last snapshot,
                                    //  in items (0: snapshot_every alone)
    int64_t stats_interval_ms;      //  0: no periodic stats
    int bus_hwm;                    //  send high-water mark of the bus socket
    size_t max_peer_output_bytes;   //  replies queued for one peer before it gets busy (bb_peers.h)
    bb_dispatch_config_t dispatch;  //  task dispatch (zeros: defaults)
    bb_security_t *security;        //  CURVE, ZAP and roles (bb_security.h); NULL: off. Borrowed.
} bb_server_config_t;

typedef struct _bb_server_t bb_server_t;

//  Opens the data directory (loading the snapshot and replaying the log), binds both
//  sockets. Returns NULL with err on failure (corrupt log, busy data dir, bad endpoint).
bb_server_t *bb_server_new (const bb_server_config_t *config, ufo_error_t *err);

//  Runs the event loop until SIGINT/SIGTERM. Returns 0 after a clean stop, -1 after a fatal
//  storage error (the process should exit non-zero without further writes).
int bb_server_run (bb_server_t *self);

//  Flushes the log, makes it durable, sends what waited for it, closes everything.
void bb_server_destroy (bb_server_t **self_p);

#endif
