/*  ufo_blob.h - a content-addressed blob store on disk (screenshots and other bytes).

    A blob is named by the SHA-256 of its bytes (64 lowercase hex characters) and lives in
    DIR/ab/cdef... (first two hex digits as a subdirectory). Putting is two steps so that the
    broker can make a blob durable off its event loop: ufo_blob_stage writes the bytes to a
    temporary file, ufo_blob_commit (thread-safe, may run on another thread) syncs it and
    renames it into place, then syncs the directory. A blob is visible to ufo_blob_get only
    after its commit. Reading verifies the digest, so a damaged file is reported, not served. */
#ifndef UFO_BLOB_H_INCLUDED
#define UFO_BLOB_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"

typedef struct _ufo_blob_store_t ufo_blob_store_t;

//  A staged blob: the result of ufo_blob_stage, consumed by ufo_blob_commit or ufo_blob_abort.
typedef struct {
    char hex [65];              //  the blob reference
    size_t size;
    bool existed;               //  already in the store: nothing to commit
    int fd;                     //  temporary file (-1 when existed)
    char tmp_path [4096];
    char final_path [4096];
    int dir_fd;                 //  subdirectory, for syncing the rename (-1 when existed)
    //  the blob's expiry (ufo_blob_stage_expiry), applied by ufo_blob_commit
    int expiry_op;              //  UFO_BLOB_EXPIRY_KEEP / _SET / _CLEAR / _REMOVED
    int64_t expires_ms;         //  _SET: wall-clock ms (CLOCK_REALTIME) when it expires
    char expiry_path [4100];    //  the blob's expiry file (final_path + ".ttl")
} ufo_blob_stage_t;

//  What a commit does with a blob's expiry file. KEEP: nothing; SET: writes it (before the blob
//  is renamed into place); CLEAR: removes it (the blob is permanent); REMOVED: the blob was
//  removed by ufo_blob_remove, its directory is synced, then the expiry file is removed.
enum { UFO_BLOB_EXPIRY_KEEP = 0, UFO_BLOB_EXPIRY_SET, UFO_BLOB_EXPIRY_CLEAR, UFO_BLOB_EXPIRY_REMOVED };

//  Opens (creating) the store in dir; removes stale temporary files. max_bytes limits the
//  size of one blob. Returns NULL with err on failure.
ufo_blob_store_t *ufo_blob_store_new (const char *dir, size_t max_bytes, ufo_error_t *err);

//  Closes the store. Safe with NULL.
void ufo_blob_store_destroy (ufo_blob_store_t **self_p);

//  Computes the reference of data and, unless the store has it, writes the bytes to a
//  temporary file. Returns 0 (stage filled in), or -1 with err (UFO_E_TOO_LARGE over the
//  limit, UFO_E_IO).
int ufo_blob_stage (ufo_blob_store_t *self, const void *data, size_t len, ufo_blob_stage_t *stage,
                    ufo_error_t *err);

//  Finishes a staged blob: with `durable`, fsync of the file, rename into place and fsync of
//  the directory; without, just the rename. Closes the descriptors. Thread-safe.
//  Returns 0, or -1 with err.
int ufo_blob_commit (ufo_blob_stage_t *stage, bool durable, ufo_error_t *err);

//  Drops a staged blob (removes the temporary file).
void ufo_blob_abort (ufo_blob_stage_t *stage);

/*  Expiry (blob.put with ttl_ms, docs/PROTOCOL.md 2.3). A blob that expires has a file beside
    it, DIR/ab/cdef....ttl, holding the wall-clock time (ms since the epoch, decimal) when it
    expires; a blob without one is permanent. The file is written before the blob is renamed
    into place, and removed only after the blob's removal is durable, so a restart finds
    either the blob with its expiry, or an expiry file without its blob (dropped by
    ufo_blob_expiries), never a blob that lost its expiry. */

//  Sets what stage's commit does with the expiry file: op UFO_BLOB_EXPIRY_SET (expires_ms),
//  _CLEAR or _KEEP. A stage of a blob that existed is then no longer a no-op for commit.
void ufo_blob_stage_expiry (ufo_blob_stage_t *stage, int op, int64_t expires_ms);

//  Fills stage for the committed blob hex (a valid reference) as if staged again: its commit
//  changes only the expiry file (ufo_blob_stage_expiry).
void ufo_blob_stage_of (ufo_blob_store_t *self, const char *hex, ufo_blob_stage_t *stage);

//  Removes a committed blob now (its file is unlinked: a later stage of the same bytes writes
//  a new one) and fills stage so that its commit (UFO_BLOB_EXPIRY_REMOVED: with durable, the
//  directory is synced first) removes the expiry file. Returns 0, or -1 with err (no blob).
int ufo_blob_remove (ufo_blob_store_t *self, const char *hex, ufo_blob_stage_t *stage, ufo_error_t *err);

//  Calls fn(hex, expires_ms, arg) for every blob that has an expiry file; removes expiry
//  files whose blob is gone and partial ones. For start-up. Returns how many it reported.
size_t ufo_blob_expiries (ufo_blob_store_t *self, void (*fn) (const char *hex, int64_t expires_ms, void *arg),
                          void *arg);

//  True if the store holds the blob (committed).
bool ufo_blob_exists (ufo_blob_store_t *self, const char *hex);

//  Reads a blob. Returns 0 with *data_p (caller frees) and *len_p, or -1 with err:
//  UFO_E_INVALID for a malformed reference, UFO_E_NOT_FOUND, UFO_E_IO, UFO_E_SYNTAX when the
//  content no longer matches its digest (the damaged file is removed).
int ufo_blob_get (ufo_blob_store_t *self, const char *hex, char **data_p, size_t *len_p,
                  ufo_error_t *err);

//  Maximum size of one blob.
size_t ufo_blob_max_bytes (const ufo_blob_store_t *self);

#endif
