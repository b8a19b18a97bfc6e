/*  ufo_embed.h - text embeddings from an OpenAI-compatible /embeddings endpoint, for the
    optional re-ranking of the knowledge index (knowledge.embeddings_*, docs/KNOWLEDGE.md).

    POST {"model": M, "input": [texts]} to the endpoint; the reply's data[i].embedding (in
    "index" order) is the vector of texts[i]. This call waits for the answer (it runs its own
    poll loop on a private ufo_http client): it is for `ufo knowledge index|search`, not for
    an agent's event loop. ufo_embed_start is the same request on the caller's ufo_http
    client, for an event loop (the agents' query embeddings, ufo_rag). */
#ifndef UFO_EMBED_H_INCLUDED
#define UFO_EMBED_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_value.h"

typedef struct {
    const char *url;            //  the /embeddings URL ("" : embeddings are off)
    const char *model;
    const char *api_key;        //  sent as "Authorization: Bearer KEY" when not empty
    long timeout_ms;
} ufo_embed_opts_t;

//  Fills opts from a configuration (borrowed strings). Returns true when embeddings are on.
bool ufo_embed_opts_from_config (ufo_embed_opts_t *opts, const ufo_config_t *config);

//  The vectors of texts (a list of strings, 1..256): a new list of lists of floats, one per
//  text, all of the same dimension. NULL with err (endpoint down, timeout, HTTP error, a
//  reply of the wrong shape or with vectors of different sizes).
ufo_value_t *ufo_embed_texts (const ufo_embed_opts_t *opts, const ufo_value_t *texts, ufo_error_t *err);

typedef struct _ufo_embed_req_t ufo_embed_req_t;

//  Called once with the vectors (as ufo_embed_texts returns them; the callee may take them
//  by setting *vectors_p to NULL), or with NULL and error saying why.
typedef void (ufo_embed_fn) (ufo_value_t **vectors_p, const char *error, void *arg);

//  Starts the request of ufo_embed_texts on http (non-blocking; bounded by opts->timeout_ms):
//  done is called from ufo_http_process, once, unless the request is cancelled first.
//  Returns the request (valid until done runs or ufo_embed_cancel), or NULL with err.
ufo_embed_req_t *ufo_embed_start (ufo_http_t *http, const ufo_embed_opts_t *opts, const ufo_value_t *texts,
                                  ufo_embed_fn *done, void *arg, ufo_error_t *err);

//  Cancels a request whose done has not run yet (it will not run); sets *req_p to NULL.
void ufo_embed_cancel (ufo_embed_req_t **req_p);

//  Copies a vector value (list of numbers) into out[max]; returns its length, 0 if not one.
size_t ufo_embed_floats (const ufo_value_t *vector, float *out, size_t max);

#endif
