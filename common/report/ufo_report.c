/*  ufo_report.c - the session report: loads logs/<task>/ and writes the page frame
    (head, header, totals, requests, notes); ufo_report_steps.c renders the body. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_outcome.h"
#include "ufo_value.h"
#include "ufo_report.h"
#include "ufo_report_int.h"

#include <dirent.h>
#include <sys/random.h>

#define S_MAX_LOG_BYTES     (512u << 20)    //  bigger log files are read up to here
#define S_DEFAULT_MAX_IMAGE (32u << 20)
#define S_STEP_ID_KEY       "__report_id"   //  anchor number given to each step when loading

void
ufo_report_note (s_report_t *self, const char *format, ...)
{
    char text [512];
    va_list args;
    va_start (args, format);
    vsnprintf (text, sizeof text, format, args);
    va_end (args);
    ufo_warn ("report %s: %s", self->logdir, text);
    ufo_value_list_push_str (self->notes, text);
    self->stats.notes++;
}

int64_t
ufo_report_step_id (const ufo_value_t *step, size_t index)
{
    return ufo_value_map_int (step, S_STEP_ID_KEY, (int64_t) index);
}

//  Reads a whole file, at most S_MAX_LOG_BYTES. Returns the bytes (caller frees) or NULL
//  when the file is absent (*missing = true) or unreadable (a note is recorded).
static char *
s_read_file (s_report_t *self, const char *name, size_t *len_p, bool *missing)
{
    *missing = false;
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/%s", self->logdir, name);
    FILE *file = fopen (path, "rb");
    if (!file) {
        if (errno == ENOENT)
            *missing = true;
        else
            ufo_report_note (self, "%s: cannot open (%s)", name, strerror (errno));
        return NULL;
    }
    ufo_buf_t buf = {0};
    char chunk [65536];
    size_t got;
    bool cut = false;
    while ((got = fread (chunk, 1, sizeof chunk, file)) > 0) {
        if (buf.len + got > S_MAX_LOG_BYTES) {
            got = S_MAX_LOG_BYTES - buf.len;
            cut = true;
        }
        ufo_buf_append (&buf, chunk, got);
        if (cut)
            break;
    }
    bool failed = ferror (file) != 0;
    fclose (file);
    if (failed)
        ufo_report_note (self, "%s: read error; showing what could be read", name);
    if (cut)
        ufo_report_note (self, "%s: larger than %u MiB; only the start is shown",
                         name, S_MAX_LOG_BYTES >> 20);
    return ufo_buf_detach (&buf, len_p);
}

//  Loads a JSON object file. Returns the map or NULL (a note says why, unless quiet_missing).
static ufo_value_t *
s_load_object (s_report_t *self, const char *name, const char *missing_note)
{
    size_t len;
    bool missing;
    char *text = s_read_file (self, name, &len, &missing);
    if (!text) {
        if (missing && missing_note)
            ufo_report_note (self, "%s is missing%s", name, missing_note);
        return NULL;
    }
    ufo_error_t err;
    ufo_value_t *value = ufo_json_parse (text, len, NULL, &err);
    free (text);
    if (!value) {
        ufo_report_note (self, "%s is not valid JSON (%s at byte %zu: %s)", name,
                         ufo_errcode_name (err.code), err.offset, err.message);
        return NULL;
    }
    if (ufo_value_type (value) != UFO_TMAP) {
        ufo_report_note (self, "%s is not a JSON object (it is a %s)", name,
                         ufo_value_type_name (ufo_value_type (value)));
        ufo_value_destroy (&value);
    }
    return value;
}

//  Loads a JSON-lines file into a list of objects; bad lines are noted and skipped.
static ufo_value_t *
s_load_lines (s_report_t *self, const char *name, const char *missing_note)
{
    ufo_value_t *list = ufo_value_new_list ();
    size_t len;
    bool missing;
    char *text = s_read_file (self, name, &len, &missing);
    if (!text) {
        if (missing && missing_note)
            ufo_report_note (self, "%s is missing%s", name, missing_note);
        return list;
    }
    size_t lineno = 0, pos = 0;
    while (pos < len) {
        char *start = text + pos;
        char *end = memchr (start, '\n', len - pos);
        size_t line_len = end ? (size_t) (end - start) : len - pos;
        pos += line_len + (end ? 1 : 0);
        lineno++;
        while (line_len > 0 && (start [line_len - 1] == '\r' || start [line_len - 1] == ' '))
            line_len--;
        if (line_len == 0)
            continue;
        ufo_error_t err;
        ufo_value_t *value = ufo_json_parse (start, line_len, NULL, &err);
        if (!value) {
            ufo_report_note (self, "%s line %zu is not valid JSON (%s at byte %zu: %s)%s",
                             name, lineno, ufo_errcode_name (err.code), err.offset,
                             err.message, end ? "" : "; the last line is cut short: "
                             "the session may have died while writing it");
            continue;
        }
        if (ufo_value_type (value) != UFO_TMAP) {
            ufo_report_note (self, "%s line %zu is a JSON %s, not an object; skipped", name,
                             lineno, ufo_value_type_name (ufo_value_type (value)));
            ufo_value_destroy (&value);
            continue;
        }
        ufo_value_list_push (list, &value);
    }
    free (text);
    return list;
}

//  Gives every step a unique anchor number: its Step field when that is a non-negative
//  integer not used by an earlier line, else a number after the largest Step.
static void
s_number_steps (s_report_t *self)
{
    const int64_t limit = 1 << 24;              //  larger Step numbers count as unusable
    size_t count = ufo_value_size (self->steps);
    int64_t max = -1;
    for (size_t i = 0; i < count; i++) {
        ufo_value_t *field = ufo_value_map_get (ufo_value_list_at (self->steps, i), "Step");
        int64_t id = ufo_value_type (field) == UFO_TINT ? ufo_value_int (field) : -1;
        if (id >= 0 && id < limit && id > max)
            max = id;
    }
    uint8_t *used = ufo_calloc ((size_t) (max + 1) / 8 + 1, 1);
    int64_t next = max;
    size_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        ufo_value_t *step = ufo_value_list_at (self->steps, i);
        ufo_value_t *field = ufo_value_map_get (step, "Step");
        int64_t id = ufo_value_type (field) == UFO_TINT ? ufo_value_int (field) : -1;
        if (id >= 0 && id <= max && !(used [id / 8] & (1u << (id % 8))))
            used [id / 8] |= (uint8_t) (1u << (id % 8));
        else {
            id = ++next;
            bad++;
        }
        ufo_value_map_set_int (step, S_STEP_ID_KEY, id);
    }
    if (bad)
        ufo_report_note (self, "%zu step(s) in response.log have no usable or a repeated "
                         "\"Step\" number; they are numbered from %" PRId64, bad, max + 1);
    free (used);
}

static int
s_int64_cmp (const void *a, const void *b)
{
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

//  Collects the round numbers, ascending, each once: every round that has a request
//  (at most S_MAX_REQUESTS), a step or a round evaluation. Any integer is a round number;
//  a missing or non-integer "Round" counts as round 0.
#define S_MAX_REQUESTS 100000

static void
s_collect_rounds (s_report_t *self)
{
    size_t n_requests = ufo_value_size (ufo_value_map_get (self->request, "requests"));
    if (n_requests > S_MAX_REQUESTS) {
        ufo_report_note (self, "request.json lists %zu requests; only the first %d are shown",
                         n_requests, S_MAX_REQUESTS);
        n_requests = S_MAX_REQUESTS;
    }
    size_t cap = n_requests + ufo_value_size (self->steps) + ufo_value_size (self->evals);
    int64_t *all = ufo_malloc ((cap ? cap : 1) * sizeof (int64_t));
    size_t n = 0;
    for (size_t r = 0; r < n_requests; r++)
        all [n++] = (int64_t) r;
    for (size_t i = 0; i < ufo_value_size (self->steps); i++)
        all [n++] = ufo_value_map_int (ufo_value_list_at (self->steps, i), "Round", 0);
    for (size_t i = 0; i < ufo_value_size (self->evals); i++) {
        ufo_value_t *eval = ufo_value_list_at (self->evals, i);
        if (strcmp (ufo_value_map_str (eval, "level", ""), "round") == 0)
            all [n++] = ufo_value_map_int (eval, "Round", 0);
    }
    qsort (all, n, sizeof (int64_t), s_int64_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || all [i] != all [i - 1])
            ufo_value_list_push_int (self->rounds, all [i]);
    free (all);
    self->stats.rounds = ufo_value_size (self->rounds);
}

//  What request.log recorded as retrieved for each step (docs/KNOWLEDGE.md): only these
//  fields are kept, under "AgentName|Round|Step" (the last record of a step wins).
static const char *const s_knowledge_fields [] = {
    "offline_docs", "online_docs", "experience_examples", "demonstration_examples" };

static void
s_key (const ufo_value_t *r, char *out, size_t size)
{
    snprintf (out, size, "%s|%" PRId64 "|%" PRId64, ufo_value_map_str (r, "AgentName", ""),
              ufo_value_map_int (r, "Round", 0), ufo_value_map_int (r, "Step", -1));
}

static void
s_load_knowledge (s_report_t *self)
{
    self->knowledge = ufo_value_new_map ();
    ufo_value_t *requests = s_load_lines (self, "request.log", NULL);
    for (size_t i = 0; i < ufo_value_size (requests); i++) {
        const ufo_value_t *r = ufo_value_list_at (requests, i);
        ufo_value_t *found = ufo_value_new_map ();
        for (size_t k = 0; k < UFO_ARRAY_SIZE (s_knowledge_fields); k++) {
            const ufo_value_t *v = ufo_value_map_get (r, s_knowledge_fields [k]);
            if (ufo_value_type (v) == UFO_TLIST)
                ufo_value_map_set_copy (found, s_knowledge_fields [k], v);
        }
        char key [300];
        s_key (r, key, sizeof key);
        if (ufo_value_size (found))
            ufo_value_map_set (self->knowledge, key, &found);
        ufo_value_destroy (&found);
    }
    ufo_value_destroy (&requests);
}

const ufo_value_t *
ufo_report_step_knowledge (s_report_t *self, const ufo_value_t *step)
{
    char key [300];
    s_key (step, key, sizeof key);
    return ufo_value_map_get (self->knowledge, key);
}

static void
s_load (s_report_t *self)
{
    self->request = s_load_object (self, "request.json", ": the request is taken from the steps");
    self->steps = s_load_lines (self, "response.log", ": no step was logged");
    self->evals = s_load_lines (self, "evaluation.log", NULL);
    s_load_knowledge (self);
    self->session = s_load_object (self, "session.json",
                                   ": the session may not have ended; totals are "
                                   "computed from the steps");
    self->blackboard = s_load_object (self, "blackboard.json", NULL);
    s_number_steps (self);
    s_collect_rounds (self);
    self->stats.steps = ufo_value_size (self->steps);
    self->stats.evaluations = ufo_value_size (self->evals);
}

static void
s_make_nonce (char nonce [33])
{
    uint8_t bytes [16];
    if (getrandom (bytes, sizeof bytes, 0) != (ssize_t) sizeof bytes) {
        //  Not secret material: it only has to be unknown to whoever wrote the logs.
        struct timespec now;
        clock_gettime (CLOCK_REALTIME, &now);
        uint64_t mix = (uint64_t) now.tv_nsec * 6364136223846793005ull ^ (uint64_t) getpid ();
        for (size_t i = 0; i < sizeof bytes; i++) {
            mix = mix * 6364136223846793005ull + 1442695040888963407ull;
            bytes [i] = (uint8_t) (mix >> 56);
        }
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf (nonce + 2 * i, 3, "%02x", bytes [i]);
}

//  Totals: from session.json when present, else summed over the steps.
static void
s_totals (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    double cost = 0, duration = 0;
    int64_t prompt = 0, completion = 0;
    for (size_t i = 0; i < ufo_value_size (self->steps); i++) {
        ufo_value_t *step = ufo_value_list_at (self->steps, i);
        cost += ufo_value_map_float (step, "Cost", 0);
        duration += ufo_value_float (ufo_value_path (step, "time_cost.total"));
        prompt += ufo_value_int (ufo_value_path (step, "Tokens.prompt"));
        completion += ufo_value_int (ufo_value_path (step, "Tokens.completion"));
    }
    for (size_t i = 0; i < ufo_value_size (self->evals); i++)
        cost += ufo_value_map_float (ufo_value_list_at (self->evals, i), "Cost", 0);
    int64_t steps = (int64_t) self->stats.steps;
    const char *source = "summed over the logged steps";
    if (self->session) {
        source = "from session.json";
        steps = ufo_value_map_int (self->session, "steps", steps);
        duration = ufo_value_map_float (self->session, "duration_s", duration);
        ufo_value_t *c = ufo_value_map_get (self->session, "cost");
        cost = ufo_value_map_float (c, "total", cost);
        prompt = ufo_value_map_int (c, "prompt_tokens", prompt);
        completion = ufo_value_map_int (c, "completion_tokens", completion);
    }
    ufo_buf_puts (out, "<section id=\"totals\"><h2>Totals</h2><dl class=\"totals\">");
    ufo_buf_printf (out, "<div><dt>Steps</dt><dd id=\"total-steps\">%" PRId64 "</dd></div>",
                    steps);
    ufo_buf_printf (out, "<div><dt>Rounds</dt><dd>%zu</dd></div>", self->stats.rounds);
    ufo_buf_printf (out, "<div><dt>Time</dt><dd>%.1f s</dd></div>", duration);
    ufo_buf_printf (out, "<div><dt>Cost</dt><dd>$%.4f</dd></div>", cost);
    ufo_buf_printf (out, "<div><dt>LLM tokens</dt><dd>%" PRId64 " <small>prompt</small> + %"
                    PRId64 " <small>completion</small></dd></div>", prompt, completion);
    ufo_buf_printf (out, "</dl><p class=\"muted\">Figures %s.</p></section>\n", source);
}

static void
s_requests (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_buf_puts (out, "<section id=\"requests\"><h2>Request</h2><ul class=\"requests\">");
    ufo_value_t *requests = ufo_value_map_get (self->request, "requests");
    for (size_t r = 0; r < ufo_value_size (self->rounds); r++) {
        int64_t round = ufo_value_int (ufo_value_list_at (self->rounds, r));
        const ufo_value_t *text = ufo_value_list_at (requests, (size_t) round);
        for (size_t i = 0; !text && i < ufo_value_size (self->steps); i++) {
            ufo_value_t *step = ufo_value_list_at (self->steps, i);
            if (ufo_value_map_int (step, "Round", 0) == round)
                text = ufo_value_map_get (step, "Request");
        }
        ufo_buf_printf (out, "<li><a href=\"#round-%" PRId64 "\">Round %" PRId64 "</a>: ",
                        round, round);
        if (text)
            ufo_report_esc_value (out, text, 0);
        else
            ufo_buf_puts (out, "<em>(request not logged)</em>");
        ufo_buf_puts (out, "</li>");
    }
    if (ufo_value_size (self->rounds) == 0)
        ufo_buf_puts (out, "<li class=\"missing\">No request was logged.</li>");
    ufo_buf_puts (out, "</ul>");
    if (self->request) {
        ufo_buf_puts (out, "<p class=\"muted\">");
        const char *keys [] = { "mode", "device", "session" };
        for (size_t k = 0; k < UFO_ARRAY_SIZE (keys); k++) {
            ufo_value_t *v = ufo_value_map_get (self->request, keys [k]);
            if (!v)
                continue;
            ufo_buf_printf (out, "%s: <code>", keys [k]);
            ufo_report_esc_value (out, v, 200);
            ufo_buf_puts (out, "</code> &middot; ");
        }
        ufo_value_t *llm = ufo_value_map_get (self->request, "llm");
        ufo_buf_puts (out, "LLM: <code>");
        ufo_report_esc_value (out, ufo_value_map_get (llm, "mode"), 100);
        ufo_buf_puts (out, "</code> ");
        ufo_report_esc_value (out, ufo_value_map_get (llm, "endpoint"), 300);
        ufo_buf_puts (out, "</p>");
    }
    ufo_buf_puts (out, "</section>\n");
}

static void
s_notes (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    if (ufo_value_size (self->notes) == 0)
        return;
    ufo_buf_printf (out, "<section id=\"notes\" class=\"notes\" role=\"alert\"><h2>Problems "
                    "reading the logs (%zu)</h2><ul>", ufo_value_size (self->notes));
    for (size_t i = 0; i < ufo_value_size (self->notes); i++) {
        ufo_buf_puts (out, "<li>");
        ufo_report_esc_value (out, ufo_value_list_at (self->notes, i), 0);
        ufo_buf_puts (out, "</li>");
    }
    ufo_buf_puts (out, "</ul></section>\n");
}

static void
s_toc (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    ufo_buf_puts (out, "<nav class=\"toc\" aria-label=\"Contents\"><ul>"
                  "<li><a href=\"#requests\">Request</a></li>"
                  "<li><a href=\"#totals\">Totals</a></li>"
                  "<li><a href=\"#timeline\">Timeline</a></li>");
    for (size_t r = 0; r < ufo_value_size (self->rounds); r++) {
        int64_t round = ufo_value_int (ufo_value_list_at (self->rounds, r));
        ufo_buf_printf (out, "<li class=\"sub\"><a href=\"#round-%" PRId64 "\">Round %" PRId64
                        "</a></li>", round, round);
    }
    ufo_buf_puts (out, "<li><a href=\"#blackboard\">Blackboard</a></li>"
                  "<li><a href=\"#evaluation\">Evaluation</a></li>");
    if (ufo_value_size (self->notes))
        ufo_buf_puts (out, "<li><a href=\"#notes\">Problems</a></li>");
    ufo_buf_puts (out, "</ul></nav>\n");
}

static void
s_page (s_report_t *self)
{
    ufo_buf_t *out = self->out;
    const char *task = ufo_value_map_str (self->request, "task",
                                          ufo_value_map_str (self->session, "task", NULL));
    if (!task) {
        const char *slash = strrchr (self->logdir, '/');
        task = slash && slash [1] ? slash + 1 : self->logdir;
    }
    ufo_buf_printf (out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                    "img-src data: 'self' file:; style-src 'unsafe-inline'; script-src "
                    "'nonce-%s'; base-uri 'none'; form-action 'none'\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<meta name=\"generator\" content=\"ufobus %s\">\n<title>",
                    self->nonce, UFO_VERSION);
    if (self->opts.title)
        ufo_report_escs (out, self->opts.title);
    else {
        ufo_buf_puts (out, "ufo report: ");
        ufo_report_escs (out, task);
    }
    ufo_buf_printf (out, "</title>\n<style>%s</style>\n</head>\n<body>\n", ufo_report_css);

    const char *status = ufo_value_map_str (self->session, "status", NULL);
    ufo_buf_puts (out, "<header class=\"top\"><h1><span class=\"muted\">ufo report</span> ");
    ufo_report_escs (out, task);
    ufo_buf_puts (out, "</h1><p>");
    if (status) {
        ufo_buf_puts (out, "<span class=\"status st-");
        ufo_report_escs (out, status);
        ufo_buf_puts (out, "\">");
        ufo_report_escs (out, status);
        ufo_buf_puts (out, "</span> ");
    }
    else
        ufo_buf_puts (out, "<span class=\"status st-UNKNOWN\">not ended</span> ");
    const char *started = ufo_value_map_str (self->request, "started",
                                             ufo_value_map_str (self->session, "started", NULL));
    if (started) {
        ufo_buf_puts (out, "started ");
        ufo_report_escs (out, started);
    }
    const char *ended = ufo_value_map_str (self->session, "ended", NULL);
    if (ended) {
        ufo_buf_puts (out, " &middot; ended ");
        ufo_report_escs (out, ended);
    }
    const ufo_value_t *eval = ufo_report_session_eval (self);
    if (eval) {
        ufo_buf_puts (out, " &middot; <a href=\"#evaluation\">evaluation</a>: ");
        ufo_report_verdict (out, ufo_value_map_str (eval, "complete", "unsure"));
    }
    if (eval && status) {
        //  one line when the evaluation and the agents' status disagree
        ufo_value_t *both = ufo_value_new_map ();
        ufo_value_map_set_str (both, "status", status);
        ufo_value_map_set_copy (both, "evaluation", eval);
        char line [160];
        if (ufo_outcome_disagreement (both, line, sizeof line)) {
            ufo_buf_puts (out, "</p><p class=\"err disagree\">\xE2\x9A\xA0 ");
            ufo_report_escs (out, line);
        }
        ufo_value_destroy (&both);
    }
    ufo_buf_puts (out, "</p></header>\n");
    //  The tool bar is only useful with the script; it stays hidden without it.
    ufo_buf_puts (out, "<div id=\"tools\" class=\"tools\" hidden>"
                  "<label>Agent <select id=\"f-agent\"><option value=\"\">all</option></select></label>"
                  "<label>Status <select id=\"f-status\"><option value=\"\">all</option></select></label>"
                  "<label>Find <input id=\"f-text\" type=\"search\" placeholder=\"text in steps  (/)\"></label>"
                  "<label>Step <input id=\"f-step\" type=\"number\" min=\"0\" placeholder=\"#\"></label>"
                  "<button id=\"b-expand\" type=\"button\" title=\"e\">Expand all</button>"
                  "<button id=\"b-collapse\" type=\"button\" title=\"c\">Collapse all</button>"
                  "<span class=\"muted\" id=\"f-count\"></span>"
                  "<span class=\"muted keys\" title=\"j / k: next / previous step; e / c: expand / collapse "
                  "all; /: find; g: go to step; Esc: close a zoomed screenshot\">keys: j k e c / g</span>"
                  "</div>\n");
    //  The body first, into its own buffer: rendering it may find more problems (a bad
    //  image), and the list of problems goes above it.
    ufo_buf_t body = {0};
    self->out = &body;
    s_requests (self);
    s_totals (self);
    ufo_report_timeline (self);
    ufo_report_rounds (self);
    ufo_report_blackboard (self);
    ufo_report_evaluations (self);
    self->out = out;
    ufo_buf_puts (out, "<div class=\"layout\">");
    s_toc (self);
    ufo_buf_puts (out, "<main>\n");
    s_notes (self);
    ufo_buf_append (out, body.data, body.len);
    ufo_buf_free (&body);
    ufo_buf_printf (out, "</main></div>\n<footer class=\"muted\">Written by <code>ufo report</code> "
                    "(ufobus %s) from ", UFO_VERSION);
    ufo_report_escs (out, self->logdir);
    ufo_buf_printf (out, ". No network is needed to view it.</footer>\n"
                    "<script nonce=\"%s\">%s</script>\n</body></html>\n",
                    self->nonce, ufo_report_js);
}

static void
s_report_free (s_report_t *self)
{
    free (self->logdir);
    free (self->image_prefix);
    ufo_value_destroy (&self->request);
    ufo_value_destroy (&self->session);
    ufo_value_destroy (&self->blackboard);
    ufo_value_destroy (&self->steps);
    ufo_value_destroy (&self->evals);
    ufo_value_destroy (&self->knowledge);
    ufo_value_destroy (&self->notes);
    ufo_value_destroy (&self->rounds);
}

char *
ufo_report_render (const char *logdir, const char *image_prefix,
                   const ufo_report_options_t *opts, size_t *len_p,
                   ufo_report_stats_t *stats_p, ufo_error_t *err)
{
    assert (logdir);
    struct stat st;
    if (stat (logdir, &st) != 0)
        return ufo_error_set (err, UFO_E_NOT_FOUND, "log directory %s: %s", logdir,
                              strerror (errno)), NULL;
    if (!S_ISDIR (st.st_mode))
        return ufo_error_set (err, UFO_E_INVALID, "%s is not a directory", logdir), NULL;
    DIR *dir = opendir (logdir);
    if (!dir)
        return ufo_error_set (err, UFO_E_IO, "log directory %s: %s", logdir,
                              strerror (errno)), NULL;
    closedir (dir);

    s_report_t self = {0};
    self.logdir = ufo_strdup (logdir);
    size_t dirlen = strlen (self.logdir);
    while (dirlen > 1 && self.logdir [dirlen - 1] == '/')
        self.logdir [--dirlen] = '\0';
    self.image_prefix = ufo_strdup (image_prefix ? image_prefix : "");
    if (opts)
        self.opts = *opts;
    if (self.opts.max_image_bytes == 0)
        self.opts.max_image_bytes = S_DEFAULT_MAX_IMAGE;
    self.notes = ufo_value_new_list ();
    self.rounds = ufo_value_new_list ();
    s_make_nonce (self.nonce);
    ufo_buf_t out = {0};
    self.out = &out;
    s_load (&self);
    s_page (&self);
    self.stats.bytes = out.len;
    if (stats_p)
        *stats_p = self.stats;
    s_report_free (&self);
    return ufo_buf_detach (&out, len_p);
}

//  The prefix by which a page written to out_path refers to files of logdir: "" when it
//  sits in logdir itself, else logdir's absolute path, percent-encoded, with a slash.
static char *
s_image_prefix (const char *logdir, const char *out_path)
{
    char *dir_real = realpath (logdir, NULL);
    char *out_copy = ufo_strdup (out_path);
    char *slash = strrchr (out_copy, '/');
    char *out_dir_real = NULL;
    if (!slash)
        out_dir_real = realpath (".", NULL);
    else if (slash == out_copy)
        out_dir_real = ufo_strdup ("/");
    else {
        *slash = '\0';
        out_dir_real = realpath (out_copy, NULL);
    }
    ufo_buf_t prefix = {0};
    if (dir_real && (!out_dir_real || strcmp (dir_real, out_dir_real) != 0)) {
        for (const unsigned char *p = (const unsigned char *) dir_real; *p; p++) {
            if (isalnum (*p) || strchr ("/-._~", *p))
                ufo_buf_putc (&prefix, (char) *p);
            else
                ufo_buf_printf (&prefix, "%%%02X", *p);
        }
        ufo_buf_putc (&prefix, '/');
    }
    free (dir_real);
    free (out_dir_real);
    free (out_copy);
    return ufo_buf_detach (&prefix, NULL);
}

int
ufo_report_write_stats (const char *logdir, const char *out_path,
                        const ufo_report_options_t *opts, ufo_report_stats_t *stats_p,
                        ufo_error_t *err)
{
    assert (logdir);
    char default_path [PATH_MAX];
    if (!out_path) {
        snprintf (default_path, sizeof default_path, "%s/report.html", logdir);
        out_path = default_path;
    }
    char *prefix = s_image_prefix (logdir, out_path);
    size_t len;
    char *html = ufo_report_render (logdir, prefix, opts, &len, stats_p, err);
    free (prefix);
    if (!html)
        return -1;
    char tmp [PATH_MAX + 32];
    snprintf (tmp, sizeof tmp, "%s.tmp.%d", out_path, (int) getpid ());
    FILE *file = fopen (tmp, "wb");
    if (!file) {
        free (html);
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", tmp, strerror (errno));
    }
    bool ok = fwrite (html, 1, len, file) == len;
    ok = (fclose (file) == 0) && ok;
    free (html);
    if (!ok || rename (tmp, out_path) != 0) {
        int saved = errno;
        unlink (tmp);
        return ufo_error_set (err, UFO_E_IO, "cannot write %s: %s", out_path, strerror (saved));
    }
    return 0;
}

int
ufo_report_write (const char *logdir, const char *out_path,
                  const ufo_report_options_t *opts, ufo_error_t *err)
{
    return ufo_report_write_stats (logdir, out_path, opts, NULL, err);
}

bool
ufo_report_is_session_log (const char *dir, ufo_error_t *err)
{
    struct stat st;
    if (!dir || stat (dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        ufo_error_set (err, UFO_E_NOT_FOUND, "%s is not a directory", dir ? dir : "(null)");
        return false;
    }
    static const char *marks [] = { "request.json", "response.log", "session.json" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (marks); i++) {
        char path [PATH_MAX];
        int n = snprintf (path, sizeof path, "%s/%s", dir, marks [i]);
        if (n > 0 && (size_t) n < sizeof path && access (path, F_OK) == 0)
            return true;
    }
    ufo_error_set (err, UFO_E_INVALID, "%s is not a session log directory (no request.json, response.log or "
                   "session.json); nothing written", dir);
    return false;
}
