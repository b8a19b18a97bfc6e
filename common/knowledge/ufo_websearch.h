/*  ufo_websearch.h - web search for the agents' prompts (RAG_ONLINE_SEARCH): one query to a
    configured search API over the caller's ufo_http client (asynchronous, bounded by a
    timeout), answered with the top results' titles, URLs and snippets.

    Providers (knowledge.search_provider):
      "bing"    - Bing Web Search v7: GET ENDPOINT?q=QUERY&count=N with the key in
                  Ocp-Apim-Subscription-Key (BING_API_KEY); results in webPages.value[]
                  {name, url, snippet}.
      "searxng" - SearXNG's JSON API: GET ENDPOINT?q=QUERY&format=json; results in
                  results[] {title, url, content}. */
#ifndef UFO_WEBSEARCH_H_INCLUDED
#define UFO_WEBSEARCH_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_value.h"

typedef struct {
    const char *provider;       //  "bing" | "searxng"
    const char *endpoint;       //  the search URL (without query)
    const char *key;            //  bing: the subscription key ("" for none)
    long timeout_ms;            //  bound of the whole request
    size_t count;               //  results asked for (RAG_ONLINE_SEARCH_TOPK)
    size_t max_text;            //  bound of each snippet in bytes (0: none)
} ufo_websearch_opts_t;

//  Fills opts from a configuration (borrowed strings).
void ufo_websearch_opts_from_config (ufo_websearch_opts_t *opts, const ufo_config_t *config);

//  Called once with the results (a list of {"title", "url", "snippet"}, ownership passed;
//  NULL on failure with error saying why: "timed out after 1000 ms", "HTTP 500", ...).
typedef void (ufo_websearch_fn) (ufo_value_t **results_p, const char *error, void *arg);

//  Starts a search of query on http. done is always called, within opts->timeout_ms (do not
//  cancel the transfer: its state is freed by the callback). Returns the transfer's id, or
//  -1 with err (unknown provider, empty query, no endpoint); done is not called then.
int64_t ufo_websearch_start (ufo_http_t *http, const ufo_websearch_opts_t *opts, const char *query,
                             ufo_websearch_fn *done, void *arg, ufo_error_t *err);

//  Parses a response body of provider into at most count results. Returns a new list, or
//  NULL with err when the body is not the provider's JSON shape.
ufo_value_t *ufo_websearch_parse (const char *provider, const char *body, size_t len, size_t count,
                                  size_t max_text, ufo_error_t *err);

#endif
