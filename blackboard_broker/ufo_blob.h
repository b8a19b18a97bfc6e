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
} ufo_blob_stage_t;

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
