/*  ufo_knowledge.h - offline help for the agents: finds the help documents of installed
    applications and indexes them in the knowledge index (ufo_kb), incrementally; and the
    configuration that says where they are (the "knowledge" section, docs/CONFIG.md).

    Sources, all of kind "help", each under the application it belongs to:
      - Mallard / DocBook help: HELP_DIR/LANG/APP/ (every APP found, or the one asked for);
      - man pages of the configured launchers (desktop.launchers): MAN_DIR/man?/NAME.?[.gz];
      - folders of .md / .txt notes listed per application (knowledge.folders).
    A file whose mtime and size did not change since it was indexed is not read again; a
    file that disappeared loses its passages. A file that cannot be read (not UTF-8, not
    well-formed XML, larger than knowledge.max_file_bytes) is skipped with a log line. */
#ifndef UFO_KNOWLEDGE_H_INCLUDED
#define UFO_KNOWLEDGE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_kb.h"
#include "ufo_value.h"

//  Where to look. Borrowed; lists may be NULL.
typedef struct {
    const ufo_value_t *help_dirs;   //  list of directories like "/usr/share/help"
    const char *lang;               //  subdirectory of each help dir, e.g. "C"
    const ufo_value_t *man_dirs;    //  list of directories like "/usr/share/man"
    const ufo_value_t *launchers;   //  map name -> argv list (desktop.launchers)
    const ufo_value_t *folders;     //  map app -> list of directories of notes
    const char *app;                //  only this application; NULL: all
    size_t max_file_bytes;          //  larger files are skipped
} ufo_knowledge_opts_t;

//  Fills opts from a configuration (knowledge.* and desktop.launchers); app is NULL.
//  The values stay owned by config.
void ufo_knowledge_opts_from_config (ufo_knowledge_opts_t *opts, const ufo_config_t *config);

typedef struct {
    size_t files;           //  documents found
    size_t indexed;         //  read and indexed (new or changed)
    size_t unchanged;       //  skipped: same mtime and size as when indexed
    size_t skipped;         //  could not be read (logged)
    size_t removed;         //  sources gone since the last run
    size_t passages;        //  passages added
} ufo_knowledge_stats_t;

//  Called before each document: done of total so far, and its path.
typedef void (ufo_knowledge_progress_fn) (size_t done, size_t total, const char *path, void *arg);

//  Indexes the documents opts names into kb, in one transaction. progress may be NULL.
//  Fills *stats. Returns 0, or -1 with err when the index cannot be written (a bad document
//  is not an error: it is skipped and counted).
int ufo_knowledge_index (ufo_kb_t *kb, const ufo_knowledge_opts_t *opts,
                         ufo_knowledge_progress_fn *progress, void *arg,
                         ufo_knowledge_stats_t *stats, ufo_error_t *err);

//  The index file the configuration names (knowledge.index), written into out[size].
//  Returns false when it does not fit.
bool ufo_knowledge_index_path (const ufo_config_t *config, char *out, size_t size);

//  Retrieves the top topk help passages for a query and application as a new list of
//  {"title", "text", "source", "ref", "score"} (empty when the index is absent, has none or
//  fails: retrieval never stops a session; failures are logged). max_text bounds each
//  passage's text in bytes (cut at a character boundary, "..." appended).
ufo_value_t *ufo_knowledge_retrieve (ufo_kb_t *kb, const char *kind, const char *query,
                                     const char *app, size_t topk, size_t max_text);

//  The same, re-ranked by cosine similarity with the query's vector qvec[n] (ufo_kb_search;
//  NULL: BM25 alone).
ufo_value_t *ufo_knowledge_retrieve_ranked (ufo_kb_t *kb, const char *kind, const char *query,
                                            const char *app, size_t topk, size_t max_text,
                                            const float *qvec, size_t n);

#endif
