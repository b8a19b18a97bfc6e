/*  ufo_rag.c - retrieval for the agents' prompts (see ufo_rag.h). */
#include "ufo_prelude.h"
#include "ufo_http.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_kb.h"
#include "ufo_knowledge.h"
#include "ufo_embed.h"
#include "ufo_websearch.h"
#include "ufo_rag.h"

#define S_MAX_DIM 4096

struct _ufo_rag_t {
    char index_path [PATH_MAX];
    ufo_kb_t *kb;               //  opened at the first retrieval
    bool kb_failed;             //  opening failed once: not tried again (logged once)
    bool offline_docs;          //  RAG_OFFLINE_DOCS
    size_t offline_topk;        //  RAG_OFFLINE_DOCS_RETRIEVED_TOPK
    size_t prompt_bytes;        //  knowledge.prompt_bytes
    //  asynchronous part (ufo_rag_prefetch): the query's embedding and the subtask's web search
    ufo_http_t *http;           //  made at the first prefetch that needs it
    char *query;                //  the subtask prefetched for
    uint64_t generation;        //  counts prefetches: late answers of an older one are dropped
    bool embeddings;            //  knowledge.embeddings_url set (and RAG_OFFLINE_DOCS on)
    char embed_url [1024], embed_model [192], embed_key [512];
    long embed_timeout_ms;
    ufo_embed_req_t *embed_req; //  in flight, or NULL
    float *qvec;                //  the query's vector, once it came
    size_t qdim;
    bool online;                //  RAG_ONLINE_SEARCH: the AppAgent searches for its subtask
    size_t online_topk;         //  RAG_ONLINE_RETRIEVED_TOPK
    char search_provider [16], search_endpoint [1024], search_key [512];
    long search_timeout_ms;
    size_t search_count;
    size_t searches;            //  in flight (their callbacks free their tokens)
    bool searches_idle;         //  searches == 0 (for the bounded wait at destroy)
    ufo_value_t *online_docs;   //  results for query, once they came
};

typedef struct {
    ufo_rag_t *rag;
    uint64_t generation;
} s_token_t;

ufo_rag_t *
ufo_rag_new (const ufo_config_t *config)
{
    ufo_rag_t *self = ufo_calloc (1, sizeof *self);
    if (!ufo_knowledge_index_path (config, self->index_path, sizeof self->index_path))
        self->kb_failed = true;
    self->offline_docs = ufo_config_bool (config, "RAG_OFFLINE_DOCS", false);
    self->offline_topk = (size_t) ufo_config_int (config, "RAG_OFFLINE_DOCS_RETRIEVED_TOPK", 1);
    self->prompt_bytes = (size_t) ufo_config_int (config, "knowledge.prompt_bytes", 1500);
    ufo_embed_opts_t eopts;
    self->embeddings = self->offline_docs && ufo_embed_opts_from_config (&eopts, config);
    if (self->embeddings) {
        snprintf (self->embed_url, sizeof self->embed_url, "%s", eopts.url);
        snprintf (self->embed_model, sizeof self->embed_model, "%s", eopts.model ? eopts.model : "");
        snprintf (self->embed_key, sizeof self->embed_key, "%s", eopts.api_key ? eopts.api_key : "");
    }
    //  the agent never waits for it: past this bound the passages stay in BM25 order
    self->embed_timeout_ms = (long) ufo_config_int (config, "knowledge.search_timeout_ms", 3000);
    ufo_websearch_opts_t wopts;
    ufo_websearch_opts_from_config (&wopts, config);
    self->online = ufo_config_bool (config, "RAG_ONLINE_SEARCH", false) && wopts.endpoint && *wopts.endpoint;
    self->online_topk = (size_t) ufo_config_int (config, "RAG_ONLINE_RETRIEVED_TOPK", 1);
    snprintf (self->search_provider, sizeof self->search_provider, "%s", wopts.provider ? wopts.provider : "");
    snprintf (self->search_endpoint, sizeof self->search_endpoint, "%s", wopts.endpoint ? wopts.endpoint : "");
    snprintf (self->search_key, sizeof self->search_key, "%s", wopts.key ? wopts.key : "");
    self->search_timeout_ms = wopts.timeout_ms;
    self->search_count = wopts.count;
    return self;
}

void
ufo_rag_destroy (ufo_rag_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_rag_t *self = *self_p;
    ufo_embed_cancel (&self->embed_req);
    //  a search's state is freed by its callback: let the ones in flight end (bounded)
    self->searches_idle = self->searches == 0;
    if (!self->searches_idle && self->http)
        ufo_http_wait (self->http, &self->searches_idle, (int) self->search_timeout_ms + 500);
    ufo_http_destroy (&self->http);
    ufo_kb_destroy (&self->kb);
    ufo_value_destroy (&self->online_docs);
    free (self->qvec);
    free (self->query);
    free (self);
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

static void
s_embedded (ufo_value_t **vectors_p, const char *error, void *arg)
{
    ufo_rag_t *self = arg;
    self->embed_req = NULL;
    if (!*vectors_p) {
        ufo_warn ("knowledge: no embedding of the subtask (%s); help passages stay in BM25 order", error);
        return;
    }
    float *vec = ufo_malloc (S_MAX_DIM * sizeof *vec);
    size_t n = ufo_embed_floats (ufo_value_list_at (*vectors_p, 0), vec, S_MAX_DIM);
    if (n == 0) {
        free (vec);
        ufo_warn ("knowledge: the subtask's embedding is not a vector of at most %d numbers", S_MAX_DIM);
        return;
    }
    free (self->qvec);
    self->qvec = vec;
    self->qdim = n;
}

static void
s_searched (ufo_value_t **results_p, const char *error, void *arg)
{
    s_token_t *token = arg;
    ufo_rag_t *self = token->rag;
    self->searches--;
    self->searches_idle = self->searches == 0;
    if (token->generation == self->generation) {
        if (results_p && *results_p) {
            ufo_value_destroy (&self->online_docs);
            self->online_docs = *results_p;
            *results_p = NULL;
            while (ufo_value_size (self->online_docs) > self->online_topk)
                ufo_value_list_remove (self->online_docs, ufo_value_size (self->online_docs) - 1);
        }
        else
            ufo_warn ("knowledge: web search for the subtask failed (%s); no online docs", error);
    }
    free (token);
}

void
ufo_rag_prefetch (ufo_rag_t *self, const char *subtask)
{
    if (!self || !subtask || !*subtask || !(self->embeddings || (self->online && self->online_topk > 0))
    ||  (self->query && strcmp (self->query, subtask) == 0))
        return;
    free (self->query);
    self->query = ufo_strdup (subtask);
    self->generation++;
    ufo_embed_cancel (&self->embed_req);
    free (self->qvec);
    self->qvec = NULL;
    self->qdim = 0;
    ufo_value_destroy (&self->online_docs);
    if (!self->http && !(self->http = ufo_http_new ())) {
        ufo_warn ("knowledge: cannot start an HTTP client: no embeddings, no web search");
        return;
    }
    ufo_error_t err = {0};
    if (self->embeddings) {
        ufo_embed_opts_t opts = { self->embed_url, self->embed_model, self->embed_key, self->embed_timeout_ms };
        ufo_value_t *texts = ufo_value_new_list ();
        ufo_value_list_push_str (texts, subtask);
        self->embed_req = ufo_embed_start (self->http, &opts, texts, s_embedded, self, &err);
        ufo_value_destroy (&texts);
        if (!self->embed_req)
            ufo_warn ("knowledge: cannot embed the subtask: %s", err.message);
    }
    if (self->online && self->online_topk > 0) {
        ufo_websearch_opts_t opts = { self->search_provider, self->search_endpoint, self->search_key,
                                      self->search_timeout_ms, self->search_count, self->prompt_bytes };
        s_token_t *token = ufo_calloc (1, sizeof *token);
        token->rag = self;
        token->generation = self->generation;
        if (ufo_websearch_start (self->http, &opts, subtask, s_searched, token, &err) < 0) {
            ufo_warn ("knowledge: cannot search the web for the subtask: %s", err.message);
            free (token);
        }
        else
            self->searches++;
    }
}

size_t
ufo_rag_fds (const ufo_rag_t *self, ufo_http_fd_t *fds, size_t max)
{
    return self && self->http ? ufo_http_fds (self->http, fds, max) : 0;
}

int
ufo_rag_timeout (const ufo_rag_t *self)
{
    return self && self->http ? ufo_http_timeout (self->http) : -1;
}

void
ufo_rag_process (ufo_rag_t *self, const ufo_http_fd_t *fds, size_t n)
{
    if (self && self->http)
        ufo_http_process (self->http, fds, n);
}

ufo_value_t *
ufo_rag_for_app (ufo_rag_t *self, const char *subtask, const char *app)
{
    ufo_value_t *out = ufo_value_new_map ();
    if (!self)
        return out;
    if (self->offline_docs && self->offline_topk > 0) {
        bool ranked = self->qvec && self->query && subtask && strcmp (self->query, subtask) == 0;
        ufo_value_t *docs = ufo_knowledge_retrieve_ranked (s_kb (self), "help", subtask, app,
                                                           self->offline_topk, self->prompt_bytes,
                                                           ranked ? self->qvec : NULL, ranked ? self->qdim : 0);
        for (size_t i = 0; i < ufo_value_size (docs); i++)
            ufo_value_map_remove (ufo_value_list_at (docs, i), "ref");
        ufo_value_map_set (out, "offline_docs", &docs);
    }
    if (self->online_docs && self->query && subtask && strcmp (self->query, subtask) == 0
    &&  ufo_value_size (self->online_docs) > 0)
        ufo_value_map_set_copy (out, "online_docs", self->online_docs);
    return out;
}

void
ufo_rag_merge (ufo_value_t *map, const ufo_value_t *knowledge)
{
    for (size_t i = 0; i < ufo_value_size (knowledge) && ufo_value_type (knowledge) == UFO_TMAP; i++)
        ufo_value_map_set_copy (map, ufo_value_map_key_at (knowledge, i),
                                ufo_value_map_value_at (knowledge, i));
}
