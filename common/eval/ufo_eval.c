/*  ufo_eval.c - the EvaluationAgent: judges a round or a session from its logs
    (see ufo_eval.h and docs/EVALUATION.md). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_eval.h"
#include "ufo_eval_int.h"

#define S_MAX_ROUND 100000                //  larger round numbers in the logs are not believed

typedef struct _s_job_t s_job_t;
struct _s_job_t {
    int64_t id;
    int64_t llm_id;                 //  request in the LLM client, 0 when none
    ufo_eval_t *owner;
    ufo_eval_done_fn *done;
    void *arg;
    ufo_value_t *result;            //  filled as the inputs are read
    ufo_tasklog_t *log;             //  NULL when the directory could not be opened
    ufo_value_t *prompt;            //  the messages sent, image URLs replaced by file names
    s_job_t *next;
};

struct _ufo_eval_t {
    const ufo_config_t *config;
    ufo_llm_t *llm;
    ufo_prompts_t *prompts;
    bool visual;                    //  VISUAL_MODE of EVALUATION_AGENT (falls back to APP_AGENT)
    bool all_screenshots;           //  EVA_ALL_SCREENSHOTS
    int json_retry;                 //  JSON_PARSING_RETRY
    int64_t max_image_bytes;        //  eval.max_image_bytes, 0 = no limit
    ufo_value_t *catalogue;         //  action name -> description
    char secrets [2][512];          //  API keys of the evaluator and the backup engine
    s_job_t *jobs;
    int64_t next_id;
};

ufo_eval_t *
ufo_eval_new (const ufo_config_t *config, ufo_llm_t *llm, ufo_prompts_t *prompts, ufo_error_t *err)
{
    if (!config || !llm || !prompts) {
        ufo_error_set (err, UFO_E_INVALID, "evaluation: a configuration, an LLM client and "
                       "prompts are required");
        return NULL;
    }
    ufo_eval_t *self = ufo_calloc (1, sizeof *self);
    self->config = config;
    self->llm = llm;
    self->prompts = prompts;
    const ufo_value_t *visual = ufo_config_agent (config, "EVALUATION_AGENT", "VISUAL_MODE");
    self->visual = ufo_value_type (visual) == UFO_TBOOL ? ufo_value_bool (visual) : true;
    self->all_screenshots = ufo_config_bool (config, "EVA_ALL_SCREENSHOTS", true);
    self->json_retry = (int) ufo_config_int (config, "JSON_PARSING_RETRY", 3);
    self->max_image_bytes = ufo_config_int (config, "eval.max_image_bytes",
                                            UFO_EVAL_MAX_IMAGE_BYTES_DEFAULT);
    self->catalogue = ufo_eval_load_catalogue (ufo_prompts_dir (prompts));
    const char *blocks [2] = { "EVALUATION_AGENT", "BACKUP_AGENT" };
    for (int i = 0; i < 2; i++) {
        ufo_llm_config_t cfg;
        ufo_error_t ignored;
        ufo_llm_config_defaults (&cfg);
        if (ufo_llm_config_from (config, blocks [i], &cfg, &ignored) == 0)
            snprintf (self->secrets [i], sizeof self->secrets [i], "%s", cfg.api_key);
    }
    self->next_id = 1;
    return self;
}

static void
s_job_free (s_job_t **job_p)
{
    s_job_t *job = *job_p;
    if (!job)
        return;
    ufo_value_destroy (&job->result);
    ufo_value_destroy (&job->prompt);
    ufo_tasklog_destroy (&job->log);
    free (job);
    *job_p = NULL;
}

static void
s_unlink (ufo_eval_t *self, s_job_t *job)
{
    for (s_job_t **p = &self->jobs; *p; p = &(*p)->next)
        if (*p == job) {
            *p = job->next;
            job->next = NULL;
            return;
        }
}

void
ufo_eval_destroy (ufo_eval_t **self_p)
{
    ufo_eval_t *self = *self_p;
    if (!self)
        return;
    while (self->jobs) {
        s_job_t *job = self->jobs;
        self->jobs = job->next;
        if (job->llm_id > 0)
            ufo_llm_cancel (self->llm, job->llm_id);
        s_job_free (&job);
    }
    ufo_value_destroy (&self->catalogue);
    free (self);
    *self_p = NULL;
}

void
ufo_eval_set_max_image_bytes (ufo_eval_t *self, int64_t bytes)
{
    self->max_image_bytes = bytes < 0 ? 0 : bytes;
}

size_t
ufo_eval_pending (const ufo_eval_t *self)
{
    size_t n = 0;
    for (const s_job_t *job = self->jobs; job; job = job->next)
        n++;
    return n;
}

//  --- Finishing -----------------------------------------------------------------------

static void
s_timestamp (char *buf, size_t size)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r (&ts.tv_sec, &tm);
    strftime (buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

//  The evaluation.log record of a result (docs/LOGS.md field names).
static ufo_value_t *
s_log_record (const ufo_value_t *result)
{
    ufo_value_t *rec = ufo_value_new_map ();
    const char *level = ufo_value_map_str (result, "level", "session");
    ufo_value_map_set_str (rec, "level", level);
    if (strcmp (level, "round") == 0)
        ufo_value_map_set_int (rec, "Round", ufo_value_map_int (result, "round", 0));
    const char *copied [] = { "request", "reason", "sub_scores", "complete", "screenshots",
                              "images", "screenshot_note", "steps", "engine", "model", "source", "by", "error" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (copied); i++) {
        const ufo_value_t *v = ufo_value_map_get (result, copied [i]);
        if (!v || (ufo_value_type (v) == UFO_TSTRING && ufo_value_strlen (v) == 0
                   && strcmp (copied [i], "reason") != 0 && strcmp (copied [i], "request") != 0))
            continue;
        ufo_value_map_set_copy (rec, copied [i], v);
    }
    const ufo_value_t *cost = ufo_value_map_get (result, "cost");
    ufo_value_map_set_float (rec, "Cost", ufo_value_map_float (cost, "total", 0));
    ufo_value_t *tokens = ufo_value_new_map ();
    ufo_value_map_set_int (tokens, "prompt", ufo_value_map_int (cost, "prompt_tokens", 0));
    ufo_value_map_set_int (tokens, "completion", ufo_value_map_int (cost, "completion_tokens", 0));
    ufo_value_map_set (rec, "Tokens", &tokens);
    char ts [32];
    s_timestamp (ts, sizeof ts);
    ufo_value_map_set_str (rec, "Timestamp", ts);
    return rec;
}

//  Logs the job's result and hands it to the caller; frees the job (already unlinked).
static void
s_deliver (s_job_t *job)
{
    if (job->log) {
        ufo_value_t *rec = s_log_record (job->result);
        ufo_error_t err;
        if (ufo_tasklog_append (job->log, "evaluation.log", rec, &err) != 0)
            ufo_warn ("evaluation: cannot write evaluation.log: %s", err.message);
        ufo_value_destroy (&rec);
    }
    const char *error = ufo_value_map_str (job->result, "error", "");
    if (*error)
        ufo_warn ("evaluation (%s): %s", ufo_value_map_str (job->result, "level", "?"), error);
    else
        ufo_info ("evaluation (%s): complete %s", ufo_value_map_str (job->result, "level", "?"),
                  ufo_value_map_str (job->result, "complete", "?"));
    ufo_value_t *result = job->result;
    job->result = NULL;
    ufo_eval_done_fn *done = job->done;
    void *arg = job->arg;
    s_job_free (&job);
    if (done)
        done (&result, arg);
    ufo_value_destroy (&result);
}

//  Marks the result as failed with a reason (printf style).
static void
s_fail (s_job_t *job, const char *format, ...) __attribute__ ((format (printf, 2, 3)));
static void
s_fail (s_job_t *job, const char *format, ...)
{
    char message [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (message, sizeof message, format, args);
    va_end (args);
    ufo_value_map_set_str (job->result, "error", message);
    ufo_value_t *reason = ufo_value_new_stringf ("The evaluation could not be made: %s", message);
    ufo_value_map_set (job->result, "reason", &reason);
    ufo_value_map_set (job->result, "sub_scores", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_str (job->result, "complete", "unsure");
}

static void
s_on_reply (ufo_llm_response_t **response_p, void *arg)
{
    s_job_t *job = arg;
    ufo_llm_response_t *r = *response_p;
    ufo_eval_t *self = job->owner;
    s_unlink (self, job);
    job->llm_id = 0;
    ufo_value_t *cost = ufo_value_new_map ();
    ufo_value_map_set_float (cost, "total", r->cost);
    ufo_value_map_set_int (cost, "prompt_tokens", r->prompt_tokens);
    ufo_value_map_set_int (cost, "completion_tokens", r->completion_tokens);
    ufo_value_map_set (job->result, "cost", &cost);
    ufo_value_map_set_str (job->result, "engine", r->engine);
    if (job->log && job->prompt) {
        ufo_value_t *rec = ufo_value_new_map ();
        ufo_value_map_set_int (rec, "Step", -1);
        ufo_value_map_set_str (rec, "Agent", "EvaluationAgent");
        ufo_value_map_set_str (rec, "AgentName", "EvaluationAgent");
        ufo_value_map_set_int (rec, "Round", ufo_value_map_int (job->result, "round", -1));
        ufo_value_map_set_str (rec, "level", ufo_value_map_str (job->result, "level", ""));
        ufo_value_map_set (rec, "prompt", &job->prompt);
        ufo_value_map_set_str (rec, "model", r->model);
        ufo_value_map_set_int (rec, "asks", r->asks);
        ufo_error_t err;
        if (ufo_tasklog_append (job->log, "request.log", rec, &err) != 0)
            ufo_warn ("evaluation: cannot write request.log: %s", err.message);
        ufo_value_destroy (&rec);
    }
    if (r->code == UFO_OK && ufo_value_type (r->decision) == UFO_TMAP) {
        //  The schema validated these: reason string, complete and each sub-score in
        //  yes / no / unsure (canonical case).
        ufo_value_map_set_copy (job->result, "reason", ufo_value_map_get (r->decision, "reason"));
        const ufo_value_t *scores = ufo_value_map_get (r->decision, "sub_scores");
        if (ufo_value_type (scores) == UFO_TMAP)
            ufo_value_map_set_copy (job->result, "sub_scores", scores);
        else
            ufo_value_map_set (job->result, "sub_scores", &(ufo_value_t *) { ufo_value_new_map () });
        ufo_value_map_set_str (job->result, "complete",
                               ufo_value_map_str (r->decision, "complete", "unsure"));
        ufo_value_map_set_str (job->result, "error", "");
        ufo_value_map_set_str (job->result, "model", r->model);     //  who judged ("provider/model")
    }
    else
        s_fail (job, "%s", r->error ? r->error : "the model gave no usable answer");
    s_deliver (job);
}

//  --- Building the prompt -----------------------------------------------------------------

//  A fresh result with the fields every outcome has.
static ufo_value_t *
s_result_new (const char *level, int64_t round)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_str (r, "level", level);
    ufo_value_map_set_int (r, "round", strcmp (level, "round") == 0 ? round : -1);
    ufo_value_map_set_str (r, "request", "");
    ufo_value_map_set_str (r, "reason", "");
    ufo_value_map_set (r, "sub_scores", &(ufo_value_t *) { ufo_value_new_map () });
    ufo_value_map_set_str (r, "complete", "unsure");
    ufo_value_map_set_str (r, "screenshots", "none");
    ufo_value_map_set_int (r, "images", 0);
    ufo_value_map_set_str (r, "screenshot_note", "");
    ufo_value_map_set_int (r, "steps", 0);
    ufo_value_t *cost = ufo_value_new_map ();
    ufo_value_map_set_float (cost, "total", 0);
    ufo_value_map_set_int (cost, "prompt_tokens", 0);
    ufo_value_map_set_int (cost, "completion_tokens", 0);
    ufo_value_map_set (r, "cost", &cost);
    ufo_value_map_set_str (r, "engine", "");
    ufo_value_map_set_str (r, "source", "");
    ufo_value_map_set_str (r, "error", "");
    return r;
}

//  The request text judged: one round's, or every round's for the session.
static char *
s_request_text (const ufo_value_t *requests, bool round_level, int64_t round)
{
    if (round_level) {
        const char *t = ufo_value_str (ufo_value_list_at (requests, (size_t) round));
        return t && *t ? ufo_strdup (t) : NULL;
    }
    size_t nonempty = 0;
    const char *only = NULL;
    for (size_t i = 0; i < ufo_value_size (requests); i++) {
        const char *t = ufo_value_str (ufo_value_list_at (requests, i));
        if (t && *t) {
            nonempty++;
            only = t;
        }
    }
    if (nonempty == 0)
        return NULL;
    if (nonempty == 1)
        return ufo_strdup (only);
    ufo_buf_t b = { 0 };
    for (size_t i = 0; i < ufo_value_size (requests); i++) {
        const char *t = ufo_value_str (ufo_value_list_at (requests, i));
        if (t && *t)
            ufo_buf_printf (&b, "%sRound %zu: %s", b.len ? "\n" : "", i, t);
    }
    return ufo_buf_detach (&b, NULL);
}

//  The catalogue lines of the actions used, in order of first use.
static ufo_value_t *
s_actions_used (ufo_eval_t *self, const ufo_value_t *records)
{
    ufo_value_t *seen = ufo_value_new_map ();
    ufo_value_t *lines = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (records); i++) {
        const ufo_value_t *rec = ufo_value_list_at (records, i);
        const char *fn = ufo_eval_step_function (rec);
        const char *bash = ufo_value_map_str (rec, "Bash", "");
        const char *status = ufo_value_map_str (rec, "Status", "");
        char key [160];
        const char *line = NULL;
        char buf [4200];
        if (fn) {
            snprintf (key, sizeof key, "%s", fn);
            const char *desc = ufo_value_map_str (self->catalogue, fn, NULL);
            snprintf (buf, sizeof buf, "- \"%s\": %s", fn, desc ? desc : "(not in the action catalogue)");
            line = buf;
        }
        else
        if (*bash) {
            snprintf (key, sizeof key, "%s", "(Bash)");
            line = "- \"Bash\" (HostAgent): launch an allow-listed application by name (no shell); "
                   "its window appears at the next step.";
        }
        else
        if (strcmp (status, "ASSIGN") == 0) {
            snprintf (key, sizeof key, "%s", "(ASSIGN)");
            line = "- \"ASSIGN\" (HostAgent): select an application window and hand it the "
                   "current subtask.";
        }
        if (!line || ufo_value_map_has (seen, key))
            continue;
        ufo_value_map_set_bool (seen, key, true);
        ufo_value_list_push_str (lines, line);
    }
    ufo_value_destroy (&seen);
    return lines;
}

//  The subtasks of the AppAgent records with the status of their last step.
static ufo_value_t *
s_subtasks (const ufo_value_t *records)
{
    ufo_value_t *list = ufo_value_new_list ();
    int64_t cur_round = -1, cur_index = -2;
    for (size_t i = 0; i < ufo_value_size (records); i++) {
        const ufo_value_t *rec = ufo_value_list_at (records, i);
        if (strcmp (ufo_value_map_str (rec, "Agent", ""), "AppAgent") != 0)
            continue;
        int64_t round = ufo_value_map_int (rec, "Round", 0);
        int64_t index = ufo_value_map_int (rec, "SubtaskIndex", -1);
        const char *status = ufo_value_map_str (rec, "Status", "");
        if (round != cur_round || index != cur_index || ufo_value_size (list) == 0) {
            ufo_value_t *s = ufo_value_new_map ();
            ufo_value_map_set_str (s, "subtask", ufo_value_map_str (rec, "Subtask", ""));
            ufo_value_map_set_str (s, "status", status);
            ufo_value_list_push (list, &s);
            cur_round = round;
            cur_index = index;
        }
        else
            ufo_value_map_set_str (ufo_value_list_at (list, ufo_value_size (list) - 1), "status", status);
    }
    return list;
}

static void
s_add_finals (ufo_value_t *shots, const char *dir, int64_t round, int64_t subtask)
{
    char name [96], label [256];
    if (subtask >= 0) {
        snprintf (name, sizeof name, "action_round_%" PRId64 "_sub_round_%" PRId64 "_final.png",
                  round, subtask);
        snprintf (label, sizeof label, "The window when subtask %" PRId64 " of round %" PRId64
                  " ended:", subtask, round);
        ufo_eval_add_shot (shots, dir, name, label);
    }
}

//  The screenshot files of the rounds judged, in the order they were taken: one pass over
//  the records (chronological), each step's own screenshot, the subtask's final window when
//  its subtask changes, the round's final screenshot when its round changes; then the
//  final screenshots of rounds that logged no step (rounds < rounds).
static ufo_value_t *
s_screenshots (const char *dir, const ufo_value_t *records, int64_t only_round, int64_t rounds)
{
    ufo_value_t *shots = ufo_value_new_list ();
    char name [96], label [256];
    int64_t round = -1, subtask = -1;
    uint8_t *seen = ufo_calloc (S_MAX_ROUND + 1, 1);
    for (size_t i = 0; i <= ufo_value_size (records); i++) {
        const ufo_value_t *rec = ufo_value_list_at (records, i);       //  NULL: the end
        int64_t r = rec ? ufo_value_map_int (rec, "Round", 0) : -2;
        int64_t index = rec ? ufo_value_map_int (rec, "SubtaskIndex", -1) : -1;
        if (round >= 0 && (r != round || index != subtask))
            s_add_finals (shots, dir, round, subtask);
        if (round >= 0 && r != round) {
            snprintf (name, sizeof name, "action_round_%" PRId64 "_final.png", round);
            snprintf (label, sizeof label, "Final screenshot of round %" PRId64 ":", round);
            ufo_eval_add_shot (shots, dir, name, label);
        }
        if (!rec)
            break;
        round = r;
        subtask = index;
        seen [r] = 1;           //  the records were filtered to 0..S_MAX_ROUND
        snprintf (label, sizeof label, "Screenshot of step %" PRId64 " (%s), before its action:",
                  ufo_value_map_int (rec, "Step", 0),
                  ufo_value_map_str (rec, "AgentName", ufo_value_map_str (rec, "Agent", "agent")));
        ufo_eval_add_shot (shots, dir, ufo_value_map_str (rec, "ScreenshotPath", NULL), label);
    }
    for (int64_t r = only_round >= 0 ? only_round : 0;
         r <= (only_round >= 0 ? only_round : rounds - 1) && r <= S_MAX_ROUND; r++) {
        if (seen [r])
            continue;
        snprintf (name, sizeof name, "action_round_%" PRId64 "_final.png", r);
        snprintf (label, sizeof label, "Final screenshot of round %" PRId64 ":", r);
        ufo_eval_add_shot (shots, dir, name, label);
    }
    free (seen);
    return shots;
}

//  Bytes the trajectory takes in the prompt: each item as the template renders it ({{this}}:
//  Python-style JSON for a map, the text for a string) and its line break.
static int64_t
s_trajectory_bytes (const ufo_value_t *trajectory)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < ufo_value_size (trajectory); i++) {
        const ufo_value_t *item = ufo_value_list_at (trajectory, i);
        if (ufo_value_type (item) == UFO_TSTRING)
            bytes += (int64_t) ufo_value_strlen (item);
        else {
            ufo_buf_t b = { 0 };
            ufo_json_append (&b, item, UFO_JSON_PY);
            bytes += (int64_t) b.len;
            ufo_buf_free (&b);
        }
        bytes++;
    }
    return bytes;
}

//  Chooses the screenshots to send (all, or first and last), loads them as data URLs and
//  records the choice in the result. Returns the prompt's image list. The budget
//  (eval.max_image_bytes) covers the screenshots and the trajectory text (text_bytes)
//  together; when even the first and the last are over it they are still sent, and the
//  note says so.
static ufo_value_t *
s_select_images (ufo_eval_t *self, s_job_t *job, const char *dir, const ufo_value_t *shots,
                 int64_t text_bytes, bool want_all, char *note, size_t note_size)
{
    ufo_value_t *images = ufo_value_new_list ();
    size_t n = ufo_value_size (shots);
    note [0] = '\0';
    if (!self->visual || n == 0) {
        ufo_value_map_set_str (job->result, "screenshots", "none");
        return images;
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ufo_value_map_int (ufo_value_list_at (shots, i), "bytes", 0);
    int64_t budget = self->max_image_bytes;
    bool all = want_all;
    if (want_all && budget > 0 && total + text_bytes > budget && n > 2) {
        all = false;
        snprintf (note, note_size, "the %zu screenshots (%" PRId64 " bytes) with the trajectory text (%" PRId64
                  " bytes) exceed the image budget of %" PRId64 " bytes (eval.max_image_bytes), so only the "
                  "first and the last are shown", n, total, text_bytes, budget);
        ufo_value_map_set_str (job->result, "screenshot_note", note);
    }
    else
    if (!want_all && n > 2)
        snprintf (note, note_size, "only the first and the last of %zu screenshots are shown", n);
    int64_t kept = all ? total : ufo_value_map_int (ufo_value_list_at (shots, 0), "bytes", 0)
                                 + (n > 1 ? ufo_value_map_int (ufo_value_list_at (shots, n - 1), "bytes", 0) : 0);
    if (budget > 0 && (!all || n <= 2) && kept + text_bytes > budget) {
        size_t len = strlen (note);
        snprintf (note + len, note_size - len, "%seven the first and the last screenshots (%" PRId64 " bytes) "
                  "with the trajectory text (%" PRId64 " bytes) are over the budget of %" PRId64 " bytes "
                  "(eval.max_image_bytes); they are sent anyway", len ? "; " : "", kept, text_bytes, budget);
        ufo_value_map_set_str (job->result, "screenshot_note", note);
    }
    if (*ufo_value_map_str (job->result, "screenshot_note", ""))
        ufo_warn ("evaluation: %s", note);
    ufo_value_map_set_str (job->result, "screenshots", all ? "all" : "first_last");
    for (size_t i = 0; i < n; i++) {
        if (!all && i != 0 && i != n - 1)
            continue;
        const ufo_value_t *shot = ufo_value_list_at (shots, i);
        ufo_error_t err;
        const char *given_url = ufo_value_map_str (shot, "url", NULL);
        char *url = given_url ? ufo_strdup (given_url)
                              : ufo_eval_data_url (dir, ufo_value_map_str (shot, "file", ""), &err);
        if (!url) {
            ufo_warn ("evaluation: %s (left out)", err.message);
            continue;
        }
        ufo_value_t *img = ufo_value_new_map ();
        ufo_value_map_set_str (img, "label", ufo_value_map_str (shot, "label", ""));
        ufo_value_map_set_str (img, "file", ufo_value_map_str (shot, "file", ""));
        ufo_value_map_set (img, "url", &(ufo_value_t *) { ufo_value_new_string (url) });
        free (url);
        ufo_value_list_push (images, &img);
    }
    ufo_value_map_set_int (job->result, "images", (int64_t) ufo_value_size (images));
    if (ufo_value_size (images) == 0)
        ufo_value_map_set_str (job->result, "screenshots", "none");
    return images;
}

//  A copy of the messages for request.log: the n-th image URL becomes the n-th file name.
static ufo_value_t *
s_elide_images (const ufo_value_t *messages, const ufo_value_t *images)
{
    ufo_value_t *copy = ufo_value_dup (messages);
    size_t n = 0;
    for (size_t i = 0; i < ufo_value_size (copy); i++) {
        ufo_value_t *content = ufo_value_map_get (ufo_value_list_at (copy, i), "content");
        for (size_t k = 0; ufo_value_type (content) == UFO_TLIST && k < ufo_value_size (content); k++) {
            ufo_value_t *image = ufo_value_map_get (ufo_value_list_at (content, k), "image_url");
            if (ufo_value_type (image) == UFO_TMAP)
                ufo_value_map_set_str (image, "url", ufo_value_map_str (ufo_value_list_at (images, n++),
                                                                        "file", "(image)"));
        }
    }
    return copy;
}

static bool
s_safe_task (const char *task)
{
    return task && *task && !strchr (task, '/') && strcmp (task, ".") && strcmp (task, "..");
}

//  Reads the inputs and builds the prompt. Returns the messages, or NULL after s_fail.
static ufo_value_t *
s_build (ufo_eval_t *self, s_job_t *job, const ufo_eval_request_t *req)
{
    const char *level = req->level ? req->level : "session";
    if (strcmp (level, "session") != 0 && strcmp (level, "round") != 0) {
        s_fail (job, "level must be \"session\" or \"round\" (got \"%s\")", level);
        return NULL;
    }
    bool round_level = strcmp (level, "round") == 0;
    if (round_level && (req->round < 0 || req->round > S_MAX_ROUND)) {
        s_fail (job, "round %" PRId64 " is out of range", req->round);
        return NULL;
    }
    if (!s_safe_task (req->task) || !req->log_root) {
        s_fail (job, "the task name must be one path component, and a log root is required");
        return NULL;
    }
    char dir [PATH_MAX];
    snprintf (dir, sizeof dir, "%s/%s", req->log_root, req->task);
    struct stat st;
    bool have_dir = stat (dir, &st) == 0 && S_ISDIR (st.st_mode);
    const ufo_value_t *board = ufo_value_type (req->board) == UFO_TMAP ? req->board : NULL;
    if (!have_dir && !board) {
        s_fail (job, "log directory %s does not exist", dir);
        return NULL;
    }
    ufo_error_t err;
    ufo_value_t *lines = NULL;
    if (have_dir) {
        job->log = ufo_tasklog_open (req->log_root, req->task, &err);
        if (!job->log) {
            s_fail (job, "cannot open log directory %s: %s", dir, err.message);
            return NULL;
        }
        for (int i = 0; i < 2; i++)
            ufo_tasklog_add_secret (job->log, self->secrets [i]);
        lines = ufo_tasklog_read_lines (job->log, "response.log");
        ufo_value_map_set_str (job->result, "source", "logs");
    }
    else {
        //  The logs are not reachable from here (another machine): the session's board
        //  holds the trajectory items (HISTORY_KEYS + Round, SubtaskIndex, Status...).
        ufo_warn ("evaluation: log directory %s is not reachable; judging from the session's "
                  "blackboard", dir);
        lines = ufo_value_dup (ufo_value_map_get (board, "trajectories"));
        ufo_value_map_set_str (job->result, "source", "board");
    }
    ufo_value_t *all = ufo_value_new_list ();
    int64_t max_round = -1;
    for (size_t i = 0; i < ufo_value_size (lines); i++) {
        ufo_value_t *rec = ufo_value_list_at (lines, i);
        if (ufo_value_type (rec) != UFO_TMAP)
            continue;
        int64_t round = ufo_value_map_int (rec, "Round", 0);
        if (round < 0 || round > S_MAX_ROUND)
            continue;
        if (round > max_round)
            max_round = round;
        ufo_value_list_push (all, &(ufo_value_t *) { ufo_value_dup (rec) });
    }
    ufo_value_destroy (&lines);
    //  At round level a one-element list is that round's request (what the HostAgent
    //  sends); otherwise the list is indexed by round.
    ufo_value_t *given = NULL;
    if (round_level && req->round > 0 && ufo_value_size (req->requests) == 1) {
        given = ufo_value_new_list ();
        for (int64_t r = 0; r < req->round; r++)
            ufo_value_list_push_str (given, "");
        ufo_value_list_push (given, &(ufo_value_t *) { ufo_value_dup (ufo_value_list_at (req->requests, 0)) });
    }
    ufo_value_t *requests = ufo_eval_load_requests (have_dir ? dir : NULL, given ? given : req->requests,
                                                    all, board);
    ufo_value_destroy (&given);
    if ((int64_t) ufo_value_size (requests) - 1 > max_round)
        max_round = (int64_t) ufo_value_size (requests) - 1;
    char *request = s_request_text (requests, round_level, req->round);
    ufo_value_destroy (&requests);
    if (!request) {
        ufo_value_destroy (&all);
        if (round_level)
            s_fail (job, "no request is recorded for round %" PRId64 " in %s", req->round, dir);
        else
            s_fail (job, "no request is recorded in %s", dir);
        return NULL;
    }
    ufo_value_map_set_str (job->result, "request", request);
    //  The records judged.
    ufo_value_t *records = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (all); i++) {
        const ufo_value_t *rec = ufo_value_list_at (all, i);
        if (!round_level || ufo_value_map_int (rec, "Round", 0) == req->round)
            ufo_value_list_push (records, &(ufo_value_t *) { ufo_value_dup (rec) });
    }
    ufo_value_destroy (&all);
    ufo_value_map_set_int (job->result, "steps", (int64_t) ufo_value_size (records));
    ufo_value_t *trajectory = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (records); i++)
        ufo_value_list_push (trajectory, &(ufo_value_t *) {
            ufo_eval_step_item (ufo_value_list_at (records, i)) });
    ufo_value_t *shots = have_dir ? s_screenshots (dir, records, round_level ? req->round : -1, max_round + 1)
                                  : ufo_value_new_list ();
    if (ufo_value_size (shots) == 0 && board)
        ufo_eval_board_shots (shots, board, round_level ? req->round : -1);
    bool want_all = req->all_screenshots < 0 ? self->all_screenshots : req->all_screenshots > 0;
    char note [512];
    ufo_value_t *images = s_select_images (self, job, dir, shots, s_trajectory_bytes (trajectory), want_all,
                                           note, sizeof note);
    ufo_value_destroy (&shots);

    ufo_value_t *vars = ufo_value_new_map ();
    ufo_value_map_set_str (vars, "request", request);
    free (request);
    ufo_value_map_set (vars, "trajectory", &trajectory);
    ufo_value_map_set (vars, "subtasks", &(ufo_value_t *) { s_subtasks (records) });
    ufo_value_map_set (vars, "actions", &(ufo_value_t *) { s_actions_used (self, records) });
    ufo_value_map_set_str (vars, "screenshot_note", note);
    ufo_value_map_set_str (vars, "level", round_level ? "round" : "session");
    ufo_value_destroy (&records);
    //  Without any screenshot the prompt reads as a text-only one (no "screenshots above").
    ufo_prompt_input_t input = { .schema = UFO_SCHEMA_EVAL,
                                 .visual = self->visual && ufo_value_size (images) > 0,
                                 .vars = vars, .images = images };
    ufo_value_t *messages = ufo_prompt_messages (self->prompts, &input, &err);
    ufo_value_destroy (&vars);
    if (messages)
        job->prompt = s_elide_images (messages, images);
    ufo_value_destroy (&images);
    if (!messages)
        s_fail (job, "cannot build the prompt: %s", err.message);
    return messages;
}

static s_job_t *
s_job_new (ufo_eval_t *self, const ufo_eval_request_t *req)
{
    const char *level = req->level ? req->level : "session";
    s_job_t *job = ufo_calloc (1, sizeof *job);
    job->id = self->next_id++;
    job->owner = self;
    job->result = s_result_new (strcmp (level, "round") == 0 ? "round" : "session", req->round);
    ufo_value_map_set_str (job->result, "by", req->by && *req->by ? req->by : "EvaluationAgent");
    return job;
}

int64_t
ufo_eval_start (ufo_eval_t *self, const ufo_eval_request_t *req, ufo_eval_done_fn *done, void *arg)
{
    assert (self && req);
    s_job_t *job = s_job_new (self, req);
    job->done = done;
    job->arg = arg;
    //  Linked before submitting: the reply callback never runs inside ufo_llm_submit.
    job->next = self->jobs;
    self->jobs = job;
    ufo_value_t *messages = s_build (self, job, req);
    if (messages) {
        bool round_level = strcmp (ufo_value_map_str (job->result, "level", ""), "round") == 0;
        ufo_llm_opts_t opts = { .agent = "EvaluationAgent", .step = round_level ? req->round : 0,
                                .schema = UFO_SCHEMA_EVAL, .json_retry = self->json_retry,
                                .on_retry = req->on_retry, .retry_arg = req->retry_arg,
                                .engine = req->engine };
        ufo_error_t err;
        int64_t id = ufo_llm_submit (self->llm, messages, &opts, s_on_reply, job, &err);
        ufo_value_destroy (&messages);
        if (id > 0) {
            job->llm_id = id;
            return job->id;
        }
        s_fail (job, "cannot ask the model: %s", err.message);
    }
    s_unlink (self, job);
    s_deliver (job);
    return 0;
}

ufo_value_t *
ufo_eval_prompt (ufo_eval_t *self, const ufo_eval_request_t *req, ufo_value_t **result_p,
                 ufo_error_t *err)
{
    assert (self && req);
    s_job_t *job = s_job_new (self, req);
    ufo_value_t *messages = s_build (self, job, req);
    if (!messages)
        ufo_error_set (err, UFO_E_INVALID, "%s", ufo_value_map_str (job->result, "error", "?"));
    if (result_p) {
        *result_p = job->result;
        job->result = NULL;
    }
    s_job_free (&job);
    return messages;
}

int
ufo_eval_cancel (ufo_eval_t *self, int64_t id)
{
    for (s_job_t *job = self->jobs; job; job = job->next)
        if (job->id == id) {
            if (job->llm_id > 0)
                ufo_llm_cancel (self->llm, job->llm_id);
            s_unlink (self, job);
            s_job_free (&job);
            return 0;
        }
    return -1;
}

//  --- Blocking use, board item, printing ---------------------------------------------------

static void
s_keep (ufo_value_t **result_p, void *arg)
{
    ufo_value_t **slot = arg;
    *slot = *result_p;
    *result_p = NULL;
}

ufo_value_t *
ufo_eval_run (ufo_eval_t *self, const ufo_eval_request_t *req)
{
    ufo_value_t *result = NULL;
    int64_t id = ufo_eval_start (self, req, s_keep, &result);
    while (!result && id > 0) {
        ufo_llm_poll (self->llm, 100);
        if (!result && ufo_llm_pending (self->llm) == 0)
            break;              //  cannot happen: the client calls back exactly once
    }
    if (!result) {
        ufo_eval_cancel (self, id);
        result = s_result_new (req->level && strcmp (req->level, "round") == 0 ? "round" : "session",
                               req->round);
        ufo_value_map_set_str (result, "error", "the LLM client ended without an answer");
        ufo_value_map_set_str (result, "reason", "The evaluation could not be made: the LLM "
                               "client ended without an answer");
    }
    return result;
}
