/*  test_mcp.c - the MCP client (ufo_mcp, ufo_mcp_hub) against real MCP servers from npm
    (@modelcontextprotocol/server-everything over stdio and Streamable HTTP,
    @modelcontextprotocol/server-filesystem) and scripted broken servers
    (tests/mcp/scripted_server.js). The npm packages are installed once into the build tree
    by the mcp_npm_ci fixture; UFO_MCP_BIN names their .bin folder. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_mcp.h"
#include "ufo_mcp_hub.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>

static char s_bin [1024];          //  node_modules/.bin
static char s_scripted [1024];     //  scripted_server.js

//  Polls the hub until done(arg) or timeout_ms; returns done(arg).
static bool
s_run (ufo_mcp_hub_t *hub, bool (*done) (void *), void *arg, int timeout_ms)
{
    return ufo_mcp_hub_run (hub, done, arg, timeout_ms);
}

static bool
s_settled (void *arg)
{
    return ufo_mcp_hub_settled (arg);
}

static bool
s_op_finished (void *arg)
{
    return ufo_mcp_op_done (arg);
}

//  A configuration with MCP_SERVERS.APP_AGENT."*" = servers (JSON text) and a timeout.
static ufo_config_t *
s_config (const char *servers, double timeout_s)
{
    ufo_config_t *c = ufo_config_new ();
    char *text = NULL;
    if (asprintf (&text, "{\"MCP_TOOL_TIMEOUT\": %g, \"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": %s}}}",
                  timeout_s, servers) < 0)
        abort ();
    ufo_error_t err;
    if (ufo_config_load_text (c, text, strlen (text), &err) < 0) {
        fprintf (stderr, "config: %s\n", err.message);
        ufo_config_destroy (&c);
    }
    free (text);
    return c;
}

static ufo_mcp_hub_t *
s_hub (const char *servers, double timeout_s)
{
    ufo_config_t *c = s_config (servers, timeout_s);
    if (!c)
        return NULL;
    ufo_error_t err;
    ufo_mcp_hub_t *hub = ufo_mcp_hub_new (c, "APP_AGENT", "mousepad", NULL, &err);
    ufo_config_destroy (&c);
    if (hub && !s_run (hub, s_settled, hub, 30000)) {
        fprintf (stderr, "servers did not settle in 30 s\n");
        ufo_mcp_hub_destroy (&hub);
    }
    return hub;
}

//  Runs function(args_json) to the end; returns the result (caller owns).
static ufo_value_t *
s_call (ufo_mcp_hub_t *hub, const char *function, const char *args_json, int timeout_ms)
{
    ufo_error_t err;
    ufo_value_t *args = ufo_json_parse_str (args_json, &err);
    ufo_mcp_op_t *op = ufo_mcp_hub_call (hub, function, args);
    ufo_value_destroy (&args);
    s_run (hub, s_op_finished, op, timeout_ms);
    ufo_value_t *r = ufo_mcp_op_take_result (op);
    ufo_mcp_op_destroy (&op);
    return r;
}

static const char *
s_server (const char *name, const char *bin, const char *arg)
{
    static char buf [4][2048];
    static int k = 0;
    char *out = buf [k++ % 4];
    snprintf (out, 2048, "{\"name\": \"%s\", \"type\": \"stdio\", \"command\": \"%s/%s\", \"args\": [\"%s\"]}",
              name, s_bin, bin, arg);
    return out;
}

static const char *
s_scripted_server (const char *name, const char *mode)
{
    static char buf [4][2048];
    static int k = 0;
    char *out = buf [k++ % 4];
    snprintf (out, 2048, "{\"name\": \"%s\", \"command\": \"node\", \"args\": [\"%s\", \"%s\"]}",
              name, s_scripted, mode);
    return out;
}

static FILE *s_log_mem = NULL;
static char *s_log_text = NULL;

static bool
s_logged (void *arg)
{
    UFO_UNUSED (arg);
    fflush (s_log_mem);
    return s_log_text && strstr (s_log_text, "-level message");
}

static bool s_ping_done = false;

static void
s_on_ping (void *arg, const ufo_value_t *result, const ufo_error_t *err)
{
    UFO_UNUSED (arg);
    s_ping_done = !err && ufo_value_type (result) == UFO_TMAP;
}

static bool
s_pinged (void *arg)
{
    UFO_UNUSED (arg);
    return s_ping_done;
}

//  --- the real servers ----------------------------------------------------------------------------

UFO_TEST (test_everything_stdio)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_server ("every", "mcp-server-everything", "stdio"));
    ufo_mcp_hub_t *hub = s_hub (servers, 2.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    REQUIRE (ufo_mcp_state (s) == UFO_MCP_READY);
    CHECK_STR (ufo_mcp_protocol (s), "2025-06-18");
    CHECK (ufo_value_size (ufo_mcp_tools (s)) >= 10);
    CHECK_INT (ufo_mcp_list_pages (s), 1);        //  the reference server lists in one page
    //  the prompt lists the tools with a compact schema
    ufo_value_t *tools = ufo_mcp_hub_prompt_tools (hub);
    char *json = ufo_json_dump (tools, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (json, "\"function\":\"every.echo\"");
    CHECK_CONTAINS (json, "message: string (required)");
    CHECK_CONTAINS (json, "messageType: one of \\\"error\\\"|\\\"success\\\"|\\\"debug\\\" (required)");
    free (json);
    ufo_value_destroy (&tools);

    //  a ping of ours is answered
    ufo_error_t perr;
    s_ping_done = false;
    CHECK (ufo_mcp_request (s, "ping", NULL, 0, NULL, s_on_ping, NULL, &perr) > 0);
    CHECK (s_run (hub, s_pinged, NULL, 5000));

    //  a call
    ufo_value_t *r = s_call (hub, "every.echo", "{\"message\": \"hello MCP\"}", 5000);
    REQUIRE (r);
    CHECK (ufo_value_map_bool (r, "success", false));
    CHECK_CONTAINS (ufo_value_map_str (r, "text", ""), "hello MCP");
    ufo_value_destroy (&r);

    //  arguments are checked against the schema before the call
    ufo_error_t err;
    ufo_value_t *bad = ufo_json_parse_str ("{\"a\": \"one\", \"b\": 2}", &err);
    CHECK (ufo_mcp_hub_check (hub, "every.get-sum", bad, &err) < 0);
    CHECK_CONTAINS (err.message, "Args.a must be a number, not string");
    ufo_value_destroy (&bad);
    r = s_call (hub, "every.get-annotated-message", "{\"messageType\": \"loud\"}", 5000);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "must be one of [\"error\",\"success\",\"debug\"]");
    ufo_value_destroy (&r);
    r = s_call (hub, "every.echo", "{}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "needs the argument \"message\"");
    ufo_value_destroy (&r);
    r = s_call (hub, "every.no-such-tool", "{}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "the server every has no tool \"no-such-tool\"");
    ufo_value_destroy (&r);
    r = s_call (hub, "nobody.echo", "{}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "no API server named \"nobody\"");
    ufo_value_destroy (&r);

    //  structured content
    r = s_call (hub, "every.get-structured-content", "{\"location\": \"Chicago\"}", 5000);
    CHECK (ufo_value_map_bool (r, "success", false));
    CHECK (ufo_value_type (ufo_value_map_get (r, "structured")) == UFO_TMAP);
    ufo_value_destroy (&r);

    //  log notifications go to our log
    s_log_text = NULL;
    size_t log_len = 0;
    s_log_mem = open_memstream (&s_log_text, &log_len);
    REQUIRE (s_log_mem);
    ufo_log_set_stream (s_log_mem);
    ufo_log_set_level (UFO_LOG_TRACE);
    r = s_call (hub, "every.toggle-simulated-logging", "{}", 5000);
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    bool logged = s_run (hub, s_logged, NULL, 8000);
    ufo_log_set_stream (stderr);
    ufo_log_set_level (UFO_LOG_WARN);
    fclose (s_log_mem);
    CHECK (logged);
    CHECK_CONTAINS (s_log_text ? s_log_text : "", "MCP every log");
    CHECK_CONTAINS (s_log_text ? s_log_text : "", "-level message");
    free (s_log_text);
    s_log_text = NULL;
    r = s_call (hub, "every.toggle-simulated-logging", "{}", 5000);     //  off again
    ufo_value_destroy (&r);

    //  progress notifications of a long-running tool
    r = s_call (hub, "every.trigger-long-running-operation", "{\"duration\": 1, \"steps\": 3}", 5000);
    CHECK (ufo_value_map_bool (r, "success", false));
    CHECK_INT (ufo_value_map_int (r, "progress", 0), 3);
    CHECK_CONTAINS (ufo_value_map_str (r, "text", ""), "Long running operation completed");
    ufo_value_destroy (&r);

    //  past MCP_TOOL_TIMEOUT (2 s): cancelled, and the server still serves
    r = s_call (hub, "every.trigger-long-running-operation", "{\"duration\": 8, \"steps\": 8}", 6000);
    REQUIRE (r);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "tools/call timed out after 2.0 s and was cancelled");
    CHECK (ufo_value_map_float (r, "elapsed", 0) < 6.0);   //  not the tool's 8 s (loaded CI: room)
    ufo_value_destroy (&r);
    r = s_call (hub, "every.echo", "{\"message\": \"still here\"}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "text", ""), "still here");
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
}

//  The server's tool error (isError) is the step's failure, with the server's text.
UFO_TEST (test_everything_tool_error)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_server ("every", "mcp-server-everything", "stdio"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    //  gzip-file-as-resource with a data URL outside its allowed domains fails in the tool
    ufo_value_t *r = s_call (hub, "every.gzip-file-as-resource",
                             "{\"name\": \"x.gz\", \"data\": \"http://127.0.0.1:9/nothing\"}", 8000);
    REQUIRE (r);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK (ufo_value_map_bool (r, "is_error", false));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "the tool every.gzip-file-as-resource reported an error");
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
}

//  A loopback port that was free a moment ago.
static int
s_free_port (void)
{
    int fd = socket (AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    int port = 0;
    if (fd >= 0 && bind (fd, (struct sockaddr *) &a, sizeof a) == 0
    &&  getsockname (fd, (struct sockaddr *) &a, &len) == 0)
        port = ntohs (a.sin_port);
    if (fd >= 0)
        close (fd);
    return port;
}

//  True once something accepts connections on the loopback port (bounded wait).
static bool
s_wait_port (int port, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (ufo_time_mono_ms () < end) {
        int fd = socket (AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port),
                                 .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
        bool up = fd >= 0 && connect (fd, (struct sockaddr *) &a, sizeof a) == 0;
        if (fd >= 0)
            close (fd);
        if (up)
            return true;
        usleep (50000);
    }
    return false;
}

UFO_TEST (test_everything_http)
{
    //  the reference server over Streamable HTTP on a free loopback port
    int port = s_free_port ();
    REQUIRE (port > 0);
    pid_t pid = fork ();
    if (pid == 0) {
        char p [16];
        snprintf (p, sizeof p, "%d", port);
        setenv ("PORT", p, 1);
        char cmd [1100];
        snprintf (cmd, sizeof cmd, "%s/mcp-server-everything", s_bin);
        int devnull = open ("/dev/null", O_WRONLY);
        dup2 (devnull, 1);
        execl (cmd, cmd, "streamableHttp", (char *) NULL);
        _exit (127);
    }
    REQUIRE (pid > 0);
    char servers [512];
    snprintf (servers, sizeof servers,
              "[{\"name\": \"web\", \"type\": \"http\", \"url\": \"http://127.0.0.1:%d/mcp\", "
              "\"headers\": {\"X-Test\": \"1\"}}]", port);
    CHECK (s_wait_port (port, 30000));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_READY);
    CHECK_STR (ufo_mcp_error (s), "");
    ufo_value_t *r = s_call (hub, "web.echo", "{\"message\": \"over http\"}", 5000);
    REQUIRE (r);
    CHECK_CONTAINS (ufo_value_map_str (r, "text", ""), "over http");
    ufo_value_destroy (&r);
    //  progress arrives in the SSE reply
    r = s_call (hub, "web.trigger-long-running-operation", "{\"duration\": 1, \"steps\": 2}", 5000);
    CHECK (ufo_value_map_bool (r, "success", false));
    CHECK_INT (ufo_value_map_int (r, "progress", 0), 2);
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
    kill (pid, SIGTERM);
    waitpid (pid, NULL, 0);
}

UFO_TEST (test_filesystem)
{
    char dir [] = "/tmp/ufo_mcp_fsXXXXXX";
    REQUIRE (mkdtemp (dir));
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_server ("files", "mcp-server-filesystem", dir));
    ufo_mcp_hub_t *hub = s_hub (servers, 10.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    char args [1200];
    snprintf (args, sizeof args, "{\"path\": \"%s/note.txt\", \"content\": \"written through MCP\"}", dir);
    ufo_value_t *r = s_call (hub, "files.write_file", args, 10000);
    REQUIRE (r);
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    char path [1100];
    snprintf (path, sizeof path, "%s/note.txt", dir);
    FILE *f = fopen (path, "r");
    REQUIRE (f);
    char text [100] = "";
    CHECK (fgets (text, sizeof text, f) != NULL);
    fclose (f);
    CHECK_STR (text, "written through MCP");
    //  outside the root: the server refuses (isError)
    r = s_call (hub, "files.write_file", "{\"path\": \"/etc/ufo_nope\", \"content\": \"x\"}", 10000);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "reported an error");
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
    unlink (path);
    rmdir (dir);
}

//  --- scripted servers ---------------------------------------------------------------------------

UFO_TEST (test_pagination)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("paged", "pages"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    REQUIRE (ufo_mcp_state (s) == UFO_MCP_READY);
    CHECK_INT (ufo_mcp_list_pages (s), 3);
    CHECK_INT (ufo_value_size (ufo_mcp_tools (s)), 7);
    ufo_value_t *tools = ufo_mcp_hub_prompt_tools (hub);
    char *json = ufo_json_dump (tools, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (json, "{\"function\":\"paged.b1\",\"description\":\"test tool b1\",\"args\":\"text: string - the text\"}");
    free (json);
    ufo_value_destroy (&tools);
    ufo_value_t *r = s_call (hub, "paged.c2", "{\"text\": \"x\"}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "text", ""), "called c2 with {\"text\":\"x\"}");
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
}

//  A server that never starts: restarted once, then FAILED with its exit status and last words.
UFO_TEST (test_bad_exit)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("quitter", "exit"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_FAILED);
    CHECK_INT (ufo_mcp_restarts (s), 1);
    CHECK_CONTAINS (ufo_mcp_error (s), "exited with status 3");
    CHECK_CONTAINS (ufo_mcp_error (s), "configuration missing");
    ufo_value_t *r = s_call (hub, "quitter.echo", "{}", 2000);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "the API tools of quitter are unavailable");
    ufo_value_destroy (&r);
    //  nothing of it shows in the prompt
    ufo_value_t *tools = ufo_mcp_hub_prompt_tools (hub);
    CHECK_INT (ufo_value_size (tools), 0);
    ufo_value_destroy (&tools);
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_command)
{
    ufo_mcp_hub_t *hub = s_hub ("[{\"name\": \"ghost\", \"command\": \"/nonexistent/mcp-server\"}]", 5.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_FAILED);
    CHECK_CONTAINS (ufo_mcp_error (s), "cannot run /nonexistent/mcp-server");
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_garbage)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("noisy", "garbage"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_FAILED);
    CHECK_CONTAINS (ufo_mcp_error (s), "output that is not JSON during start-up: 'Welcome to the server!'");
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_hang)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("sleepy", "hang"));
    int64_t t0 = ufo_time_mono_ms ();
    ufo_mcp_hub_t *hub = s_hub (servers, 1.0);
    REQUIRE (hub);
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_FAILED);
    CHECK_CONTAINS (ufo_mcp_error (s), "did not answer initialize within 1.0 s");
    CHECK_INT (ufo_mcp_restarts (s), 1);
    CHECK (ufo_time_mono_ms () - t0 < 10000);
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_invalid)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("liar", "invalid"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    ufo_value_t *r = s_call (hub, "liar.echo", "{\"text\": \"a\"}", 5000);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "sent an invalid JSON-RPC response");
    ufo_value_destroy (&r);
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_big)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("huge", "big"));
    ufo_mcp_hub_t *hub = s_hub (servers, 20.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    ufo_value_t *r = s_call (hub, "huge.echo", "{\"text\": \"a\"}", 20000);
    REQUIRE (r);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "larger than the 4194304-byte limit");
    ufo_value_destroy (&r);
    //  the server is still usable after the discarded reply
    CHECK (ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    ufo_mcp_hub_destroy (&hub);
}

UFO_TEST (test_bad_schema)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("odd", "schema"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    ufo_value_t *tools = ufo_mcp_hub_prompt_tools (hub);
    CHECK_INT (ufo_value_size (tools), 1);          //  the broken one is not offered
    ufo_value_destroy (&tools);
    ufo_value_t *r = s_call (hub, "odd.broken", "{}", 5000);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "the tool odd.broken has a broken input schema");
    ufo_value_destroy (&r);
    r = s_call (hub, "odd.good", "{\"text\": \"fine\"}", 5000);
    CHECK (ufo_value_map_bool (r, "success", false));
    ufo_value_destroy (&r);
    ufo_value_t *report = ufo_mcp_hub_report (hub);
    char *json = ufo_json_dump (report, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (json, "\"schema_error\":\"the input schema at inputSchema is not an object\"");
    free (json);
    ufo_value_destroy (&report);
    ufo_mcp_hub_destroy (&hub);
}

//  A server that dies in a call: the call fails naming it; it is restarted once and serves again.
UFO_TEST (test_bad_die)
{
    char servers [2200];
    snprintf (servers, sizeof servers, "[%s]", s_scripted_server ("fragile", "die"));
    ufo_mcp_hub_t *hub = s_hub (servers, 5.0);
    REQUIRE (hub && ufo_mcp_state (ufo_mcp_hub_server (hub, 0)) == UFO_MCP_READY);
    ufo_value_t *r = s_call (hub, "fragile.echo", "{\"text\": \"a\"}", 5000);
    CHECK (!ufo_value_map_bool (r, "success", true));
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "exited with status 7");
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), "crashing on purpose");
    ufo_value_destroy (&r);
    REQUIRE (s_run (hub, s_settled, hub, 10000));
    ufo_mcp_t *s = ufo_mcp_hub_server (hub, 0);
    CHECK (ufo_mcp_state (s) == UFO_MCP_READY);
    CHECK_INT (ufo_mcp_restarts (s), 1);
    CHECK_CONTAINS (ufo_mcp_error (s), "it was restarted");
    r = s_call (hub, "fragile.echo", "{\"text\": \"b\"}", 5000);
    CHECK (!ufo_value_map_bool (r, "success", true));     //  the new one dies as well: no second restart
    ufo_value_destroy (&r);
    s_run (hub, s_settled, hub, 5000);
    CHECK (ufo_mcp_state (s) == UFO_MCP_FAILED);
    ufo_mcp_hub_destroy (&hub);
}

//  --- configuration ------------------------------------------------------------------------------

UFO_TEST (test_config_checks)
{
    static const struct { const char *json, *error; } cases [] = {
        { "{\"MCP_SERVERS\": []}", "MCP_SERVERS must be an object" },
        { "{\"MCP_SERVERS\": {\"EVAL\": {}}}", "\"EVAL\" is not an agent" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": {}}}}", "MCP_SERVERS.APP_AGENT.* must be a list of servers" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"command\": \"x\"}]}}}", "MCP_SERVERS.APP_AGENT.*[0]: \"name\" is required" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a.b\", \"command\": \"x\"}]}}}", "must be 1-48 of" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\"}]}}}", "\"command\" is required" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\", \"command\": \"x\", \"args\": [1]}]}}}", "\"args\"[0] must be a string" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\", \"type\": \"http\", \"url\": \"ftp://x\"}]}}}", "must start with http://" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\", \"type\": \"sse\"}]}}}", "\"type\" must be \"stdio\" or \"http\"" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\", \"command\": \"x\", \"port\": 1}]}}}", "unknown key \"port\"" },
        { "{\"MCP_SERVERS\": {\"APP_AGENT\": {\"*\": [{\"name\": \"a\", \"command\": \"x\"}], \"mousepad\": [{\"name\": \"a\", \"command\": \"y\"}]}}}", "server a is also in \"*\"" },
        { "{\"MCP_TOOL_TIMEOUT\": 0}", "MCP_TOOL_TIMEOUT" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_config_t *c = ufo_config_new ();
        ufo_error_t err;
        CHECK (ufo_config_load_text (c, cases [i].json, strlen (cases [i].json), &err) < 0);
        CHECK_CONTAINS (err.message, cases [i].error);
        ufo_config_destroy (&c);
    }
    //  a good one, per application; another application does not get it
    const char *good = "{\"MCP_PREFERRED_APPS\": [\"Mousepad\"], \"MCP_SERVERS\": {\"APP_AGENT\": {\"mousepad\": "
                       "[{\"name\": \"a\", \"command\": \"/nonexistent/x\", \"env\": {\"K\": \"v\"}, \"cwd\": \"/tmp\"}]}}}";
    ufo_config_t *c = ufo_config_new ();
    ufo_error_t err;
    CHECK (ufo_config_load_text (c, good, strlen (good), &err) == 0);
    ufo_mcp_hub_t *hub = ufo_mcp_hub_new (c, "APP_AGENT", "gnome-calculator", NULL, &err);
    CHECK_INT (ufo_mcp_hub_size (hub), 0);
    CHECK (!ufo_mcp_hub_preferred (hub));
    ufo_mcp_hub_destroy (&hub);
    hub = ufo_mcp_hub_new (c, "APP_AGENT", "mousepad", NULL, &err);
    CHECK_INT (ufo_mcp_hub_size (hub), 1);
    CHECK (ufo_mcp_hub_preferred (hub));
    ufo_mcp_hub_destroy (&hub);
    CHECK (ufo_mcp_hub_new (c, "APP_AGENT", "mousepad", "zz", &err) == NULL);
    CHECK_CONTAINS (err.message, "no MCP server named zz");
    //  USE_MCP off: no servers
    ufo_value_t *off = ufo_value_new_bool (false);
    CHECK (ufo_config_set (c, "USE_MCP", &off, &err) == 0);
    hub = ufo_mcp_hub_new (c, "APP_AGENT", "mousepad", NULL, &err);
    CHECK_INT (ufo_mcp_hub_size (hub), 0);
    ufo_mcp_hub_destroy (&hub);
    ufo_config_destroy (&c);
}

int
main (void)
{
    const char *bin = getenv ("UFO_MCP_BIN");
    const char *src = getenv ("UFO_SOURCE_DIR");
    snprintf (s_bin, sizeof s_bin, "%s", bin ? bin : "");
    snprintf (s_scripted, sizeof s_scripted, "%s/tests/mcp/scripted_server.js", src ? src : ".");
    ufo_log_set_level (UFO_LOG_WARN);
    UFO_RUN (test_config_checks);
    UFO_RUN (test_bad_command);
    UFO_RUN (test_pagination);
    UFO_RUN (test_bad_exit);
    UFO_RUN (test_bad_garbage);
    UFO_RUN (test_bad_hang);
    UFO_RUN (test_bad_invalid);
    UFO_RUN (test_bad_schema);
    UFO_RUN (test_bad_die);
    UFO_RUN (test_bad_big);
    if (!bin || !*bin) {
        fprintf (stderr, "UFO_MCP_BIN is not set: the npm servers' tests cannot run\n");
        return 1;
    }
    else {
        UFO_RUN (test_everything_stdio);
        UFO_RUN (test_everything_tool_error);
        UFO_RUN (test_everything_http);
        UFO_RUN (test_filesystem);
    }
    return UFO_TEST_END ();
}
