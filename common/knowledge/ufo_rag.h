/*  ufo_rag.h - what the agents retrieve for their prompts (the original's RAG keys): one
    object per agent process that reads the RAG_* keys once, opens the knowledge index when
    first needed, and returns the retrieved passages as the request.log fields of the
    original ("offline_docs", ...), which are also the prompt templates' variables.

    Retrieval never stops a step: a missing index, a failed search or an option that is off
    gives no entry (a missing index is logged once). Every text is bounded
    (knowledge.prompt_bytes per passage, RAG_*_TOPK passages). */
#ifndef UFO_RAG_H_INCLUDED
#define UFO_RAG_H_INCLUDED

#include "ufo_config.h"
#include "ufo_value.h"

typedef struct _ufo_rag_t ufo_rag_t;

//  Creates the retriever from a configuration (read now; config may be destroyed after).
//  Never fails: with every RAG_* option off it retrieves nothing.
ufo_rag_t *ufo_rag_new (const ufo_config_t *config);

//  Closes the index; sets *self_p to NULL. Safe with NULL and twice.
void ufo_rag_destroy (ufo_rag_t **self_p);

//  Knowledge for one AppAgent step on subtask in application app: a new map holding the
//  fields that are switched on, e.g. {"offline_docs": [{"title", "text", "source", "score"}]}
//  (RAG_OFFLINE_DOCS: the top RAG_OFFLINE_DOCS_RETRIEVED_TOPK help passages of app). An
//  empty map when everything is off. self may be NULL (empty map).
ufo_value_t *ufo_rag_for_app (ufo_rag_t *self, const char *subtask, const char *app);

//  Copies every entry of knowledge (a map from ufo_rag_for_app, may be NULL) into map
//  (template variables or a request.log record).
void ufo_rag_merge (ufo_value_t *map, const ufo_value_t *knowledge);

#endif
