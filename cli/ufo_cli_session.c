/*  ufo_cli_session.c - shared by `ufo run` and `ufo batch` (see ufo_cli_session.h). */
#include "ufo_prelude.h"
#include "ufo_cli_session.h"

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

//  Text cut to max bytes (on a UTF-8 boundary), newlines as spaces.
static void
s_cut (char *out, size_t size, const char *text, size_t max)
{
    size_t n = 0;
    for (const char *p = text ? text : ""; *p && n + 4 < size; p++) {
        if (n >= max && ((unsigned char) *p & 0xC0) != 0x80) {
            memcpy (out + n, "…", strlen ("…"));
            n += strlen ("…");
            break;
        }
        out [n++] = *p == '\n' || *p == '\r' || *p == '\t' ? ' ' : *p;
    }
    out [n] = 0;
}

//  Prints text and pads it with spaces to width characters (UTF-8 aware).
static void
s_pad (FILE *out, const char *text, size_t width)
{
    size_t chars = 0;
    for (const char *p = text; *p; p++)
        chars += ((unsigned char) *p & 0xC0) != 0x80;
    fputs (text, out);
    for (; chars < width; chars++)
        fputc (' ', out);
}

void
ufo_cli_print_step_header (FILE *out)
{
    fprintf (out, "%-8s  %-25s %-8s %-35s %-35s %-27s %s\n", "step", "agent", "status", "subtask", "action",
             "control", "cost");
}

void
ufo_cli_print_step (FILE *out, const char *prefix, const ufo_value_t *record, double session_cost)
{
    char subtask [160], control [120], action [200];
    const ufo_value_t *act = ufo_value_map_get (record, "Action");
    s_cut (subtask, sizeof subtask, ufo_value_map_str (record, "Subtask",
           ufo_value_map_str (record, "CurrentSubtask", "")), 33);
    const char *fn = ufo_value_map_str (record, "FunctionCall", ufo_value_map_str (act, "function", ""));
    char *args = ufo_json_dump (ufo_value_map_get (act, "args"), UFO_JSON_COMPACT, NULL);
    char call [400];
    snprintf (call, sizeof call, "%s%s", fn, *fn && args && strcmp (args, "{}") ? args : "");
    s_cut (action, sizeof action, call, 33);
    free (args);
    const char *label = ufo_value_map_str (record, "ControlLabel", "");
    char ctl [200];
    snprintf (ctl, sizeof ctl, "%s%s%s", *label ? "[" : "", label, *label ? "] " : "");
    size_t l = strlen (ctl);
    s_cut (ctl + l, sizeof ctl - l, ufo_value_map_str (record, "ControlText", ""), 32);
    s_cut (control, sizeof control, ctl, 25);
    //  widths in characters: pad by hand, "…" is one character but three bytes
    fprintf (out, "%s%sstep %3" PRId64 "  %-25s %-8s ", prefix ? prefix : "", prefix ? " " : "",
             ufo_value_map_int (record, "Step", 0),
             ufo_value_map_str (record, "AgentName", ufo_value_map_str (record, "Agent", "?")),
             ufo_value_map_str (record, "Status", "?"));
    s_pad (out, subtask, 35);
    s_pad (out, action, 35);
    s_pad (out, control, 27);
    fprintf (out, "$%.4f\n", session_cost);
    const char *error = ufo_value_map_str (record, "error", "");
    if (*error)
        fprintf (out, "%s%s         error: %s\n", prefix ? prefix : "", prefix ? " " : "", error);
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
    if (strcmp (ufo_value_map_str (result, "status", ""), "FINISH") != 0)
        return 1;
    const char *complete = ufo_value_str (ufo_value_path (result, "evaluation.complete"));
    return complete && strcmp (complete, "no") == 0 ? 1 : 0;
}
