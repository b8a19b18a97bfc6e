/*  test_websearch.c - web search for the agents (ufo_websearch over ufo_http) against
    tests/ufo-search-server on loopback: the Bing v7 and SearXNG shapes, a missing key, a body
    that is not JSON, an HTTP error, an endpoint that is down and one that is too slow. And
    embeddings (ufo_embed, the server's toy /v1/embeddings): cosine re-ranking finds a passage
    BM25 cannot, through the library and through `ufo knowledge index|search`; with the
    endpoint down, search falls back to BM25. */
#include "ufo_prelude.h"
#include "ufo_config.h"
#include "ufo_clock.h"
#include "ufo_embed.h"
#include "ufo_error.h"
#include "ufo_http.h"
#include "ufo_json.h"
#include "ufo_kb.h"
#include "ufo_value.h"
#include "ufo_websearch.h"
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "ufo_test.h"
#include "search_server_fixture.h"
#include "test_files.h"
#include "ufo_rag.h"

static char s_dir [64];
static int s_port;

typedef struct {
    bool done;
    ufo_value_t *results;
    char error [320];
} s_got_t;

static void
s_done (ufo_value_t **results_p, const char *error, void *arg)
{
    s_got_t *got = arg;
    got->done = true;
    got->results = results_p ? *results_p : NULL;
    if (results_p)
        *results_p = NULL;
    snprintf (got->error, sizeof got->error, "%s", error ? error : "");
}

//  Runs one search to its end (bounded: 20 s). *elapsed_ms_p gets its duration.
static void
s_search (const char *provider, const char *path, const char *key, long timeout_ms, size_t count,
          const char *query, s_got_t *got, int64_t *elapsed_ms_p)
{
    memset (got, 0, sizeof *got);
    char endpoint [256];
    snprintf (endpoint, sizeof endpoint, "http://127.0.0.1:%d%s", s_port, path);
    ufo_websearch_opts_t opts = { provider, endpoint, key, timeout_ms, count, 40 };
    ufo_http_t *http = ufo_http_new ();
    ufo_error_t err = {0};
    int64_t start = ufo_time_mono_ms ();
    if (ufo_websearch_start (http, &opts, query, s_done, got, &err) < 0) {
        snprintf (got->error, sizeof got->error, "start: %s", err.message);
        got->done = true;
    }
    if (!got->done)
        ufo_http_wait (http, &got->done, 20000);
    *elapsed_ms_p = ufo_time_mono_ms () - start;
    ufo_http_destroy (&http);
}

UFO_TEST (test_bing_shape)
{
    s_got_t got;
    int64_t ms;
    s_search ("bing", "/bing/v7.0/search", "test-key", 5000, 5, "convert dollars & euros", &got, &ms);
    REQUIRE (got.done && got.results);
    CHECK_INT (ufo_value_size (got.results), 3);        //  the entry without a name is skipped
    const ufo_value_t *r0 = ufo_value_list_at (got.results, 0);
    CHECK_STR (ufo_value_map_str (r0, "title", ""), "Bing result 1 about convert dollars & euros");
    CHECK_STR (ufo_value_map_str (r0, "url", ""), "https://example.org/bing/1");
    //  snippets cut at max_text (40 bytes) with "..."
    CHECK_STR (ufo_value_map_str (r0, "snippet", ""), "How to convert dollars & euros, step by ...");
    ufo_value_destroy (&got.results);
    //  count is passed on and honoured
    s_search ("bing", "/bing/v7.0/search", "test-key", 5000, 2, "x", &got, &ms);
    CHECK_INT (ufo_value_size (got.results), 2);
    ufo_value_destroy (&got.results);
    char path [128];
    snprintf (path, sizeof path, "%s/requests.log", s_dir);
    FILE *f = fopen (path, "r");
    REQUIRE (f);
    char line [512];
    bool seen = false;
    while (fgets (line, sizeof line, f))
        seen |= strstr (line, "GET /bing/v7.0/search?q=convert%20dollars%20%26%20euros&count=5") != NULL;
    fclose (f);
    CHECK (seen);
    //  without the key: the API's 401 is the error
    s_search ("bing", "/bing/v7.0/search", "", 5000, 5, "x", &got, &ms);
    CHECK (got.done && !got.results);
    CHECK_STR (got.error, "HTTP 401");
}

UFO_TEST (test_searxng_shape)
{
    s_got_t got;
    int64_t ms;
    s_search ("searxng", "/searxng/search", NULL, 5000, 5, "calculator percentage", &got, &ms);
    REQUIRE (got.done && got.results);
    CHECK_INT (ufo_value_size (got.results), 2);
    const ufo_value_t *r0 = ufo_value_list_at (got.results, 0);
    CHECK_STR (ufo_value_map_str (r0, "title", ""), "SearXNG result 1 about calculator percentage");
    CHECK_STR (ufo_value_map_str (r0, "snippet", ""), "Guide: calculator percentage.");
    ufo_value_destroy (&got.results);
}

UFO_TEST (test_failures)
{
    s_got_t got;
    int64_t ms;
    s_search ("searxng", "/broken", NULL, 5000, 5, "x", &got, &ms);
    CHECK (got.done && !got.results && *got.error);
    s_search ("searxng", "/error", NULL, 5000, 5, "x", &got, &ms);
    CHECK_STR (got.error, "HTTP 500");
    //  too slow: given up at the timeout, long before the server would answer (30 s)
    s_search ("searxng", "/slow", NULL, 500, 5, "x", &got, &ms);
    CHECK (got.done && !got.results);
    CHECK_STR (got.error, "timed out after 500 ms");
    CHECK (ms < 15000);
    //  down: a port nobody listens on
    int s = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    REQUIRE (bind (s, (struct sockaddr *) &a, sizeof a) == 0 && getsockname (s, (struct sockaddr *) &a, &alen) == 0);
    close (s);
    int saved = s_port;
    s_port = ntohs (a.sin_port);
    s_search ("searxng", "/searxng/search", NULL, 5000, 5, "x", &got, &ms);
    s_port = saved;
    CHECK (got.done && !got.results && *got.error);
    //  refused before starting: bad provider, empty query, no endpoint
    ufo_http_t *http = ufo_http_new ();
    ufo_error_t err = {0};
    ufo_websearch_opts_t opts = { "google", "http://127.0.0.1:1/", "", 1000, 5, 0 };
    CHECK (ufo_websearch_start (http, &opts, "x", s_done, &got, &err) < 0);
    CHECK_CONTAINS (err.message, "unknown search provider");
    opts.provider = "bing";
    CHECK (ufo_websearch_start (http, &opts, "", s_done, &got, &err) < 0);
    opts.endpoint = "";
    CHECK (ufo_websearch_start (http, &opts, "x", s_done, &got, &err) < 0);
    ufo_http_destroy (&http);
    //  shapes: Bing without webPages is no result; a SearXNG reply without results is an error
    ufo_value_t *r = ufo_websearch_parse ("bing", "{\"_type\": \"SearchResponse\"}", 27, 5, 0, &err);
    CHECK (r && ufo_value_size (r) == 0);
    ufo_value_destroy (&r);
    CHECK (ufo_websearch_parse ("searxng", "{\"query\": \"x\"}", 14, 5, 0, &err) == NULL);
    CHECK (ufo_websearch_parse ("searxng", "[1, 2]", 6, 5, 0, &err) == NULL);
}

UFO_TEST (test_embeddings_rerank)
{
    char url [128];
    snprintf (url, sizeof url, "http://127.0.0.1:%d/v1/embeddings", s_port);
    ufo_embed_opts_t eopts = { url, "toy", "", 5000 };
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (":memory:", &err);
    REQUIRE (kb);
    ufo_kb_passage_t a = { "help", "calc", "a.md", "Addition", "Addition of values: put two numbers together", NULL };
    ufo_kb_passage_t b = { "help", "calc", "b.md", "Saving", "Press Ctrl+S to keep the document on disk", NULL };
    int64_t ida = ufo_kb_add (kb, &a, &err), idb = ufo_kb_add (kb, &b, &err);
    REQUIRE (ida > 0 && idb > 0);
    //  BM25 alone: "plus" is in no passage
    ufo_value_t *hits = ufo_kb_search (kb, "plus", "help", NULL, 2, NULL, 0, &err);
    CHECK_INT (ufo_value_size (hits), 0);
    ufo_value_destroy (&hits);
    ufo_value_t *texts = ufo_json_parse_str ("[\"Addition of values: put two numbers together\","
                                             " \"Press Ctrl+S to keep the document on disk\", \"plus\"]", NULL);
    ufo_value_t *vectors = ufo_embed_texts (&eopts, texts, &err);
    REQUIRE (vectors && ufo_value_size (vectors) == 3);
    float v [3][64];
    size_t n = 0;
    for (int i = 0; i < 3; i++)
        n = ufo_embed_floats (ufo_value_list_at (vectors, (size_t) i), v [i], 64);
    CHECK_INT (n, 16);
    CHECK_INT (ufo_kb_set_vector (kb, ida, v [0], n, &err), 0);
    CHECK_INT (ufo_kb_set_vector (kb, idb, v [1], n, &err), 0);
    hits = ufo_kb_search (kb, "plus", "help", NULL, 2, v [2], n, &err);
    REQUIRE (ufo_value_size (hits) >= 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (hits, 0), "title", ""), "Addition");
    ufo_value_destroy (&hits);
    ufo_value_destroy (&vectors);
    ufo_value_destroy (&texts);
    ufo_kb_destroy (&kb);
    //  a down endpoint and bad input: errors, no crash
    texts = ufo_json_parse_str ("[\"x\"]", NULL);
    ufo_embed_opts_t down = { "http://127.0.0.1:1/v1/embeddings", "toy", "", 2000 };
    CHECK (ufo_embed_texts (&down, texts, &err) == NULL);
    ufo_embed_opts_t wrong = { url, "toy", "", 2000 };
    char bad_url [160];
    snprintf (bad_url, sizeof bad_url, "http://127.0.0.1:%d/searxng/search?format=json", s_port);
    wrong.url = bad_url;                    //  answers JSON of another shape
    CHECK (ufo_embed_texts (&wrong, texts, &err) == NULL);
    ufo_value_destroy (&texts);

    //  the same through `ufo knowledge index|search`
    char notes [128], cfg [128], cmd [1200], out [256];
    snprintf (notes, sizeof notes, "%s/notes", s_dir);
    mkdir (notes, 0755);
    snprintf (cmd, sizeof cmd, "%s/calc.md", notes);
    FILE *f = fopen (cmd, "w");
    REQUIRE (f);
    fputs ("# Calc\n\n## Addition\n\nAddition of values: put two numbers together.\n\n"
           "## Saving\n\nPress Ctrl+S to keep the document on disk.\n", f);
    fclose (f);
    const char *ports [] = { url, "http://127.0.0.1:1/v1/embeddings" };
    for (int k = 0; k < 2; k++) {
        snprintf (cfg, sizeof cfg, "%s/ufo-%d.json", s_dir, k);
        f = fopen (cfg, "w");
        REQUIRE (f);
        fprintf (f, "{\"knowledge\": {\"index\": \"%s/kb-%d.db\", \"help_dirs\": [], \"man_dirs\": [],"
                    " \"folders\": {\"calc\": [\"%s\"]}, \"embeddings_url\": \"%s\", \"search_timeout_ms\": 500}}",
                 s_dir, k, notes, ports [k]);
        fclose (f);
        snprintf (out, sizeof out, "%s/cli-%d.out", s_dir, k);
        snprintf (cmd, sizeof cmd, "'%s/cli/ufo' knowledge index --config '%s' > '%s' 2>&1 &&"
                  " '%s/cli/ufo' knowledge search plus --json --config '%s' >> '%s' 2>&1",
                  getenv ("UFO_BUILD_DIR"), cfg, out, getenv ("UFO_BUILD_DIR"), cfg, out);
        CHECK_INT (system (cmd), 0);
        char *text = tf_read_text (out);
        if (k == 0) {
            CHECK_CONTAINS (text, "2 passages embedded (text-embedding-3-small)");
            CHECK_CONTAINS (text, "[{\"id\":");
            CHECK_CONTAINS (text, "\"title\":\"Calc \xe2\x80\xba Addition\"");
        }
        else {
            CHECK_CONTAINS (text, "embeddings stopped");
            CHECK_CONTAINS (text, "no query embedding, BM25 alone");
            CHECK_CONTAINS (text, "[]");
        }
        free (text);
    }
}

//  Drives rag's transfers until done(rag) or timeout_ms; returns done's last answer.
static bool
s_rag_until (ufo_rag_t *rag, bool (*done) (ufo_rag_t *rag), int timeout_ms)
{
    int64_t until = ufo_time_mono_ms () + timeout_ms;
    while (!done (rag) && ufo_time_mono_ms () < until) {
        ufo_http_fd_t hfds [8];
        struct pollfd pfds [8];
        size_t n = ufo_rag_fds (rag, hfds, 8);
        for (size_t i = 0; i < n && i < 8; i++)
            pfds [i] = (struct pollfd) { hfds [i].fd, (short) ((hfds [i].events & UFO_HTTP_IN ? POLLIN : 0)
                                                             | (hfds [i].events & UFO_HTTP_OUT ? POLLOUT : 0)), 0 };
        int t = ufo_rag_timeout (rag);
        poll (pfds, (nfds_t) (n < 8 ? n : 8), t < 0 || t > 50 ? 50 : t);
        for (size_t i = 0; i < n && i < 8; i++)
            hfds [i].revents = (pfds [i].revents & POLLIN ? UFO_HTTP_IN : 0) | (pfds [i].revents & POLLOUT ? UFO_HTTP_OUT : 0)
                             | (pfds [i].revents & (POLLERR | POLLHUP) ? UFO_HTTP_ERR : 0);
        ufo_rag_process (rag, hfds, n < 8 ? n : 8);
    }
    return done (rag);
}

static const char *s_rag_query = "plus";

//  True when the passages of s_rag_query are re-ranked and its online docs came.
static bool
s_rag_ready (ufo_rag_t *rag)
{
    ufo_value_t *k = ufo_rag_for_app (rag, s_rag_query, "calc");
    bool ready = ufo_value_size (ufo_value_map_get (k, "offline_docs")) > 0
              && ufo_value_size (ufo_value_map_get (k, "online_docs")) > 0;
    ufo_value_destroy (&k);
    return ready;
}

//  True when rag has no transfer left (they ended, by answer, error or timeout).
static bool
s_rag_idle (ufo_rag_t *rag)
{
    ufo_http_fd_t fds [8];
    return ufo_rag_fds (rag, fds, 8) == 0 && ufo_rag_timeout (rag) < 0;
}

//  The agents' retrieval (ufo_rag, as ufo-app uses it): the subtask's embedding and web
//  search are prefetched without waiting, the loop drives them, and once they came the help
//  passages are re-ranked by cosine (finding one BM25 cannot) and the subtask's own web
//  results are there; with the endpoints down or slow, BM25 alone and no online docs.
UFO_TEST (test_rag_async)
{
    char index [128], url [128];
    snprintf (index, sizeof index, "%s/rag-kb.db", s_dir);
    snprintf (url, sizeof url, "http://127.0.0.1:%d/v1/embeddings", s_port);
    ufo_error_t err = {0};
    ufo_kb_t *kb = ufo_kb_open (index, &err);
    REQUIRE (kb);
    const char *texts_json = "[\"Addition of values: put two numbers together\", \"Press Ctrl+S to keep the document on disk\"]";
    ufo_value_t *texts = ufo_json_parse_str (texts_json, NULL);
    ufo_embed_opts_t eopts = { url, "toy", "", 5000 };
    ufo_value_t *vectors = ufo_embed_texts (&eopts, texts, &err);
    REQUIRE (vectors);
    for (size_t i = 0; i < 2; i++) {
        ufo_kb_passage_t p = { "help", "calc", i ? "b.md" : "a.md", i ? "Saving" : "Addition",
                               ufo_value_str (ufo_value_list_at (texts, i)), NULL };
        int64_t id = ufo_kb_add (kb, &p, &err);
        float v [64];
        size_t n = ufo_embed_floats (ufo_value_list_at (vectors, i), v, 64);
        CHECK_INT (ufo_kb_set_vector (kb, id, v, n, &err), 0);
    }
    ufo_value_destroy (&vectors);
    ufo_value_destroy (&texts);
    ufo_kb_destroy (&kb);
    for (int k = 0; k < 2; k++) {
        char json [1200];
        snprintf (json, sizeof json,
                  "{\"RAG_OFFLINE_DOCS\": true, \"RAG_OFFLINE_DOCS_RETRIEVED_TOPK\": 1, \"RAG_ONLINE_SEARCH\": true,"
                  " \"RAG_ONLINE_RETRIEVED_TOPK\": 2, \"knowledge\": {\"index\": \"%s\", \"embeddings_url\": \"%s\","
                  " \"search_provider\": \"searxng\", \"search_endpoint\": \"http://127.0.0.1:%d/%s\","
                  " \"search_timeout_ms\": 700}}",
                  index, k == 0 ? url : "http://127.0.0.1:1/v1/embeddings", s_port,
                  k == 0 ? "searxng/search" : "slow");
        ufo_config_t *config = ufo_config_new ();
        REQUIRE (ufo_config_load_text (config, json, strlen (json), &err) == 0);
        ufo_rag_t *rag = ufo_rag_new (config);
        ufo_config_destroy (&config);           //  the retriever keeps what it needs
        //  before the prefetch: BM25 alone ("plus" is in no passage), no online docs
        ufo_value_t *got = ufo_rag_for_app (rag, "plus", "calc");
        CHECK_INT (ufo_value_size (ufo_value_map_get (got, "offline_docs")), 0);
        CHECK (!ufo_value_map_has (got, "online_docs"));
        ufo_value_destroy (&got);
        ufo_rag_prefetch (rag, "plus");
        got = ufo_rag_for_app (rag, "plus", "calc");     //  the prompt never waits
        CHECK (!ufo_value_map_has (got, "online_docs"));
        ufo_value_destroy (&got);
        if (k == 0) {
            CHECK (s_rag_until (rag, s_rag_ready, 10000));
            got = ufo_rag_for_app (rag, "plus", "calc");
            const ufo_value_t *docs = ufo_value_map_get (got, "offline_docs");
            CHECK_INT (ufo_value_size (docs), 1);
            CHECK_STR (ufo_value_map_str (ufo_value_list_at (docs, 0), "title", ""), "Addition");
            const ufo_value_t *online = ufo_value_map_get (got, "online_docs");
            CHECK_INT (ufo_value_size (online), 2);
            CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (online, 0), "title", ""), "plus");
            ufo_value_destroy (&got);
            //  another subtask: what came for the first one is not used for it
            got = ufo_rag_for_app (rag, "keep the file", "calc");
            CHECK (!ufo_value_map_has (got, "online_docs"));
            ufo_value_destroy (&got);
        }
        else {
            //  the embeddings endpoint is down and the search too slow: both end within
            //  their bound, and retrieval stays BM25 alone without online docs
            CHECK (s_rag_until (rag, s_rag_idle, 10000));
            got = ufo_rag_for_app (rag, "plus", "calc");
            CHECK_INT (ufo_value_size (ufo_value_map_get (got, "offline_docs")), 0);
            CHECK (!ufo_value_map_has (got, "online_docs"));
            ufo_value_destroy (&got);
            got = ufo_rag_for_app (rag, "Addition", "calc");     //  BM25 still works
            CHECK_INT (ufo_value_size (ufo_value_map_get (got, "offline_docs")), 1);
            ufo_value_destroy (&got);
        }
        ufo_rag_destroy (&rag);
    }
}

int
main (void)
{
    snprintf (s_dir, sizeof s_dir, "/tmp/test_websearch.XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    char port_file [128], log [128];
    snprintf (port_file, sizeof port_file, "%s/port", s_dir);
    snprintf (log, sizeof log, "%s/requests.log", s_dir);
    pid_t pid = 0;
    s_port = ssfx_start (port_file, log, &pid);
    if (s_port <= 0) {
        fprintf (stderr, "ufo-search-server did not start\n");
        ssfx_stop (&pid);
        return 1;
    }
    UFO_RUN (test_bing_shape);
    UFO_RUN (test_searxng_shape);
    UFO_RUN (test_failures);
    UFO_RUN (test_embeddings_rerank);
    UFO_RUN (test_rag_async);
    ssfx_stop (&pid);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
