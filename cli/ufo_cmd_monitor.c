/*  ufo_cmd_monitor.c - `ufo monitor`: joins the bus, prints the current state (dispatch.state)
    and then one line per event: task and worker transitions, blackboard changes, stats.

    Late join and gaps (docs/PROTOCOL.md 2.6 and 3.6): the monitor subscribes to every topic
    first, then takes the snapshot; events with seq <= the snapshot's seq are already in it.
    Every later sequenced event must carry the next global seq (previous event's last + 1):
    anything else is a gap (a high-water-mark drop, a reconnect). The monitor reports it,
    takes a new snapshot, reports the recovery, and goes on from there. */
#include "ufo_prelude.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include <czmq.h>

#define FILTERS_MAX 16

typedef struct {
    bool json, color;
    const char *topics [FILTERS_MAX];
    size_t ntopics;
    const char *sessions [FILTERS_MAX];
    size_t nsessions;
    const char *services [FILTERS_MAX];
    size_t nservices;
    ufo_bb_client_t *client;
    uint64_t seq;               //  last global seq accounted for
    uint64_t gaps, events, drop_every, received;
} s_monitor_t;

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

static void
s_stamp (char *out, size_t size, int64_t us)
{
    time_t t = (time_t) (us / 1000000);
    struct tm tm;
    localtime_r (&t, &tm);
    char hms [16];
    strftime (hms, sizeof hms, "%H:%M:%S", &tm);
    snprintf (out, size, "%s.%03d", hms, (int) (us / 1000 % 1000));
}

//  Prints a monitor notice (snapshot, gap, recovery) as a line or a JSON object.
static void
s_notice (s_monitor_t *m, const char *kind, ufo_value_t **detail_p, const char *text)
{
    if (m->json) {
        ufo_value_t *line = ufo_value_new_map ();
        ufo_value_map_set_str (line, "kind", kind);
        ufo_value_map_set (line, "detail", detail_p);
        char *js = ufo_json_dump (line, UFO_JSON_COMPACT, NULL);
        printf ("%s\n", js);
        free (js);
        ufo_value_destroy (&line);
    }
    else {
        const char *c = !m->color ? "" : strcmp (kind, "gap") == 0 ? "\033[1;31m" : "\033[1;36m";
        printf ("%s== %s%s\n", c, text, m->color ? "\033[0m" : "");
        ufo_value_destroy (detail_p);
    }
    fflush (stdout);
}

static int
s_snapshot (s_monitor_t *m, const char *why)
{
    ufo_error_t err;
    ufo_value_t *state = ufo_bb_client_call (m->client, "dispatch.state", NULL, NULL, 0, NULL, NULL, &err);
    if (!state) {
        fprintf (stderr, "ufo monitor: snapshot failed: %s\n", err.message);
        return -1;
    }
    m->seq = (uint64_t) ufo_value_map_int (state, "seq", 0);
    char text [160];
    snprintf (text, sizeof text, "%s at seq %" PRIu64, why, m->seq);
    if (!m->json) {
        s_notice (m, "snapshot", NULL, text);
        ufo_cli_print_state (stdout, state, m->color);
        fflush (stdout);
        ufo_value_destroy (&state);
    }
    else {
        ufo_value_map_set_str (state, "why", why);
        s_notice (m, "snapshot", &state, text);
    }
    return 0;
}

static bool
s_any_prefix (const char *const *list, size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp (value, list [i], strlen (list [i])) == 0)
            return true;
    return false;
}

static bool
s_any_equal (const char *const *list, size_t n, const char *value)
{
    for (size_t i = 0; value && i < n; i++)
        if (strcmp (value, list [i]) == 0)
            return true;
    return false;
}

static bool
s_passes (s_monitor_t *m, const char *topic, const ufo_value_t *body, const char *session)
{
    if (m->ntopics && !s_any_prefix (m->topics, m->ntopics, topic))
        return false;
    const char *ev_session = ufo_value_map_str (body, "session", NULL);
    if (!ev_session || !*ev_session)
        ev_session = ufo_value_map_str (body, "board", session);
    if (m->nsessions && !s_any_equal (m->sessions, m->nsessions, ev_session))
        return false;
    if (m->nservices && !s_any_equal (m->services, m->nservices, ufo_value_map_str (body, "service", NULL)))
        return false;
    return true;
}

static const char *
s_color_of (const char *type)
{
    static const struct { const char *type, *code; } table [] = {
        { "task.submitted", "\033[34m" }, { "task.assigned", "\033[36m" }, { "task.progress", "\033[2m" },
        { "task.done", "\033[32m" }, { "task.failed", "\033[31m" }, { "task.cancelled", "\033[33m" },
        { "task.requeued", "\033[35m" }, { "task.discarded", "\033[35m" }, { "task.cancel_requested", "\033[33m" },
        { "worker.ready", "\033[32m" }, { "worker.lost", "\033[1;31m" }, { "worker.left", "\033[33m" },
        { "broker.stats", "\033[2m" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (table); i++)
        if (strcmp (table [i].type, type) == 0)
            return table [i].code;
    return "";
}

//  One readable line: time, seq, type, then the fields that matter for that type.
static void
s_print_line (s_monitor_t *m, const char *type, int64_t ts, const ufo_value_t *body)
{
    char when [32];
    s_stamp (when, sizeof when, ts);
    ufo_buf_t line = { 0 };
    int64_t seq = strcmp (type, "broker.stats") == 0 ? 0 : ufo_value_map_int (body, "seq", 0);
    if (seq)
        ufo_buf_printf (&line, "%s #%-6" PRId64 " %-22s", when, seq, type);
    else
        ufo_buf_printf (&line, "%s %-7s %-22s", when, "", type);
    static const char *keys [] = { "service", "task", "worker", "name", "attempt", "attempts", "status",
                                   "queued", "running", "board", "memory", "n", "reason" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (keys); i++) {
        const ufo_value_t *v = ufo_value_map_get (body, keys [i]);
        if (!v || ufo_value_type (v) == UFO_TNULL)
            continue;
        if (ufo_value_type (v) == UFO_TSTRING) {
            if (!*ufo_value_str (v))
                continue;
            const char *wname = ufo_value_map_str (body, "worker_name", "");
            if (strcmp (keys [i], "worker") == 0 && *wname) {
                ufo_buf_printf (&line, " worker=%s", wname);
                continue;
            }
            bool id = strcmp (keys [i], "task") == 0 || strcmp (keys [i], "worker") == 0;
            ufo_buf_printf (&line, " %s=%.*s", keys [i], id ? 8 : 200, ufo_value_str (v));
        }
        else
        if (ufo_value_type (v) == UFO_TINT)
            ufo_buf_printf (&line, " %s=%" PRId64, keys [i], ufo_value_int (v));
    }
    if (strcmp (type, "bb.added") == 0)
        ufo_buf_printf (&line, " items=%zu", ufo_value_size (ufo_value_map_get (body, "items")));
    if (strcmp (type, "broker.stats") == 0)
        ufo_buf_printf (&line, " workers=%" PRId64 " queued=%" PRId64 " running=%" PRId64 " boards=%" PRId64,
                        ufo_value_map_int (body, "workers", 0), ufo_value_map_int (body, "tasks_queued", 0),
                        ufo_value_map_int (body, "tasks_running", 0), ufo_value_map_int (body, "boards", 0));
    const char *c = m->color ? s_color_of (type) : "";
    printf ("%s%s%s\n", c, line.data, *c ? "\033[0m" : "");
    ufo_buf_free (&line);
}

//  Handles one bus message; returns true when an event line was printed.
static bool
s_on_event (s_monitor_t *m, const char *topic, const void *data, size_t len)
{
    ufo_error_t err;
    ufo_msg_t *msg = ufo_msg_decode (data, len, NULL, &err);
    if (!msg) {
        fprintf (stderr, "ufo monitor: undecodable event on %s: %s\n", topic, err.message);
        return false;
    }
    const ufo_value_t *body = ufo_msg_body (msg);
    int64_t seq = ufo_value_map_int (body, "seq", 0);
    int64_t last = ufo_value_map_int (body, "last", seq);
    if (strcmp (ufo_msg_type (msg), "broker.stats") == 0)
        seq = last = 0;             //  its "seq" is the broker's last seq, not this event's
    bool printed = false;
    if (seq > 0) {
        if ((uint64_t) last <= m->seq) {
            ufo_msg_destroy (&msg);
            return false;           //  already in the snapshot
        }
        if ((uint64_t) seq != m->seq + 1) {
            m->gaps++;
            ufo_value_t *detail = ufo_value_new_map ();
            ufo_value_map_set_int (detail, "expected", (int64_t) m->seq + 1);
            ufo_value_map_set_int (detail, "got", seq);
            char text [200];
            snprintf (text, sizeof text, "GAP: expected seq %" PRIu64 ", got %" PRId64 " (%" PRId64 " event(s) missed); resyncing",
                      m->seq + 1, seq, seq - (int64_t) m->seq - 1);
            s_notice (m, "gap", &detail, text);
            if (s_snapshot (m, "recovered: new snapshot") == 0 && (uint64_t) last <= m->seq) {
                ufo_msg_destroy (&msg);
                return false;
            }
        }
        m->seq = (uint64_t) last;
    }
    if (s_passes (m, topic, body, ufo_msg_session (msg))) {
        if (m->json) {
            ufo_value_t *line = ufo_value_new_map ();
            ufo_value_map_set_str (line, "kind", "event");
            ufo_value_map_set_str (line, "topic", topic);
            ufo_value_map_set_str (line, "type", ufo_msg_type (msg));
            ufo_value_map_set_int (line, "timestamp_us", ufo_msg_timestamp (msg));
            ufo_value_map_set_copy (line, "body", body);
            char *js = ufo_json_dump (line, UFO_JSON_COMPACT, NULL);
            printf ("%s\n", js);
            free (js);
            ufo_value_destroy (&line);
        }
        else
            s_print_line (m, ufo_msg_type (msg), ufo_msg_timestamp (msg), body);
        fflush (stdout);
        printed = true;
        m->events++;
    }
    ufo_msg_destroy (&msg);
    return printed;
}

static int
s_usage_error (const char *message, const char *arg)
{
    fprintf (stderr, "ufo monitor: %s%s%s\n", message, arg ? " " : "", arg ? arg : "");
    ufo_cli_usage (stderr, "monitor");
    return UFO_CLI_USAGE;
}

int
ufo_cmd_monitor (int argc, char **argv)
{
    s_monitor_t m = { 0 };
    const char *broker = NULL, *bus = NULL, *config_path = NULL;
    long count = 0, timeout_s = 0;
    bool no_color = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        const char *value = i + 1 < argc ? argv [i + 1] : NULL;
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            ufo_cli_usage (stdout, "monitor");
            printf ("\nOptions:\n"
                    "  --broker EP       broker command endpoint (default: the one `ufo up` started, else config)\n"
                    "  --bus EP          bus endpoint (default: likewise, broker.bus_endpoint)\n"
                    "  --json            one JSON object per line (snapshot, event, gap)\n"
                    "  --filter F        show only matching events (repeatable; kinds AND, values OR):\n"
                    "                    a topic prefix (dispatch/task/, bb/<session>/, stats, ...),\n"
                    "                    session:ID or service:NAME\n"
                    "  --count N         exit after N events\n"
                    "  --timeout S       exit after S seconds\n"
                    "  --no-color        no colours even on a terminal\n"
                    "  --config FILE     configuration file\n");
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--json") == 0)
            m.json = true;
        else
        if (strcmp (arg, "--no-color") == 0)
            no_color = true;
        else
        if (!value)
            return s_usage_error ("unknown argument or missing value:", arg);
        else {
            i++;
            if (strcmp (arg, "--broker") == 0) broker = value;
            else if (strcmp (arg, "--bus") == 0) bus = value;
            else if (strcmp (arg, "--config") == 0) config_path = value;
            else if (strcmp (arg, "--count") == 0) count = atol (value);
            else if (strcmp (arg, "--timeout") == 0) timeout_s = atol (value);
            else if (strcmp (arg, "--test-drop") == 0) m.drop_every = (uint64_t) atol (value);
            else if (strcmp (arg, "--filter") == 0) {
                if (strncmp (value, "session:", 8) == 0 && m.nsessions < FILTERS_MAX)
                    m.sessions [m.nsessions++] = value + 8;
                else
                if (strncmp (value, "service:", 8) == 0 && m.nservices < FILTERS_MAX)
                    m.services [m.nservices++] = value + 8;
                else
                if (strncmp (value, "topic:", 6) == 0 && m.ntopics < FILTERS_MAX)
                    m.topics [m.ntopics++] = value + 6;
                else
                if (m.ntopics < FILTERS_MAX)
                    m.topics [m.ntopics++] = value;
            }
            else
                return s_usage_error ("unknown argument", arg);
        }
    }
    m.color = !m.json && !no_color && isatty (STDOUT_FILENO);
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo monitor: configuration: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    char cmd_ep [512], bus_ep [512], log_root [PATH_MAX];
    int rc = UFO_CLI_FAIL;
    const char *bus_configured = bus;
    ufo_value_t *up = NULL;
    if (!bus_configured) {
        char dir [256], path [512];
        if (ufo_cli_run_dir (dir, sizeof dir, NULL) == 0) {
            snprintf (path, sizeof path, "%s/up.json", dir);
            if (access (path, R_OK) == 0)
                up = ufo_json_parse_file (path, NULL, NULL);
        }
        bus_configured = ufo_value_map_str (up, "bus_endpoint", ufo_config_str (config, "broker.bus_endpoint", ""));
    }
    if (ufo_cli_broker (broker, config, cmd_ep, sizeof cmd_ep, log_root, sizeof log_root, &err) != 0
    ||  ufo_bb_endpoint (bus_configured, "bus", bus_ep, sizeof bus_ep, &err) != 0
    ||  ufo_security_init (config, "monitor", &err) < 0) {
        fprintf (stderr, "ufo monitor: %s\n", err.message);
        ufo_value_destroy (&up);
        ufo_config_destroy (&config);
        return UFO_CLI_FAIL;
    }
    ufo_value_destroy (&up);
    ufo_config_destroy (&config);
    m.client = ufo_bb_client_new (cmd_ep, bus_ep, &err);
    if (!m.client) {
        fprintf (stderr, "ufo monitor: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_bb_client_set_timeout (m.client, 5000);
    ufo_bb_client_set_sender (m.client, "ufo-monitor");
    zsock_t *sub = (zsock_t *) ufo_bb_client_bus_socket (m.client);
    zsock_set_subscribe (sub, "");      //  everything: the global sequence shows every gap
    signal (SIGINT, s_on_signal);
    signal (SIGTERM, s_on_signal);
    //  Subscribe first, then snapshot (late join).
    zclock_sleep (100);
    if (s_snapshot (&m, "joined: snapshot") == 0) {
        rc = UFO_CLI_OK;
        int64_t until = timeout_s > 0 ? ufo_time_mono_ms () + timeout_s * 1000 : INT64_MAX;
        zpoller_t *poller = zpoller_new (sub, NULL);
        while (!s_stop && !zsys_interrupted && ufo_time_mono_ms () < until && (count <= 0 || (long) m.events < count)) {
            if (!zpoller_wait (poller, 200))
                continue;
            zmsg_t *msg = zmsg_recv (sub);
            if (!msg)
                continue;
            zframe_t *topic = zmsg_first (msg), *data = zmsg_next (msg);
            m.received++;
            bool dropped = m.drop_every && m.received % m.drop_every == 0;   //  test hook
            if (topic && data && !dropped) {
                char name [300];
                snprintf (name, sizeof name, "%.*s", (int) zframe_size (topic), (const char *) zframe_data (topic));
                s_on_event (&m, name, zframe_data (data), zframe_size (data));
            }
            zmsg_destroy (&msg);
        }
        zpoller_destroy (&poller);
    }
    ufo_bb_client_destroy (&m.client);
    return rc;
}
