/*  ufo_bb_client.h - client of the blackboard broker: requests and replies, pipelined
    writes, and board replicas kept up to date from the bus.

    Requests go over a DEALER socket to the broker's command endpoint; every call waits for
    the reply with the same envelope id (stale replies of timed-out calls are discarded).

    A replica ("follow") implements the late-join algorithm of docs/PROTOCOL.md 2.6:
    subscribe to "bb/<board>/" first, then take a snapshot (which reports the global seq G
    it reflects and the board's last change L), then apply bus events: an event whose last
    seq is <= G is already in the snapshot and is dropped; any other event must name, in
    "prev", the board's last change seen so far, otherwise updates were missed (high-water
    mark drop, reconnect) and the replica resyncs from a fresh snapshot by itself.

    One owner thread. The sockets are exposed (as void *, czmq zsock_t) so an event loop can
    poll them; otherwise ufo_bb_client_poll does the waiting. */
#ifndef UFO_BB_CLIENT_H_INCLUDED
#define UFO_BB_CLIENT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_bb_client_t ufo_bb_client_t;

//  Connects to the broker. bus_endpoint may be NULL (no replicas); an empty endpoint means the
//  default ipc endpoint in the run directory (ufo_bb_endpoint). Returns NULL with err on a
//  malformed endpoint. Connection itself is asynchronous (ZeroMQ reconnects by itself).
ufo_bb_client_t *ufo_bb_client_new (const char *cmd_endpoint, const char *bus_endpoint, ufo_error_t *err);

//  The same with CURVE on both sockets (ufo_cert.h, ufo_security_apply_client): server_key
//  (Z85) and cert_path (this process's *.cert_secret) explicit, NULL for the process default
//  (ufo_security_init), "" for none. ufo_bb_client_new uses the process default. NULL with
//  err when the certificate cannot be used.
ufo_bb_client_t *ufo_bb_client_new_curve (const char *cmd_endpoint, const char *bus_endpoint,
                                          const char *server_key, const char *cert_path, ufo_error_t *err);

//  Closes the sockets and frees the replicas. Safe with NULL.
void ufo_bb_client_destroy (ufo_bb_client_t **self_p);

//  Time a call waits for its reply (default 10000 ms).
void ufo_bb_client_set_timeout (ufo_bb_client_t *self, int timeout_ms);

//  How a call waits for its reply. By default it blocks on the socket (up to the timeout).
//  With a waiter, it checks the socket without blocking and otherwise calls
//  wait(arg, socket, left_ms), which should run the caller's event loop for at most left_ms
//  with socket (czmq zsock_t *) among what it polls, and return false to abandon the call
//  (a cancel, a signal): the call then fails with UFO_E_CANCELLED and its late reply is
//  dropped by the next call. The waiter must not make calls on this client. NULL: blocking.
typedef bool (ufo_bb_client_wait_fn) (void *arg, void *socket, int left_ms);
void ufo_bb_client_set_waiter (ufo_bb_client_t *self, ufo_bb_client_wait_fn *wait, void *arg);

//  Sets the sender name put in request envelopes (default "ufo-bb-client").
void ufo_bb_client_set_sender (ufo_bb_client_t *self, const char *sender);

//  Sends one request: type, body (ownership of *body_p taken; NULL = empty map), and an
//  optional extra frame (blob.put). Waits for its reply. Returns the reply body (caller
//  owns), or NULL with err: the broker's error code and message for an "error" reply,
//  UFO_E_TIMEOUT when no reply came in time. If data_p is given, a second reply frame
//  (blob.get) is returned in *data_p (caller frees) and *len_p.
ufo_value_t *ufo_bb_client_call (ufo_bb_client_t *self, const char *type, ufo_value_t **body_p,
                                 const void *frame, size_t frame_len, char **data_p, size_t *len_p,
                                 ufo_error_t *err);

//  Pipelining: sends a request without waiting; id_out[65] receives its envelope id.
//  Returns 0, or -1 with err.
int ufo_bb_client_send (ufo_bb_client_t *self, const char *type, ufo_value_t **body_p,
                        const void *frame, size_t frame_len, char id_out [65], ufo_error_t *err);

//  Receives the next reply (any id) within timeout_ms. Returns its body (caller owns) with
//  *ok_p telling ok / error and id_out its id; NULL with err (UFO_E_TIMEOUT, UFO_E_SYNTAX).
ufo_value_t *ufo_bb_client_recv (ufo_bb_client_t *self, int timeout_ms, char id_out [65], bool *ok_p,
                                 ufo_error_t *err);

//  bb.add: adds *items_p (a list of maps/strings, or one map/string; ownership taken) to a
//  memory ("questions"...). *seq_p / *last_p (optional) get the assigned sequence range.
int ufo_bb_client_add (ufo_bb_client_t *self, const char *board, const char *memory,
                       ufo_value_t **items_p, uint64_t *seq_p, uint64_t *last_p, ufo_error_t *err);

//  bb.snapshot: memory NULL for all four; after 0 for everything. Returns the reply body
//  (see docs/PROTOCOL.md: name, exists, seq, last, full, board, seqs), caller owns.
ufo_value_t *ufo_bb_client_snapshot (ufo_bb_client_t *self, const char *board, const char *memory,
                                     uint64_t after, ufo_error_t *err);

//  bb.clear (memory NULL: all four) and bb.delete. Return 0 or -1 with err.
int ufo_bb_client_clear (ufo_bb_client_t *self, const char *board, const char *memory, ufo_error_t *err);
int ufo_bb_client_delete (ufo_bb_client_t *self, const char *board, ufo_error_t *err);

//  blob.put: stores bytes; hex[65] receives the reference. blob.get: *data_p (caller frees).
int ufo_bb_client_blob_put (ufo_bb_client_t *self, const void *data, size_t len, char hex [65],
                            ufo_error_t *err);
int ufo_bb_client_blob_get (ufo_bb_client_t *self, const char *hex, char **data_p, size_t *len_p,
                            ufo_error_t *err);

//  Fetches a blob and returns it as "data:<mime>;base64,..." (caller frees), for prompts.
char *ufo_bb_client_data_url (ufo_bb_client_t *self, const char *hex, const char *mime, ufo_error_t *err);

//  Fills in "image_str" (a data URL fetched from the blob store) for every screenshot item
//  of a board map ({"questions": [...], ..., "screenshots": [...]}) that has a "blob" and
//  no image_str, so ufo_board_from_map + ufo_board_to_prompt give the original's prompt.
//  The mime type comes from the item's "mime" field, else the image_path extension.
//  The map and its screenshots list must be changeable; a frozen item in it (the shared maps
//  of ufo_board_to_map) is replaced by a filled copy, so the board it came from is left as
//  it was. Returns the number filled, or -1 with err (first failure; others are left
//  unfilled).
int ufo_bb_client_fill_images (ufo_bb_client_t *self, ufo_value_t *board_map, ufo_error_t *err);

//  --- Replicas -------------------------------------------------------------------

//  Starts following a board: subscribes and loads a snapshot. Returns 0 or -1 with err.
int ufo_bb_client_follow (ufo_bb_client_t *self, const char *board, ufo_error_t *err);

//  Processes bus events for at most timeout_ms (0: only what is already queued), applying
//  them to the replicas and resyncing any that missed updates. Returns the number of events
//  applied, or -1 with err (a resync that failed: the replica is marked stale and retried on
//  the next event).
int ufo_bb_client_poll (ufo_bb_client_t *self, int timeout_ms, ufo_error_t *err);

//  The replica of a followed board in the original's shape {"questions": [...], ...}
//  (borrowed; valid until the next poll), or NULL when not followed.
const ufo_value_t *ufo_bb_client_replica (ufo_bb_client_t *self, const char *board);

//  The seq of the last change applied to a replica (0 for an absent board).
uint64_t ufo_bb_client_replica_last (ufo_bb_client_t *self, const char *board);

typedef struct {
    uint64_t events;            //  events applied
    uint64_t duplicates;        //  events dropped because the snapshot already had them
    uint64_t gaps;              //  gaps detected
    uint64_t resyncs;           //  snapshots taken to recover
} ufo_bb_client_stats_t;

void ufo_bb_client_stats (ufo_bb_client_t *self, ufo_bb_client_stats_t *stats);

//  Test hook: drop every n-th bus event before it is looked at (0: off), to simulate a
//  high-water-mark drop.
void ufo_bb_client_test_drop (ufo_bb_client_t *self, uint64_t every_n);

//  The underlying sockets (czmq zsock_t *), for polling from an application's event loop.
void *ufo_bb_client_cmd_socket (ufo_bb_client_t *self);
void *ufo_bb_client_bus_socket (ufo_bb_client_t *self);

#endif
