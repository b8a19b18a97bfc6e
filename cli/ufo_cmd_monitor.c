/*  ufo_cmd_monitor.c - `ufo monitor`: joins the bus, prints the current state (dispatch.state)
    and then, by default, the sessions for people: one line per step (session, round, step,
    agent, action, control, status, cost; a failed step and its error in red), session starts
    and ends, workers joining and lost, model retries. `--raw` prints one line per bus event
    instead (task and worker transitions, blackboard changes; `--stats` adds broker.stats).

    Late join and gaps (docs/PROTOCOL.md 2.6 and 3.6): the monitor subscribes to every topic
    first, then takes the snapshot; events with seq <= the snapshot's seq are already in it.
    Every later sequenced event must carry the next global seq (previous event's last + 1):
    anything else is a gap (a high-water-mark drop, a reconnect). The monitor reports it,
    takes a new snapshot, reports the recovery, and goes on from there. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msg.h"
#include "ufo_outcome.h"
#include "ufo_value.h"
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include "ufo_cli_term.h"
#include <czmq.h>

#define FILTERS_MAX 16

typedef struct {
    bool json, color, raw, stats;
    const char *log_root;
    ufo_value_t *names;         //  session id -> task name (from task.submitted and the snapshot)
    ufo_value_t *costs;         //  session id -> the session's cost so far (from "cost" progress)
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
    const ufo_value_t *tasks = ufo_value_map_get (state, "tasks");
    for (size_t i = 0; i < ufo_value_size (tasks); i++) {
        const ufo_value_t *t = ufo_value_list_at (tasks, i);
        if (ufo_value_map_str (t, "name", NULL) && strcmp (ufo_value_map_str (t, "service", ""), "host") == 0)
            ufo_value_map_set_str (m->names, ufo_value_map_str (t, "session", ""), ufo_value_map_str (t, "name", ""));
    }
    if (!m->json) {
        s_notice (m, "snapshot", NULL, text);
        ufo_cli_print_state (stdout, state, m->color, m->log_root);
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

static const char *
s_c (s_monitor_t *m, const char *code)
{
    return m->color ? code : "";
}

//  The line for people of one event, or nothing (plumbing). Returns whether it printed.
static bool
s_print_person (s_monitor_t *m, const char *type, int64_t ts, const ufo_value_t *body)
{
    const char *service = ufo_value_map_str (body, "service", "");
    const char *session = ufo_value_map_str (body, "session", "");
    bool host = strcmp (service, "host") == 0;
    if (strcmp (type, "task.submitted") == 0 && host) {
        const char *name = ufo_value_str (ufo_value_path (body, "body.task"));
        if (name)
            ufo_value_map_set_str (m->names, session, name);
    }
    const char *name = ufo_value_map_str (m->names, session, session);
    char when [32];
    s_stamp (when, sizeof when, ts);
    when [8] = 0;                   //  seconds are enough for people
    ufo_buf_t line = { 0 };
    const char *color = "";
    if (strcmp (type, "task.submitted") == 0 && host) {
        const char *device = ufo_value_map_str (body, "device", "");
        ufo_buf_printf (&line, "%s  %s  submitted%s%s: %s", when, name, *device ? " for device " : "", device,
                        ufo_value_str (ufo_value_path (body, "body.requests.0")) ?
                        ufo_value_str (ufo_value_path (body, "body.requests.0")) : "");
        color = "\033[34m";
    }
    else
    if (strcmp (type, "task.assigned") == 0 && host) {
        ufo_buf_printf (&line, "%s  %s  started by %s", when, name, ufo_value_map_str (body, "worker_name",
                        ufo_value_map_str (body, "worker", "?")));
        color = "\033[36m";
    }
    else
    if (strncmp (type, "task.", 5) == 0 && host && (strcmp (type, "task.done") == 0 || strcmp (type, "task.failed") == 0
                                                   || strcmp (type, "task.cancelled") == 0)) {
        const ufo_value_t *result = ufo_value_map_get (body, "result");
        const char *status = ufo_outcome_session_status (
            ufo_value_type (result) == UFO_TMAP && ufo_value_map_has (result, "status") ? result : NULL,
            ufo_value_map_str (body, "status", ""));
        const char *complete = ufo_value_str (ufo_value_path (result, "evaluation.complete"));
        double cost = ufo_value_map_float (ufo_value_map_get (result, "cost"), "total",
                                           ufo_value_map_float (m->costs, session, 0));
        ufo_buf_printf (&line, "%s  %s  ended %s", when, name, status);
        if (complete)
            ufo_buf_printf (&line, ", evaluation: complete %s", complete);
        ufo_buf_printf (&line, ", $%.4f", cost);
        const char *error = ufo_value_map_str (result, "error", ufo_value_map_str (body, "reason", ""));
        if (*error && strcmp (status, "FINISH") != 0)
            ufo_buf_printf (&line, ": %s", error);
        color = ufo_outcome_completed (result) ? "\033[32m" : "\033[31m";
    }
    else
    if (strcmp (type, "task.failed") == 0) {
        ufo_buf_printf (&line, "%s  %s  %s task failed: %s", when, name, service, ufo_value_map_str (body, "reason", ""));
        color = "\033[31m";
    }
    else
    if (strcmp (type, "worker.ready") == 0 || strcmp (type, "worker.lost") == 0) {
        bool lost = type [7] == 'l';
        ufo_buf_printf (&line, "%s  worker %s (%s%s%s) %s", when, ufo_value_map_str (body, "name",
                        ufo_value_map_str (body, "worker", "?")), service, *ufo_value_map_str (body, "device", "") ?
                        " on " : "", ufo_value_map_str (body, "device", ""), lost ? "lost" : "ready");
        color = lost ? "\033[31m" : "\033[2m";
    }
    else
    if (strcmp (type, "task.progress") == 0 && host) {
        const ufo_value_t *p = ufo_value_map_get (body, "body");
        const char *kind = ufo_value_map_str (p, "kind", "");
        if (strcmp (kind, "cost") == 0) {
            ufo_value_map_set_float (m->costs, session, ufo_value_map_float (p, "session", 0));
            return false;
        }
        if (strcmp (kind, "activity") == 0 && strcmp (ufo_value_map_str (p, "phase", ""), "retry") == 0) {
            ufo_buf_printf (&line, "%s  %s  step %" PRId64 " %s: model call retry %" PRId64 " in %.1f s: %s", when, name,
                            ufo_value_map_int (p, "step", 0), ufo_value_map_str (p, "agent", ""),
                            ufo_value_map_int (p, "attempt", 0), (double) ufo_value_map_int (p, "wait_ms", 0) / 1000.0,
                            ufo_value_map_str (p, "reason", ""));
            color = "\033[33m";
        }
        else
        if (strcmp (kind, "step") == 0) {
            const ufo_value_t *r = ufo_value_map_get (p, "record");
            const ufo_value_t *act = ufo_value_map_get (r, "Action");
            const char *fn = ufo_value_map_str (r, "FunctionCall", ufo_value_map_str (act, "function", ""));
            const char *bash = ufo_value_map_str (r, "Bash", "");
            char action [200], control [200], ctl [400];
            if (strcmp (fn, "Bash") == 0 && *bash)
                snprintf (ctl, sizeof ctl, "bash: %.300s", bash);
            else
                snprintf (ctl, sizeof ctl, "%s", *fn ? fn : "-");
            ufo_cli_cut (action, sizeof action, ctl, 28);
            const char *label = ufo_value_map_str (r, "ControlLabel", "");
            snprintf (ctl, sizeof ctl, "%s%s%s%.300s", *label ? "[" : "", label, *label ? "] " : "",
                      ufo_value_map_str (r, "ControlText", ""));
            ufo_cli_cut (control, sizeof control, ctl, 24);
            const char *why = NULL;
            bool failed = ufo_outcome_step_failed (r, &why);
            const char *status = ufo_value_map_str (r, "Status", "?");
            char agent [120];
            ufo_cli_cut (agent, sizeof agent, ufo_value_map_str (r, "AgentName", ufo_value_map_str (r, "Agent", "?")), 20);
            ufo_buf_printf (&line, "%s  %s  r%" PRId64 " s%-3" PRId64 " ", when, name, ufo_value_map_int (r, "Round", 0),
                            ufo_value_map_int (r, "Step", 0));
            //  padded by characters ("…" is one character, three bytes)
            const char *cells [] = { agent, action, control };
            const size_t widths [] = { 20, 28, 24 };
            for (size_t k = 0; k < 3; k++) {
                ufo_buf_puts (&line, cells [k]);
                size_t chars = 0;
                for (const char *q = cells [k]; *q; q++)
                    chars += ((unsigned char) *q & 0xC0) != 0x80;
                for (; chars <= widths [k]; chars++)
                    ufo_buf_putc (&line, ' ');
            }
            ufo_buf_printf (&line, "%-8s $%.4f", status,
                            ufo_value_map_float (m->costs, session, 0) + ufo_value_map_float (r, "Cost", 0));
            if (failed) {
                char cut [300];
                ufo_cli_cut (cut, sizeof cut, why, 200);
                ufo_buf_printf (&line, "  \xE2\x9C\x97 %s", cut);
                color = "\033[31m";
            }
            else
                color = strcmp (status, "FINISH") == 0 ? "\033[32m" : "";
        }
    }
    if (!line.len)
        return false;
    //  texts from the network (requests, errors) never reach the terminal as control codes
    char *clean = ufo_malloc (line.len * 3 + 8);
    ufo_cli_cut (clean, line.len * 3 + 8, line.data, line.len);
    printf ("%s%s%s\n", s_c (m, color), clean, m->color && *color ? "\033[0m" : "");
    free (clean);
    ufo_buf_free (&line);
    return true;
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
        if (m->raw) {
            if (m->stats || strcmp (ufo_msg_type (msg), "broker.stats") != 0)
                s_print_line (m, ufo_msg_type (msg), ufo_msg_timestamp (msg), body);
        }
        else
            s_print_person (m, ufo_msg_type (msg), ufo_msg_timestamp (msg), body);
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
                    "  --raw             one line per bus event (tasks, workers, blackboard), not per step\n"
                    "  --stats           with --raw: the broker's stats lines too (every 5 s)\n"
                    "  --json            one JSON object per line (snapshot, event, gap), every event\n"
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
        if (strcmp (arg, "--raw") == 0)
            m.raw = true;
        else
        if (strcmp (arg, "--stats") == 0)
            m.stats = m.raw = true;
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
    m.color = !m.json && !no_color && isatty (STDOUT_FILENO) && !(getenv ("NO_COLOR") && *getenv ("NO_COLOR"));
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
    //  no broker: say so within a second
    ufo_value_t *probe = ufo_cli_broker_state (cmd_ep, "ufo-monitor", 1000, &err);
    if (!probe) {
        fprintf (stderr, "ufo monitor: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    ufo_value_destroy (&probe);
    m.client = ufo_bb_client_new (cmd_ep, bus_ep, &err);
    if (!m.client) {
        fprintf (stderr, "ufo monitor: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    m.log_root = log_root;
    m.names = ufo_value_new_map ();
    m.costs = ufo_value_new_map ();
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
    ufo_value_destroy (&m.names);
    ufo_value_destroy (&m.costs);
    return rc;
}
