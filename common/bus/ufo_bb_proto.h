/*  ufo_bb_proto.h - the blackboard broker's wire protocol (docs/PROTOCOL.md section 2):
    request decoding and validation, reply and event encoding, topic names.

    Shared by the broker (which decodes requests) and the client library (which decodes
    replies and events). Decoding takes the frames that follow any ZeroMQ routing frames
    and never touches a socket, so it can be fuzzed directly. */
#ifndef UFO_BB_PROTO_H_INCLUDED
#define UFO_BB_PROTO_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_msgpack.h"
#include "ufo_value.h"

#define UFO_BB_BOARD_MAX 128            //  bytes in a board name
#define UFO_BB_MEMORY_ALL (-1)
//  The largest record the broker logs (its ufo_wal's UFO_WAL_MAX_RECORD); a request's items
//  must leave 64 KiB of it for the rest of the record.
#define UFO_BB_MAX_RECORD (256u * 1024 * 1024)

//  Request types (the envelope "type" field). Replies have type "ok" or "error".
typedef enum {
    UFO_BB_REQ_ADD = 0,         //  "bb.add"
    UFO_BB_REQ_SNAPSHOT,        //  "bb.snapshot"
    UFO_BB_REQ_CLEAR,           //  "bb.clear"
    UFO_BB_REQ_DELETE,          //  "bb.delete"
    UFO_BB_REQ_LIST,            //  "bb.list"
    UFO_BB_REQ_BLOB_PUT,        //  "blob.put" (two frames: envelope, bytes)
    UFO_BB_REQ_BLOB_GET,        //  "blob.get"
    UFO_BB_REQ_STATS,           //  "stats"
    UFO_BB_REQ_PING,            //  "ping"
    UFO_BB_REQ_COUNT
} ufo_bb_req_type_t;

//  Event types published on the bus (envelope "type").
#define UFO_BB_EV_ADDED "bb.added"
#define UFO_BB_EV_CLEARED "bb.cleared"
#define UFO_BB_EV_DELETED "bb.deleted"
#define UFO_BB_EV_STATS "broker.stats"
#define UFO_BB_TOPIC_STATS "stats"

typedef struct {
    size_t max_message_bytes;   //  envelope frame
    size_t max_item_bytes;      //  one item, msgpack-encoded
    size_t max_blob_bytes;      //  blob frame
    size_t max_batch_items;     //  items in one bb.add
} ufo_bb_limits_t;

//  A decoded, validated request. blob_data, and for bb.add items_data when the items were
//  kept as sent, point into the caller's frames: keep them alive while the request is used.
//  Not to be copied (item_ends may point into the struct itself).
typedef struct {
    int type;                           //  ufo_bb_req_type_t, or -1 before decoding
    char type_name [65];
    char id [65];                       //  envelope id, echoed in the reply ("" if undecodable)
    char sender [129];
    char board [UFO_BB_BOARD_MAX + 1];
    int memory;                         //  ufo_mem_kind_t, or UFO_BB_MEMORY_ALL
    uint64_t after;                     //  bb.snapshot: only items with seq > after (0: all)
    //  bb.add: the items as msgpack maps back to back (strings already wrapped). Item i is
    //  items_data[ufo_bb_request_item_start(req, i) .. item_ends[i]). items_data points into
    //  the request frame (the caller's, when the items could be kept as sent) or into items_mp.
    const uint8_t *items_data;
    size_t items_len;
    size_t nitems;
    uint32_t *item_ends;                //  nitems end offsets (ends_inline, or heap)
    uint32_t ends_inline [8];
    bool ends_heap;                     //  item_ends was allocated
    ufo_buf_t items_mp;                 //  the items re-encoded, when they were decoded
    ufo_value_t *items;                 //  bb.add: list of maps when the request had to be
                                        //  decoded into a tree (strings to wrap, blob references,
                                        //  repeated keys...), else NULL; borrowed from holder
    ufo_value_t *holder;                //  owns items (the request body, or a new list)
    char blob [65];                     //  blob.get: reference
    const void *blob_data;              //  blob.put: the bytes frame (borrowed)
    size_t blob_len;
    int64_t ttl_ms;                     //  blob.put: the blob expires after this (0: permanent)
} ufo_bb_request_t;

//  blob.put's ttl_ms bounds (1 s .. 7 days)
#define UFO_BB_BLOB_TTL_MIN_MS 1000
#define UFO_BB_BLOB_TTL_MAX_MS (7LL * 24 * 3600 * 1000)

//  Name of a request type ("bb.add"...), and the type named by name or -1.
const char *ufo_bb_req_name (int type);
int ufo_bb_req_parse (const char *name);

//  Name of a memory ("questions", "requests", "trajectories", "screenshots") and its parse
//  (-1 for unknown names). Same order as ufo_mem_kind_t in ufo_board.h.
const char *ufo_bb_memory_name (int which);
int ufo_bb_memory_parse (const char *name);

//  True if name is a valid board name: 1..128 bytes of [A-Za-z0-9_.:@-].
bool ufo_bb_board_valid (const char *name, size_t len);

//  Default limits (16 MiB message, 1 MiB item, 16 MiB blob, 100000 items per add).
void ufo_bb_limits_default (ufo_bb_limits_t *limits);

//  Initialises a request record (empty, type -1). Call before decode.
void ufo_bb_request_init (ufo_bb_request_t *req);

//  Frees what a decoded request owns and re-initialises it. Safe to call twice.
void ufo_bb_request_reset (ufo_bb_request_t *req);

//  Decodes the frames of a request (those after the routing frames): frames[0] is the
//  envelope, frames[1] the blob bytes for blob.put. Checks frame counts and sizes, field
//  types and limits. Returns 0, or -1 with err (UFO_E_TOO_LARGE, UFO_E_SYNTAX, UFO_E_TYPE,
//  UFO_E_MISSING, UFO_E_INVALID, ...). The request may borrow from frames (see
//  ufo_bb_request_t). On error req->id holds the envelope id when the
//  envelope itself decoded, so the reply can still be correlated.
int ufo_bb_request_decode (ufo_bb_request_t *req, const void *const *frames, const size_t *sizes,
                           size_t nframes, const ufo_bb_limits_t *limits, ufo_error_t *err);

//  The id of a request envelope that was rejected, for its error reply: reads leniently an
//  array header of any length, a version of any int form and value, a type str, then the id
//  str, and copies the id into id[65] when it is at most 64 bytes of UTF-8 without NUL.
//  Returns true with the id, false (id "") when those fields cannot be read. Reads at most
//  the first ~150 bytes of the frame, whatever its length (docs/PROTOCOL.md 2.1).
bool ufo_bb_peek_id (const void *frame, size_t len, char id [65]);

//  Start offset of item i of a decoded bb.add in req->items_data.
static inline size_t
ufo_bb_request_item_start (const ufo_bb_request_t *req, size_t i)
{
    return i ? req->item_ends [i - 1] : 0;
}

//  The reference decoder: like ufo_bb_request_decode, but always decodes the body into a value
//  tree (req->items is set for bb.add) instead of keeping plain items as the frame's bytes.
//  Gives the same verdicts and the same items; tests and the request fuzzer compare the two.
int ufo_bb_request_decode_tree (ufo_bb_request_t *req, const void *const *frames, const size_t *sizes,
                                size_t nframes, const ufo_bb_limits_t *limits, ufo_error_t *err);

//  Appends the envelope of an ok reply to buf: type "ok", id = request id, body *body_p
//  (ownership taken; NULL gives an empty map).
void ufo_bb_encode_ok (ufo_buf_t *buf, const char *id, ufo_value_t **body_p);

//  Appends the envelope of an error reply: type "error", body {"code": name, "message": text}.
void ufo_bb_encode_error (ufo_buf_t *buf, const char *id, int code, const char *message);

//  Writes the bus topic for a board and memory ("bb/<board>/<memory>"; memory -1 gives
//  "bb/<board>/*") into out. Returns the length.
size_t ufo_bb_topic (char *out, size_t size, const char *board, int memory);

//  Writes the subscription prefix for every event of a board ("bb/<board>/").
size_t ufo_bb_topic_prefix (char *out, size_t size, const char *board);

//  Resolves a configured broker endpoint: a non-empty value is returned as it is; an empty
//  one (or NULL) becomes "ipc://RUN_DIR/broker-<which>" ("cmd" or "bus"), RUN_DIR being
//  $UFO_RUN_DIR, else $XDG_RUNTIME_DIR/ufobus, else /tmp/ufobus-<uid>, created (mode 0700)
//  if missing. Writes into out[size]. Returns 0, or -1 with err (the directory cannot be
//  created, or the path is too long for an ipc endpoint).
int ufo_bb_endpoint (const char *configured, const char *which, char *out, size_t size, ufo_error_t *err);

//  Appends the first six fields of an envelope (version 1, type, id, sender, empty session,
//  the current time) WITHOUT the body: the caller must append exactly one msgpack value (the
//  body) next. type, id (NULL: "") and sender must be within the limits of section 1 (the
//  caller's job: they are not checked here).
void ufo_bb_envelope_head (ufo_buf_t *buf, const char *type, const char *id, const char *sender);

//  The same with the timestamp given (microseconds since the epoch; negative gives 0): the
//  broker stamps every message of one burst with the burst's time.
void ufo_bb_envelope_head_at (ufo_buf_t *buf, const char *type, const char *id, const char *sender, int64_t now);

#endif
