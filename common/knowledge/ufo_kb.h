/*  ufo_kb.h - the knowledge index: passages of text (help pages, man pages, notes,
    experience records, demonstrations) in one SQLite file, searched with FTS5 and BM25.
    The only module that includes sqlite3.h.

    A passage has a kind ("help", "experience", "demonstration", ...), an application (""
    for none), a source (the file or record it came from), a title, its text and a ref (a
    free string the caller uses to find the original again, e.g. "page.page#section").
    Sources carry the mtime and size they were indexed at, so an indexer can skip files that
    did not change. A passage may also carry an embedding vector (float32); a search given a
    query vector re-ranks its BM25 candidates by exact cosine similarity.
    One ufo_kb_t is used from one thread. */
#ifndef UFO_KB_H_INCLUDED
#define UFO_KB_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_kb_t ufo_kb_t;

//  One passage to add. Strings are copied; app, ref may be NULL ("").
typedef struct {
    const char *kind;
    const char *app;
    const char *source;
    const char *title;
    const char *text;
    const char *ref;
} ufo_kb_passage_t;

//  Opens (creating when absent, with its parent directory) the index file at path; ":memory:"
//  gives a private in-memory index. Returns NULL with err when the file cannot be opened or
//  is not an index (a file of another format is never overwritten).
ufo_kb_t *ufo_kb_open (const char *path, ufo_error_t *err);

//  Closes the index; sets *self_p to NULL. Safe with NULL and twice.
void ufo_kb_destroy (ufo_kb_t **self_p);

//  Groups the following changes into one transaction (much faster for many passages).
//  Returns 0, or -1 with err.
int ufo_kb_begin (ufo_kb_t *self, ufo_error_t *err);

//  Commits the transaction begun with ufo_kb_begin. Returns 0, or -1 with err (rolled back).
int ufo_kb_commit (ufo_kb_t *self, ufo_error_t *err);

//  The mtime and size a source was indexed at. Returns true when the source is known.
bool ufo_kb_source_get (ufo_kb_t *self, const char *source, int64_t *mtime_p, int64_t *size_p);

//  Records (or updates) a source's kind, application, mtime and size. Returns 0 or -1 with err.
int ufo_kb_source_set (ufo_kb_t *self, const char *source, const char *kind, const char *app,
                       int64_t mtime, int64_t size, ufo_error_t *err);

//  Removes a source and all its passages. Returns the number of passages removed, or -1.
int ufo_kb_source_remove (ufo_kb_t *self, const char *source, ufo_error_t *err);

//  The known sources of a kind (NULL: all) and application (NULL: any), as a new list of
//  strings, sorted. The caller destroys it.
ufo_value_t *ufo_kb_sources (ufo_kb_t *self, const char *kind, const char *app);

//  Adds a passage. Returns its id (> 0), or -1 with err (the text is not valid UTF-8 ...).
int64_t ufo_kb_add (ufo_kb_t *self, const ufo_kb_passage_t *passage, ufo_error_t *err);

//  Stores an embedding vector of n floats beside passage id (replacing any). Returns 0 or -1.
int ufo_kb_set_vector (ufo_kb_t *self, int64_t id, const float *vec, size_t n, ufo_error_t *err);

//  Ids and texts (title, then text) of the passages that have no vector yet, at most max,
//  as a new list of {"id": int, "text": str}. The caller destroys it.
ufo_value_t *ufo_kb_without_vector (ufo_kb_t *self, size_t max);

//  Searches for query (free text: words are matched with stemming, any of them may match;
//  FTS syntax in it has no effect). kind and app restrict the hits (NULL: any). qvec (n
//  floats, may be NULL) re-ranks the best BM25 candidates by cosine similarity with their
//  vectors. Returns a new list of at most topk maps {"id", "kind", "app", "source", "title",
//  "text", "ref", "score"} best first (score: BM25 as a positive number, or the cosine when
//  re-ranked), empty when nothing matches; NULL with err on a database failure.
ufo_value_t *ufo_kb_search (ufo_kb_t *self, const char *query, const char *kind,
                            const char *app, size_t topk, const float *qvec, size_t n,
                            ufo_error_t *err);

//  Number of passages of a kind (NULL: all).
int64_t ufo_kb_count (ufo_kb_t *self, const char *kind);

//  The index's path as given to ufo_kb_open (borrowed).
const char *ufo_kb_path (const ufo_kb_t *self);

#endif
