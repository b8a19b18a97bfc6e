/*  ufo_wal.h - a durable append-only log of checksummed records, kept in segment files.

    Files: DIR/wal-<16 hex digits segment number>.log. Each record is
        magic "UFOW" (4 bytes) | length (u32 little-endian) | crc (u32 LE) | payload
    where crc = CRC-32C over the 4 length bytes followed by the payload. The payload is opaque
    here (the broker stores msgpack).

    Opening replays every record of every segment, in order, through a callback. A torn or
    corrupt tail of the LAST segment (a bad record with no valid record after it) is cut off
    with a warning. A bad record followed by valid records, or a bad record in an earlier
    segment, is corruption in the middle: opening fails with a message naming the file and
    offset, unless `repair` is set, in which case the log is truncated at the bad record (and
    later segments are removed) with a loud warning.

    Appending is two steps so that callers can group-commit: ufo_wal_append buffers records
    in memory, ufo_wal_write hands the buffered bytes to the kernel with write(2). Making them
    durable (fdatasync of ufo_wal_fd) is the caller's job: the broker does it on a dedicated
    thread. Not thread-safe; one owner. */
#ifndef UFO_WAL_H_INCLUDED
#define UFO_WAL_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_bb_proto.h"

#define UFO_WAL_HEADER_BYTES 12
#define UFO_WAL_MAX_RECORD UFO_BB_MAX_RECORD  //  ufo_bb_proto.h

typedef struct _ufo_wal_t ufo_wal_t;

//  Called once per good record during open. segment is the segment number. Return 0 to go
//  on, or -1 with err set to declare the record bad (treated like a checksum failure:
//  corruption in the middle unless repair).
typedef int (ufo_wal_replay_fn) (void *arg, uint64_t segment, const void *payload, size_t len,
                                 ufo_error_t *err);

typedef struct {
    uint64_t records;           //  good records replayed
    uint64_t segments;          //  segment files found
    uint64_t cut_bytes;         //  bytes cut from a torn tail or by repair
    bool repaired;              //  repair truncated the log in the middle
} ufo_wal_open_info_t;

//  Opens (creating DIR if needed) the log in dir. Segments numbered below first_segment are
//  deleted unread (a snapshot covers them). Every remaining record is passed to fn (may be
//  NULL). The last segment stays open for appending; a new one is created if none exists.
//  info may be NULL. Returns the log, or NULL with err (UFO_E_IO, or UFO_E_SYNTAX for
//  corruption in the middle).
ufo_wal_t *ufo_wal_open (const char *dir, uint64_t first_segment, bool repair,
                         ufo_wal_replay_fn *fn, void *arg, ufo_wal_open_info_t *info,
                         ufo_error_t *err);

//  Closes the log (writing buffered records first, without syncing). Safe with NULL.
void ufo_wal_destroy (ufo_wal_t **self_p);

//  Buffers one record. The payload is copied. len must be at most UFO_WAL_MAX_RECORD.
void ufo_wal_append (ufo_wal_t *self, const void *payload, size_t len);

//  Bytes buffered by ufo_wal_append and not yet written.
size_t ufo_wal_pending (const ufo_wal_t *self);

//  Writes all buffered records to the current segment. Returns 0, or -1 with err and errno
//  (EIO, ENOSPC, ...): the file's end is then unknown, the log is broken (ufo_wal_broken)
//  and every further write fails until ufo_wal_prepare_repair + ufo_wal_repair succeed.
int ufo_wal_write (ufo_wal_t *self, ufo_error_t *err);

//  Keeps a copy of the bytes written and not yet confirmed durable (ufo_wal_synced), so that
//  ufo_wal_repair can write them again after a failed write or fdatasync (after which the
//  kernel may have dropped them). Off by default (then only what a failed write did not
//  write is kept).
void ufo_wal_keep_unsynced (ufo_wal_t *self, bool keep);

//  Tells the log that an fdatasync of `segment` covering its bytes up to `end` succeeded:
//  the kept copy of them is dropped. Ignored while the log is broken.
void ufo_wal_synced (ufo_wal_t *self, uint64_t segment, uint64_t end);

//  After a failed write or fdatasync: marks the log broken and moves the buffered records
//  behind the kept unsynced bytes, so that the repair writes everything from the last
//  confirmed fdatasync on. The owner then runs ufo_wal_repair (on another thread is fine:
//  until ufo_wal_repaired the owner may only ufo_wal_append, and read sizes), then calls
//  ufo_wal_repaired with its outcome.
void ufo_wal_prepare_repair (ufo_wal_t *self);

//  The repair (arg: the log): for the previous segment while its last fdatasync is not
//  confirmed, then the current one: opens the file anew, cuts it back to the last confirmed
//  end, writes the kept bytes there and fdatasyncs them. Returns 0 or an errno value.
int ufo_wal_repair (void *arg);

//  Ends a repair: ok: the log is whole again and durable up to its size, writes go on;
//  otherwise it stays broken (prepare and repair again later).
void ufo_wal_repaired (ufo_wal_t *self, bool ok);

//  True between a failed write (or ufo_wal_prepare_repair) and a successful repair.
bool ufo_wal_broken (const ufo_wal_t *self);

//  fdatasync(2), or a failure with EIO while the test fault file says "fsync"
//  (UFOBUS_TEST_WAL_FAULT=FILE, tests only: while FILE holds "write", the log's writes fail
//  with EIO after writing half their bytes; "fsync": its fdatasyncs fail with EIO).
int ufo_wal_datasync (int fd);

//  Makes sure the file system has blocks for `bytes` more bytes after what is written and
//  buffered (fallocate, FALLOC_FL_KEEP_SIZE: the file's size does not change), reserving
//  `chunk` bytes more when they fit, so that writing them cannot fail with ENOSPC / EDQUOT.
//  Returns 0 (also when the file system cannot reserve at all: then a warning is logged once
//  and writes are unprotected), or -1 with err (UFO_E_UNAVAILABLE) and errno when the space
//  is not there. The reservation starts anew with each segment (ufo_wal_rotate).
int ufo_wal_reserve (ufo_wal_t *self, uint64_t bytes, uint64_t chunk, ufo_error_t *err);

//  File descriptor of the current segment, for fdatasync. Owned by the log.
int ufo_wal_fd (const ufo_wal_t *self);

//  Bytes written to the current segment / records appended since open.
uint64_t ufo_wal_size (const ufo_wal_t *self);
uint64_t ufo_wal_records (const ufo_wal_t *self);
//  Number of the current segment.
uint64_t ufo_wal_segment (const ufo_wal_t *self);

//  Writes buffered records, then starts a new segment (created and its directory entry
//  synced). The previous segment's descriptor is handed to the caller in *old_fd_p, who
//  must make it durable (fdatasync) and close it. Returns the new segment number, or 0
//  with err (also UFO_E_UNAVAILABLE while the segment before is not confirmed durable).
uint64_t ufo_wal_rotate (ufo_wal_t *self, int *old_fd_p, ufo_error_t *err);

//  Deletes segments numbered below `segment` (after a snapshot covers them).
//  Returns the number of files removed.
int ufo_wal_remove_before (ufo_wal_t *self, uint64_t segment);

//  Encodes one record (header + payload) onto buf: what ufo_wal_append buffers.
//  Exposed for the benchmark's raw baseline and for tests that craft log files.
void ufo_wal_encode_record (ufo_buf_t *buf, const void *payload, size_t len);

#endif
