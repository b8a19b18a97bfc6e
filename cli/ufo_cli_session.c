/*  ufo_cli_session.c - shared by `ufo run` and `ufo batch` (see ufo_cli_session.h). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_bb_proto.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_outcome.h"
#include "ufo_value.h"
#include "ufo_cli_session.h"
#include "ufo_cli_term.h"

int
ufo_cli_run_dir (char *out, size_t size, ufo_error_t *err)
{
    char endpoint [512];
    if (ufo_bb_endpoint (NULL, "cmd", endpoint, sizeof endpoint, err) != 0)
        return -1;
    //  "ipc://DIR/broker-cmd"
    const char *dir = endpoint + strlen ("ipc://");
    const char *slash = strrchr (dir, '/');
    if (!slash || (size_t) (slash - dir) >= size)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "run directory too long");
    memcpy (out, dir, (size_t) (slash - dir));
    out [slash - dir] = 0;
    return 0;
}

int
ufo_cli_broker (const char *flag, const ufo_config_t *config, char *endpoint, size_t size,
                char *log_root, size_t lsize, ufo_error_t *err)
{
    char cwd [PATH_MAX];
    if (!getcwd (cwd, sizeof cwd))
        snprintf (cwd, sizeof cwd, ".");
    const char *logdir = ufo_config_str (config, "log.dir", "logs");
    if (logdir [0] == '/')
        snprintf (log_root, lsize, "%s", logdir);
    else
        snprintf (log_root, lsize, "%s/%s", cwd, logdir);
    char dir [256], path [512];
    ufo_value_t *state = NULL;
    if (ufo_cli_run_dir (dir, sizeof dir, NULL) == 0) {
        snprintf (path, sizeof path, "%s/up.json", dir);
        if (access (path, R_OK) == 0)
            state = ufo_json_parse_file (path, NULL, NULL);
    }
    const char *from_state = ufo_value_map_str (state, "cmd_endpoint", NULL);
    const char *state_logs = ufo_value_map_str (state, "log_root", NULL);
    if (state_logs && !getenv ("UFO_LOG__DIR"))
        snprintf (log_root, lsize, "%s", state_logs);
    const char *configured = flag && *flag ? flag : from_state && *from_state ? from_state
                           : ufo_config_str (config, "broker.cmd_endpoint", "");
    int rc = ufo_bb_endpoint (configured, "cmd", endpoint, size, err);
    ufo_value_destroy (&state);
    return rc;
}

ufo_value_t *
ufo_cli_broker_state (const char *endpoint, const char *sender, int timeout_ms, ufo_error_t *err)
{
    if (strncmp (endpoint, "ipc://", 6) == 0 && access (endpoint + 6, F_OK) != 0) {
        ufo_error_set (err, UFO_E_UNAVAILABLE, "no broker at %s (the socket does not exist); start one with "
                       "`ufo up` (or give --broker EP)", endpoint);
        return NULL;
    }
    ufo_error_t cerr = { 0 };
    ufo_bb_client_t *client = ufo_bb_client_new (endpoint, NULL, &cerr);
    ufo_value_t *state = NULL;
    if (client) {
        ufo_bb_client_set_timeout (client, timeout_ms);
        ufo_bb_client_set_sender (client, sender);
        state = ufo_bb_client_call (client, "dispatch.state", NULL, NULL, 0, NULL, NULL, &cerr);
    }
    ufo_bb_client_destroy (&client);
    if (!state)
        ufo_error_set (err, UFO_E_UNAVAILABLE, "no broker answered at %s within %.1f s (%s); start one with "
                       "`ufo up` (or give --broker EP)", endpoint, timeout_ms / 1000.0, cerr.message);
    return state;
}

bool
ufo_cli_host_devices (const ufo_value_t *state, const char *device, char *out, size_t size)
{
    bool found = !device || !*device;
    size_t n = 0;
    out [0] = 0;
    const ufo_value_t *workers = ufo_value_map_get (state, "workers");
    for (size_t i = 0; i < ufo_value_size (workers); i++) {
        const ufo_value_t *w = ufo_value_list_at (workers, i);
        const char *dev = ufo_value_map_str (w, "device", "");
        if (strcmp (ufo_value_map_str (w, "service", ""), "host") != 0 || !*dev)
            continue;
        if (device && strcmp (dev, device) == 0)
            found = true;
        //  each device once
        bool listed = false;
        for (const char *p = out; (p = strstr (p, dev)) != NULL; p += strlen (dev))
            if ((p == out || p [-1] == ' ') && (p [strlen (dev)] == ',' || !p [strlen (dev)]))
                listed = true;
        if (!listed && n + strlen (dev) + 3 < size)
            n += (size_t) snprintf (out + n, size - n, "%s%s", n ? ", " : "", dev);
    }
    return found;
}

//  True when name is one of the comma-separated list ("a, b").
static bool
s_listed (const char *list, const char *name)
{
    char probe [600], have [1100];
    snprintf (probe, sizeof probe, ", %s,", name);
    snprintf (have, sizeof have, ", %s,", list);
    return *name && strstr (have, probe) != NULL;
}

//  Appends the devices of state's "devices_seen" not yet in out.
static void
s_add_seen (const ufo_value_t *state, char *out, size_t size)
{
    const ufo_value_t *seen = ufo_value_map_get (state, "devices_seen");
    for (size_t i = 0; i < ufo_value_size (seen); i++) {
        const char *dev = ufo_value_str (ufo_value_list_at (seen, i));
        if (!dev || !*dev || s_listed (out, dev))
            continue;
        size_t n = strlen (out);
        if (n + strlen (dev) + 3 < size)
            snprintf (out + n, size - n, "%s%s", n ? ", " : "", dev);
    }
}

//  True when the local `ufo up` (its up.json in the run directory, for this endpoint) started
//  a HostAgent for device.
static bool
s_up_started (const char *endpoint, const char *device)
{
    char dir [256], path [512];
    if (!device || ufo_cli_run_dir (dir, sizeof dir, NULL) != 0)
        return false;
    snprintf (path, sizeof path, "%s/up.json", dir);
    ufo_value_t *state = access (path, R_OK) == 0 ? ufo_json_parse_file (path, NULL, NULL) : NULL;
    bool found = false;
    const ufo_value_t *devices = ufo_value_map_get (state, "devices");
    if (!strcmp (ufo_value_map_str (state, "cmd_endpoint", ""), endpoint))
        for (size_t i = 0; i < ufo_value_size (devices) && !found; i++)
            found = !strcmp (ufo_value_map_str (ufo_value_list_at (devices, i), "id", ""), device);
    ufo_value_destroy (&state);
    return found;
}

int
ufo_cli_device_check (const char *endpoint, const char *sender, const char *device, int64_t grace_ms,
                      bool quiet, bool *none_p, ufo_error_t *err)
{
    struct timespec t0;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    bool told = false;
    bool started = s_up_started (endpoint, device);     //  by the local `ufo up`: on its way
    for (;;) {
        ufo_value_t *state = ufo_cli_broker_state (endpoint, sender, 1000, err);
        if (!state)
            return -1;
        char connected [512], known [1024];
        bool served = ufo_cli_host_devices (state, device, connected, sizeof connected);
        snprintf (known, sizeof known, "%s", connected);
        s_add_seen (state, known, sizeof known);
        if (none_p)
            *none_p = !*connected;
        //  seen since the broker started: its HostAgent is reconnecting, the session waits
        bool seen = device && s_listed (known, device);
        struct timespec now;
        clock_gettime (CLOCK_MONOTONIC, &now);
        int64_t waited = (int64_t) (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
        //  a broker without "uptime_ms" (older): count from our own start
        int64_t age = ufo_value_map_has (state, "uptime_ms") ? ufo_value_map_int (state, "uptime_ms", 0) : waited;
        ufo_value_destroy (&state);
        if (served || seen)
            return 1;
        //  HostAgents are connected, none for this device: refused at once. None connected
        //  yet (or this device is one the local `ufo up` started), and the broker has just
        //  started: they may still be on their way.
        if ((*connected && !started) || age >= grace_ms) {
            if (*known)
                ufo_error_set (err, UFO_E_NOT_FOUND, "no HostAgent serves device \"%s\"; known devices: %s", device,
                               known);
            else
                ufo_error_set (err, UFO_E_NOT_FOUND, "no HostAgent serves device \"%s\": none has connected to the "
                               "broker (is `ufo up` running? `ufo status` lists the workers)", device);
            return 0;
        }
        if (!told && !quiet)
            fprintf (stderr, "ufo run: %s (the broker started %.1f s ago); waiting up to %.0f s for it, to tell "
                     "whether device \"%s\" exists\n", *connected ? "the HostAgent of this device has not connected yet"
                     : "no HostAgent has connected yet", age / 1000.0, (grace_ms - age) / 1000.0, device);
        told = true;
        usleep (250 * 1000);
    }
}

void
ufo_cli_new_id (char *out, size_t size, const char *prefix)
{
    time_t now = time (NULL);
    struct tm tm;
    localtime_r (&now, &tm);
    char stamp [32];
    strftime (stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    uint32_t r = 0;
    int fd = open ("/dev/urandom", O_RDONLY);
    if (fd < 0 || read (fd, &r, sizeof r) != (ssize_t) sizeof r) {
        struct timespec ts;
        clock_gettime (CLOCK_MONOTONIC, &ts);
        r = (uint32_t) ts.tv_nsec ^ (uint32_t) getpid () << 16;
    }
    if (fd >= 0)
        close (fd);
    snprintf (out, size, "%s-%s-%08x", prefix, stamp, r);
}

ufo_value_t *
ufo_cli_session_spec (const char *session, const char *task, const char *log_root,
                      const ufo_value_t *requests, const ufo_value_t *plan, const char *device,
                      bool interactive, bool auto_confirm, int64_t deadline_ms)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "session", session);
    ufo_value_map_set_str (body, "task", task);
    ufo_value_map_set_str (body, "log_root", log_root);
    ufo_value_map_set_copy (body, "requests", requests);
    ufo_value_map_set_str (body, "mode", plan ? "follower" : "normal");
    if (plan)
        ufo_value_map_set_copy (body, "plan", plan);
    ufo_value_map_set_bool (body, "interactive", interactive);
    ufo_value_map_set_bool (body, "auto_confirm", auto_confirm);
    ufo_value_t *spec = ufo_value_new_map ();
    ufo_value_map_set_str (spec, "service", "host");
    if (device && *device)
        ufo_value_map_set_str (spec, "device", device);
    else
        ufo_value_map_set_null (spec, "device");
    ufo_value_map_set_str (spec, "session", session);
    ufo_value_map_set_str (spec, "idempotency_key", session);
    if (deadline_ms > 0)
        ufo_value_map_set_int (spec, "deadline_ms", deadline_ms);
    ufo_value_map_set (spec, "body", &body);
    return spec;
}

ufo_value_t *
ufo_cli_load_plan (const char *path, ufo_error_t *err)
{
    FILE *f = fopen (path, "rb");
    if (!f) {
        ufo_error_set (err, UFO_E_IO, "plan %s: %s", path, strerror (errno));
        return NULL;
    }
    ufo_buf_t text = { 0 };
    char chunk [4096];
    size_t n;
    while ((n = fread (chunk, 1, sizeof chunk, f)) > 0 && text.len < (1 << 20))
        ufo_buf_append (&text, chunk, n);
    fclose (f);
    ufo_value_t *plan = NULL;
    ufo_value_t *doc = text.len ? ufo_json_parse (text.data, text.len, NULL, NULL) : NULL;
    const ufo_value_t *list = ufo_value_type (doc) == UFO_TMAP ? ufo_value_map_get (doc, "plan") : doc;
    if (ufo_value_type (list) == UFO_TLIST) {
        plan = ufo_value_new_list ();
        for (size_t i = 0; i < ufo_value_size (list); i++) {
            const char *s = ufo_value_str (ufo_value_list_at (list, i));
            if (!s) {
                ufo_value_destroy (&plan);
                ufo_error_set (err, UFO_E_TYPE, "plan %s: entry %zu is not a text", path, i);
                break;
            }
            ufo_value_list_push_str (plan, s);
        }
    }
    else if (doc)
        ufo_error_set (err, UFO_E_TYPE, "plan %s: expected a list of subtasks or {\"plan\": [...]}", path);
    else {
        //  one subtask per non-empty line
        plan = ufo_value_new_list ();
        char *p = text.data;
        while (p && p < text.data + text.len) {
            char *end = memchr (p, '\n', (size_t) (text.data + text.len - p));
            size_t len = end ? (size_t) (end - p) : (size_t) (text.data + text.len - p);
            while (len && isspace ((unsigned char) p [len - 1]))
                len--;
            while (len && isspace ((unsigned char) *p)) {
                p++;
                len--;
            }
            if (len)
                ufo_value_list_push (plan, &(ufo_value_t *) { ufo_value_new_stringn (p, len) });
            p = end ? end + 1 : NULL;
        }
    }
    ufo_value_destroy (&doc);
    ufo_buf_free (&text);
    if (plan && ufo_value_size (plan) == 0) {
        ufo_value_destroy (&plan);
        ufo_error_set (err, UFO_E_INVALID, "plan %s holds no subtask", path);
    }
    return plan;
}

//  Column widths of the step table for the terminal width (a prefix takes room too):
//  step, mark, agent, status, action, control, cost; the subtask gets a column only on a
//  wide terminal (from 120 columns), else a line of its own when it changes.
typedef struct {
    size_t agent, action, control, subtask;
} s_cols_t;

static s_cols_t
s_cols (const char *prefix)
{
    size_t width = (size_t) ufo_cli_term.width;
    size_t used = prefix ? strlen (prefix) + 1 : 0;
    width = width > used + 60 ? width - used : 60;
    //  fixed: "%4d" + mark + 6 separators + status 8 + cost 7 = 26
    size_t rest = width - 26;
    s_cols_t c = { .agent = 17 };
    if (width >= 120) {
        c.agent = 20;
        rest = width - 26 - c.agent;
        c.subtask = rest * 30 / 100;
        rest -= c.subtask + 1;
    }
    else
        rest -= c.agent;
    c.action = rest * 55 / 100;
    c.control = rest - c.action;
    return c;
}

void
ufo_cli_print_step_header (FILE *out)
{
    s_cols_t c = s_cols (NULL);
    fprintf (out, "%s%4s  ", ufo_cli_color ("bold"), "step");
    ufo_cli_pad (out, "agent", c.agent + 1);
    ufo_cli_pad (out, "status", 9);
    if (c.subtask)
        ufo_cli_pad (out, "subtask", c.subtask + 1);
    ufo_cli_pad (out, "action", c.action + 1);
    ufo_cli_pad (out, "control", c.control + 1);
    fprintf (out, "cost%s\n", ufo_cli_color ("off"));
}

void
ufo_cli_print_step (FILE *out, const char *prefix, const ufo_value_t *record, double session_cost)
{
    static char last_subtask [400];
    s_cols_t c = s_cols (prefix);
    char subtask [400], control [400], action [400], agent [200], cut [400];
    const ufo_value_t *act = ufo_value_map_get (record, "Action");
    const char *sub = ufo_value_map_str (record, "Subtask", "");
    if (!*sub)
        sub = ufo_value_map_str (record, "CurrentSubtask", "");
    ufo_cli_cut (subtask, sizeof subtask, sub, c.subtask ? c.subtask : (size_t) ufo_cli_term.width - 14);
    const char *fn = ufo_value_map_str (record, "FunctionCall", ufo_value_map_str (act, "function", ""));
    char *args = ufo_json_dump (ufo_value_map_get (act, "args"), UFO_JSON_COMPACT, NULL);
    char call [600];
    const char *bash = ufo_value_map_str (record, "Bash", "");
    if (strcmp (fn, "Bash") == 0 && *bash)
        snprintf (call, sizeof call, "bash: %s", bash);
    else
        snprintf (call, sizeof call, "%s%s", fn, *fn && args && strcmp (args, "{}") ? args : "");
    ufo_cli_cut (action, sizeof action, call, c.action);
    free (args);
    const char *label = ufo_value_map_str (record, "ControlLabel", "");
    char ctl [400];
    snprintf (ctl, sizeof ctl, "%s%s%s%.300s", *label ? "[" : "", label, *label ? "] " : "",
              ufo_value_map_str (record, "ControlText", ""));
    ufo_cli_cut (control, sizeof control, ctl, c.control);
    ufo_cli_cut (agent, sizeof agent, ufo_value_map_str (record, "AgentName", ufo_value_map_str (record, "Agent", "?")),
                 c.agent);
    const char *status = ufo_value_map_str (record, "Status", "?");
    const char *why = NULL;
    bool failed = ufo_outcome_step_failed (record, &why);
    const char *pre = prefix ? prefix : "";
    const char *sp = prefix ? " " : "";
    if (!prefix && !c.subtask && *sub && strcmp (sub, last_subtask) != 0) {
        //  a narrow table: the subtask on a line of its own when it changes
        fprintf (out, "%s      subtask: %s%s\n", ufo_cli_color ("dim"), subtask, ufo_cli_color ("off"));
        snprintf (last_subtask, sizeof last_subtask, "%s", sub);
    }
    fprintf (out, "%s%s%4" PRId64 "%s%s%s ", pre, sp, ufo_value_map_int (record, "Step", 0),
             ufo_cli_color ("red"), failed ? "\xE2\x9C\x97" : " ", ufo_cli_color ("off"));
    ufo_cli_pad (out, agent, c.agent + 1);
    ufo_cli_cut (cut, sizeof cut, status, 8);
    fputs (ufo_cli_color (ufo_cli_status_color (status)), out);
    ufo_cli_pad (out, cut, 8);
    fprintf (out, "%s ", ufo_cli_color ("off"));
    if (c.subtask)
        ufo_cli_pad (out, subtask, c.subtask + 1);
    ufo_cli_pad (out, action, c.action + 1);
    ufo_cli_pad (out, control, c.control + 1);
    fprintf (out, "%s$%.4f%s\n", ufo_cli_color ("dim"), session_cost, ufo_cli_color ("off"));
    if (failed) {
        char line [1200];
        snprintf (line, sizeof line, "\xE2\x9C\x97 %s", why);
        ufo_cli_cut (cut, sizeof cut, line, (size_t) ufo_cli_term.width - 7 - strlen (pre) - strlen (sp));
        fprintf (out, "%s%s      %s%s%s\n", pre, sp, ufo_cli_color ("red"), cut, ufo_cli_color ("off"));
    }
    fflush (out);
}

const char *
ufo_cli_mark (const char *answer)
{
    if (answer && strcmp (answer, "yes") == 0)
        return "✅";
    if (answer && strcmp (answer, "no") == 0)
        return "❌";
    return "❓";
}

void
ufo_cli_print_evaluation (FILE *out, const char *title, const ufo_value_t *result)
{
    if (ufo_value_type (result) != UFO_TMAP) {
        fprintf (out, "%s: none\n", title);
        return;
    }
    const char *complete = ufo_value_map_str (result, "complete", "unsure");
    fprintf (out, "%s: %s complete: %s\n", title, ufo_cli_mark (complete), complete);
    const ufo_value_t *scores = ufo_value_map_get (result, "sub_scores");
    for (size_t i = 0; ufo_value_type (scores) == UFO_TMAP && i < ufo_value_size (scores); i++) {
        const char *v = ufo_value_str (ufo_value_map_value_at (scores, i));
        fprintf (out, "  %s %s: %s\n", ufo_cli_mark (v), ufo_value_map_key_at (scores, i), v ? v : "?");
    }
    const char *reason = ufo_value_map_str (result, "reason", "");
    if (*reason)
        fprintf (out, "  reason: %s\n", reason);
    fflush (out);
}

int
ufo_cli_exit_code (const ufo_value_t *result)
{
    return ufo_outcome_completed (result) ? 0 : 1;
}
