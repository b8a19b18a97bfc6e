/*  ufo_search_server.c - a web search API for tests (issue 23): serves the two JSON shapes
    ufo_websearch reads, on loopback, one forked child per connection.
      GET /bing?q=Q&count=N      Bing Web Search v7 shape (webPages.value[] {name, url,
                                 snippet}); 401 without "Ocp-Apim-Subscription-Key: test-key"
      GET /searxng/search?q=Q&format=json   SearXNG shape (results[] {title, url, content});
                                 400 without format=json
      GET /slow...               answers after 30 s unless the client closes first (a
                                 search that must time out)
      GET /broken                200 with a body that is not JSON
      GET /error                 500
      POST /v1/embeddings        OpenAI-compatible embeddings of {"model", "input": [texts]}: a
                                 deterministic toy model (16 dimensions; each word counts in
                                 the dimension its hash picks, and the words of a few synonym
                                 sets - plus/add/addition/sum, minus/subtract/... - share
                                 one), so a test can see cosine re-ranking find what BM25 misses
    Each result's title and snippet repeat the decoded query, so a test can see it arrived.
    Usage: ufo-search-server --port-file FILE [--log FILE] [--max-seconds S]
    Writes the port it bound (127.0.0.1, any free port) to FILE; each request line is
    appended to the log; exits after S seconds (default 300). */
#include "ufo_prelude.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <poll.h>

static void
s_decode (const char *in, size_t len, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < size; i++) {
        if (in [i] == '+')
            out [o++] = ' ';
        else
        if (in [i] == '%' && i + 2 < len && isxdigit ((unsigned char) in [i + 1]) && isxdigit ((unsigned char) in [i + 2])) {
            char hex [3] = { in [i + 1], in [i + 2], 0 };
            out [o++] = (char) strtol (hex, NULL, 16);
            i += 2;
        }
        else
            out [o++] = in [i];
    }
    out [o] = 0;
}

//  The value of a query parameter of target ("" when absent).
static void
s_param (const char *target, const char *name, char *out, size_t size)
{
    out [0] = 0;
    const char *q = strchr (target, '?');
    size_t nlen = strlen (name);
    for (const char *p = q ? q + 1 : NULL; p && *p; ) {
        const char *end = strchr (p, '&');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        if (len > nlen && strncmp (p, name, nlen) == 0 && p [nlen] == '=') {
            s_decode (p + nlen + 1, len - nlen - 1, out, size);
            return;
        }
        p = end ? end + 1 : NULL;
    }
}

static void
s_reply (int fd, int status, const char *body)
{
    char head [256];
    int n = snprintf (head, sizeof head, "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, strlen (body));
    if (write (fd, head, (size_t) n) < 0 || write (fd, body, strlen (body)) < 0)
        return;
}

#define S_DIM 16

//  The toy embedding of text (see the header comment).
static ufo_value_t *
s_embedding (const char *text)
{
    static const char *const synonyms [][5] = {
        { "plus", "add", "addition", "sum", "adding" },
        { "minus", "subtract", "subtraction", "difference", "subtracting" },
        { "save", "store", "keep", "write", "saving" } };
    double v [S_DIM] = { 0 };
    for (const char *p = text; *p; ) {
        while (*p && !isalnum ((unsigned char) *p))
            p++;
        char word [64];
        size_t n = 0;
        while (isalnum ((unsigned char) *p)) {
            if (n < sizeof word - 1)
                word [n++] = (char) tolower ((unsigned char) *p);
            p++;
        }
        word [n] = 0;
        if (n < 3)
            continue;
        const char *canon = word;
        for (size_t s = 0; s < UFO_ARRAY_SIZE (synonyms); s++)
            for (size_t k = 0; k < 5; k++)
                if (strcmp (word, synonyms [s][k]) == 0)
                    canon = synonyms [s][0];
        uint32_t h = 2166136261u;
        for (const char *c = canon; *c; c++)
            h = (h ^ (uint8_t) *c) * 16777619u;
        v [h % S_DIM] += 1.0;
    }
    ufo_value_t *list = ufo_value_new_list ();
    for (int i = 0; i < S_DIM; i++)
        ufo_value_list_push (list, &(ufo_value_t *) { ufo_value_new_float (v [i]) });
    return list;
}

static void
s_embeddings (int fd, const char *body, size_t len)
{
    ufo_value_t *req = ufo_json_parse (body, len, NULL, NULL);
    const ufo_value_t *input = ufo_value_map_get (req, "input");
    if (ufo_value_type (input) != UFO_TLIST) {
        s_reply (fd, 400, "{\"error\": {\"message\": \"input must be a list\"}}");
        ufo_value_destroy (&req);
        return;
    }
    ufo_value_t *reply = ufo_value_new_map ();
    ufo_value_map_set_str (reply, "object", "list");
    ufo_value_t *data = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (input); i++) {
        ufo_value_t *e = ufo_value_new_map ();
        ufo_value_map_set_str (e, "object", "embedding");
        ufo_value_map_set_int (e, "index", (int64_t) i);
        ufo_value_map_set (e, "embedding", &(ufo_value_t *) {
            s_embedding (ufo_value_str (ufo_value_list_at (input, i)) ?: "") });
        ufo_value_list_push (data, &e);
    }
    ufo_value_map_set (reply, "data", &data);
    ufo_value_map_set_str (reply, "model", ufo_value_map_str (req, "model", ""));
    char *text = ufo_json_dump (reply, UFO_JSON_COMPACT, NULL);
    s_reply (fd, 200, text);
    free (text);
    ufo_value_destroy (&reply);
    ufo_value_destroy (&req);
}

static void
s_serve (int fd, const char *log_path)
{
    char req [262144];
    size_t len = 0;
    while (len < sizeof req - 1) {
        ssize_t n = read (fd, req + len, sizeof req - 1 - len);
        if (n <= 0)
            break;
        len += (size_t) n;
        req [len] = 0;
        if (strstr (req, "\r\n\r\n"))
            break;
    }
    req [len] = 0;
    //  a POST body: read up to its Content-Length
    char *head_end = strstr (req, "\r\n\r\n");
    const char *cl = strcasestr (req, "Content-Length:");
    size_t want = cl ? (size_t) strtoul (cl + 15, NULL, 10) : 0;
    while (head_end && want && len - (size_t) (head_end + 4 - req) < want && len < sizeof req - 1) {
        ssize_t n = read (fd, req + len, sizeof req - 1 - len);
        if (n <= 0)
            break;
        len += (size_t) n;
        req [len] = 0;
    }
    char method [8] = "", target [4096] = "";
    if (sscanf (req, "%7s %4095s", method, target) != 2) {
        s_reply (fd, 400, "{\"error\": \"bad request\"}");
        return;
    }
    if (log_path) {
        FILE *log = fopen (log_path, "a");
        if (log) {
            fprintf (log, "%s %s\n", method, target);
            fclose (log);
        }
    }
    char q [1024], format [32];
    s_param (target, "q", q, sizeof q);
    s_param (target, "format", format, sizeof format);
    //  the query inside JSON: keep it to letters, digits, spaces and simple punctuation
    for (char *p = q; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char) *p < 0x20)
            *p = ' ';
    char body [8192];
    if (strcmp (method, "POST") == 0 && strncmp (target, "/v1/embeddings", 14) == 0) {
        if (head_end)
            s_embeddings (fd, head_end + 4, len - (size_t) (head_end + 4 - req));
        else
            s_reply (fd, 400, "{\"error\": \"no body\"}");
        return;
    }
    if (strncmp (target, "/bing", 5) == 0) {
        if (!strstr (req, "Ocp-Apim-Subscription-Key: test-key")) {
            s_reply (fd, 401, "{\"error\": {\"code\": \"401\", \"message\": \"Access denied\"}}");
            return;
        }
        snprintf (body, sizeof body,
            "{\"_type\": \"SearchResponse\", \"queryContext\": {\"originalQuery\": \"%s\"},"
            " \"webPages\": {\"totalEstimatedMatches\": 3, \"value\": ["
            "{\"id\": \"0\", \"name\": \"Bing result 1 about %s\", \"url\": \"https://example.org/bing/1\", \"snippet\": \"How to %s, step by step.\"},"
            "{\"id\": \"1\", \"name\": \"Bing result 2\", \"url\": \"https://example.org/bing/2\", \"snippet\": \"More on %s.\"},"
            "{\"id\": \"2\", \"url\": \"https://example.org/bing/untitled\", \"snippet\": \"no name\"},"
            "{\"id\": \"3\", \"name\": \"Bing result 3\", \"url\": \"https://example.org/bing/3\", \"snippet\": \"Third.\"}]}}",
            q, q, q, q);
        s_reply (fd, 200, body);
    }
    else
    if (strncmp (target, "/searxng/search", 15) == 0) {
        if (strcmp (format, "json") != 0) {
            s_reply (fd, 400, "{\"error\": \"format\"}");
            return;
        }
        snprintf (body, sizeof body,
            "{\"query\": \"%s\", \"number_of_results\": 2, \"results\": ["
            "{\"title\": \"SearXNG result 1 about %s\", \"url\": \"https://example.org/searx/1\", \"content\": \"Guide: %s.\", \"engine\": \"x\"},"
            "{\"title\": \"SearXNG result 2\", \"url\": \"https://example.org/searx/2\", \"content\": \"Also %s.\", \"engine\": \"y\"}],"
            " \"answers\": [], \"suggestions\": []}", q, q, q, q);
        s_reply (fd, 200, body);
    }
    else
    if (strncmp (target, "/slow", 5) == 0) {
        //  30 s, or until the client gives up and closes (so no child outlives the test)
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll (&p, 1, 30000) == 0)
            s_reply (fd, 200, "{\"results\": []}");
    }
    else
    if (strncmp (target, "/broken", 7) == 0)
        s_reply (fd, 200, "<html>not json</html>");
    else
    if (strncmp (target, "/error", 6) == 0)
        s_reply (fd, 500, "{\"error\": \"internal\"}");
    else
        s_reply (fd, 404, "{\"error\": \"not found\"}");
}

int
main (int argc, char **argv)
{
    const char *port_file = NULL, *log_path = NULL;
    int max_seconds = 300;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp (argv [i], "--port-file") == 0)
            port_file = argv [i + 1];
        else
        if (strcmp (argv [i], "--log") == 0)
            log_path = argv [i + 1];
        else
        if (strcmp (argv [i], "--max-seconds") == 0)
            max_seconds = atoi (argv [i + 1]);
    }
    if (!port_file) {
        fprintf (stderr, "usage: ufo-search-server --port-file FILE [--log FILE] [--max-seconds S]\n");
        return 2;
    }
    signal (SIGCHLD, SIG_IGN);          //  children are reaped by the system
    int s = socket (AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t alen = sizeof a;
    if (bind (s, (struct sockaddr *) &a, sizeof a) != 0 || listen (s, 64) != 0
    ||  getsockname (s, (struct sockaddr *) &a, &alen) != 0) {
        perror ("ufo-search-server: bind");
        return 1;
    }
    char tmp [1024];
    snprintf (tmp, sizeof tmp, "%s.tmp", port_file);
    FILE *f = fopen (tmp, "w");
    if (!f || fprintf (f, "%d\n", ntohs (a.sin_port)) < 0 || fclose (f) != 0 || rename (tmp, port_file) != 0) {
        perror ("ufo-search-server: port file");
        return 1;
    }
    time_t end = time (NULL) + max_seconds;
    while (time (NULL) < end) {
        struct pollfd p = { .fd = s, .events = POLLIN };
        if (poll (&p, 1, 500) <= 0)
            continue;
        int c = accept (s, NULL, NULL);
        if (c < 0)
            continue;
        pid_t pid = fork ();
        if (pid == 0) {
            close (s);
            s_serve (c, log_path);
            close (c);
            _exit (0);
        }
        close (c);
    }
    close (s);
    return 0;
}
