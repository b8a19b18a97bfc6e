/*  ufo_rag.h - what the agents retrieve for their prompts (the original's RAG keys): one
    object per agent process that reads the RAG_* keys once, opens the knowledge index when
    first needed, and returns the retrieved passages as the request.log fields of the
    original ("offline_docs", ...), which are also the prompt templates' variables.

    Retrieval never stops a step: a missing index, a failed search or an option that is off
    gives no entry (a missing index is logged once). Every text is bounded
    (knowledge.prompt_bytes per passage, RAG_*_TOPK passages). */
#ifndef UFO_RAG_H_INCLUDED
#define UFO_RAG_H_INCLUDED

#include <stddef.h>
#include "ufo_config.h"
#include "ufo_http.h"
#include "ufo_value.h"

typedef struct _ufo_rag_t ufo_rag_t;

//  Creates the retriever from a configuration (read now; config may be destroyed after).
//  Never fails: with every RAG_* option off it retrieves nothing.
ufo_rag_t *ufo_rag_new (const ufo_config_t *config);

//  Closes the index; sets *self_p to NULL. Safe with NULL and twice.
void ufo_rag_destroy (ufo_rag_t **self_p);

//  Knowledge for one AppAgent step on subtask in application app: a new map holding the
//  fields that are switched on, e.g. {"offline_docs": [{"title", "text", "source", "score"}]}
//  (RAG_OFFLINE_DOCS: the top RAG_OFFLINE_DOCS_RETRIEVED_TOPK help passages of app, re-ranked
//  by the subtask's embedding when ufo_rag_prefetch got it; "online_docs": the web search
//  results for subtask when they came). An empty map when everything is off. self may be
//  NULL (empty map). Never waits for the network.
ufo_value_t *ufo_rag_for_app (ufo_rag_t *self, const char *subtask, const char *app);

//  Starts, without waiting, what retrieval for subtask needs from the network (nothing when
//  it is the subtask already prefetched, or when both are off): the subtask's embedding
//  (knowledge.embeddings_url set and RAG_OFFLINE_DOCS on), so that ufo_rag_for_app re-ranks
//  the help passages by cosine once it has come, and a web search for the subtask
//  (RAG_ONLINE_SEARCH with knowledge.search_endpoint set), whose top
//  RAG_ONLINE_RETRIEVED_TOPK results ufo_rag_for_app gives as "online_docs" once they came.
//  Each is bounded by knowledge.search_timeout_ms; until it has answered - or when it is
//  down, slow or answers garbage (logged) - retrieval is BM25 alone and has no online docs.
//  The caller's loop drives the transfers with ufo_rag_fds / ufo_rag_timeout /
//  ufo_rag_process. self may be NULL.
void ufo_rag_prefetch (ufo_rag_t *self, const char *subtask);

//  The sockets of the prefetch's transfers (as ufo_http_fds), the milliseconds until
//  ufo_rag_process is due without them (-1: none), and its processing (completions run
//  there). Safe with NULL and before any prefetch.
size_t ufo_rag_fds (const ufo_rag_t *self, ufo_http_fd_t *fds, size_t max);
int ufo_rag_timeout (const ufo_rag_t *self);
void ufo_rag_process (ufo_rag_t *self, const ufo_http_fd_t *fds, size_t n);

//  Copies every entry of knowledge (a map from ufo_rag_for_app, may be NULL) into map
//  (template variables or a request.log record).
void ufo_rag_merge (ufo_value_t *map, const ufo_value_t *knowledge);

#endif
