/*  bb_peers.h - bytes of replies queued for each peer of the command socket, so that a peer
    that never reads cannot grow the broker without bound (issue 21).

    libzmq bounds a ROUTER peer's queue in messages (the send high-water mark), not in bytes:
    300 replies of 8 MB each fit under any useful message count. The broker charges every
    reply buffer it hands to libzmq without copying (bodies over BB_OUT_INLINE bytes, blob
    frames) to its peer when the reply is queued; libzmq calls bb_peers_free when it is done
    with the buffer (written to the kernel, or dropped when the peer left), from its I/O
    thread, which releases the charge. A peer whose charge is over the limit gets `busy` for
    new requests (bb_server.c) until it has read enough. Replies of up to BB_OUT_INLINE bytes
    are copied into libzmq and not charged: the message high-water mark bounds them.

    The table is used by the event loop's thread only; the charges are atomic. */
#ifndef BB_PEERS_H_INCLUDED
#define BB_PEERS_H_INCLUDED

typedef struct _bb_peers_t bb_peers_t;
typedef struct _bb_charge_t bb_charge_t;

//  Creates an empty table. limit: bytes a peer may have queued before it gets `busy`.
bb_peers_t *bb_peers_new (size_t limit);

//  Destroys the table; entries still referenced by queued messages are freed by the last
//  bb_peers_free. Sets *self_p to NULL. Safe with NULL.
void bb_peers_destroy (bb_peers_t **self_p);

//  Bytes queued for the peer with routing id id[0..len).
size_t bb_peers_queued (bb_peers_t *self, const void *id, size_t len);

//  True if the peer has more than the limit queued. Logs (once per episode) when a peer
//  crosses the limit and when it has read its queue down again.
bool bb_peers_over (bb_peers_t *self, const void *id, size_t len);

//  Charges bytes to the peer; returns the charge, to pass as hint with bb_peers_free, or to
//  bb_peers_release if the buffer is not sent. Never NULL.
bb_charge_t *bb_peers_charge (bb_peers_t *self, const void *id, size_t len, size_t bytes);

//  zmq_free_fn: frees data (malloc'd) and releases the charge hint (NULL: none). Any thread.
void bb_peers_free (void *data, void *hint);

//  Releases a charge whose buffer was not handed to libzmq. Safe with NULL.
void bb_peers_release (bb_charge_t *charge);

//  Forgets peers with nothing queued (call now and then).
void bb_peers_sweep (bb_peers_t *self);

//  Total bytes charged to all peers, and the number of peers refused busy so far.
size_t bb_peers_total (bb_peers_t *self);
uint64_t bb_peers_refused (bb_peers_t *self);

#endif
