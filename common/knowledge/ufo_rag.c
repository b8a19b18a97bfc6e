/*  ufo_rag.c - retrieval for the agents' prompts (see ufo_rag.h). */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_kb.h"
#include "ufo_knowledge.h"
#include "ufo_rag.h"

struct _ufo_rag_t {
    char index_path [PATH_MAX];
    ufo_kb_t *kb;               //  opened at the first retrieval
    bool kb_failed;             //  opening failed once: not tried again (logged once)
    bool offline_docs;          //  RAG_OFFLINE_DOCS
    size_t offline_topk;        //  RAG_OFFLINE_DOCS_RETRIEVED_TOPK
    size_t prompt_bytes;        //  knowledge.prompt_bytes
};

ufo_rag_t *
ufo_rag_new (const ufo_config_t *config)
{
    ufo_rag_t *self = ufo_calloc (1, sizeof *self);
    if (!ufo_knowledge_index_path (config, self->index_path, sizeof self->index_path))
        self->kb_failed = true;
    self->offline_docs = ufo_config_bool (config, "RAG_OFFLINE_DOCS", false);
    self->offline_topk = (size_t) ufo_config_int (config, "RAG_OFFLINE_DOCS_RETRIEVED_TOPK", 1);
    self->prompt_bytes = (size_t) ufo_config_int (config, "knowledge.prompt_bytes", 1500);
    return self;
}

void
ufo_rag_destroy (ufo_rag_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_kb_destroy (&(*self_p)->kb);
    free (*self_p);
    *self_p = NULL;
}

//  The index, opened once; NULL when it is absent or broken (logged once).
static ufo_kb_t *
s_kb (ufo_rag_t *self)
{
    if (self->kb || self->kb_failed)
        return self->kb;
    //  an agent never creates the index: an absent one means nobody ran `ufo knowledge index`
    if (access (self->index_path, R_OK) != 0) {
        ufo_warn ("knowledge: no index at %s (run `ufo knowledge index`); retrieving nothing",
                  self->index_path);
        self->kb_failed = true;
        return NULL;
    }
    ufo_error_t err = {0};
    self->kb = ufo_kb_open (self->index_path, &err);
    if (!self->kb) {
        ufo_warn ("knowledge: %s; retrieving nothing", err.message);
        self->kb_failed = true;
    }
    return self->kb;
}

ufo_value_t *
ufo_rag_for_app (ufo_rag_t *self, const char *subtask, const char *app)
{
    ufo_value_t *out = ufo_value_new_map ();
    if (!self)
        return out;
    if (self->offline_docs && self->offline_topk > 0) {
        ufo_value_t *docs = ufo_knowledge_retrieve (s_kb (self), "help", subtask, app,
                                                    self->offline_topk, self->prompt_bytes);
        for (size_t i = 0; i < ufo_value_size (docs); i++)
            ufo_value_map_remove (ufo_value_list_at (docs, i), "ref");
        ufo_value_map_set (out, "offline_docs", &docs);
    }
    return out;
}

void
ufo_rag_merge (ufo_value_t *map, const ufo_value_t *knowledge)
{
    for (size_t i = 0; i < ufo_value_size (knowledge) && ufo_value_type (knowledge) == UFO_TMAP; i++)
        ufo_value_map_set_copy (map, ufo_value_map_key_at (knowledge, i),
                                ufo_value_map_value_at (knowledge, i));
}
