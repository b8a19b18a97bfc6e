/*  test_websearch.c - web search for the agents (ufo_websearch over ufo_http) against
    tests/ufo-search-server on loopback: the Bing v7 and SearXNG shapes, a missing key, a body
    that is not JSON, an HTTP error, an endpoint that is down and one that is too slow. */
#include "ufo_prelude.h"
#include <poll.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "ufo_test.h"
#include "search_server_fixture.h"

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

static int64_t
s_now_ms (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
    int64_t start = s_now_ms ();
    if (ufo_websearch_start (http, &opts, query, s_done, got, &err) < 0) {
        snprintf (got->error, sizeof got->error, "start: %s", err.message);
        got->done = true;
    }
    while (!got->done && s_now_ms () - start < 20000) {
        ufo_http_fd_t hfds [8];
        struct pollfd fds [8];
        size_t n = ufo_http_fds (http, hfds, 8);
        if (n > 8)
            n = 8;
        for (size_t i = 0; i < n; i++)
            fds [i] = (struct pollfd) { .fd = hfds [i].fd,
                .events = (short) ((hfds [i].events & UFO_HTTP_IN ? POLLIN : 0) | (hfds [i].events & UFO_HTTP_OUT ? POLLOUT : 0)) };
        int t = ufo_http_timeout (http);
        poll (fds, n, t < 0 || t > 50 ? 50 : t);
        for (size_t i = 0; i < n; i++)
            hfds [i].revents = (fds [i].revents & POLLIN ? UFO_HTTP_IN : 0) | (fds [i].revents & POLLOUT ? UFO_HTTP_OUT : 0)
                             | (fds [i].revents & (POLLERR | POLLHUP) ? UFO_HTTP_ERR : 0);
        ufo_http_process (http, hfds, n);
    }
    *elapsed_ms_p = s_now_ms () - start;
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
    ssfx_stop (&pid);
    char cmd [128];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    return UFO_TEST_END ();
}
