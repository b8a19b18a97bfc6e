/*  test_host_session.c - the HostAgent state machine (host_agent/host_session.c) driven
    in-process with fake operations: a scripted model (replies parsed by the real parser),
    an in-memory blackboard, fake windows and a fake subtask executor. The real prompts
    from prompts/ and the real log writer are used. The system tests (test_host_system.c)
    run the same through the real processes.

    The machine is step-driven: the fakes for the desktop complete their operation at once
    (inside the ops call), the others (model, blackboard, subtasks, the user, MCP) leave it
    in flight and the test's driver (s_drive) completes it after host_session_advance
    returned, as ufo-host's loop does; both ways must work. */
#include "ufo_prelude.h"
#include "ufo_board.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_prompt.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "host_session.h"

typedef struct {
    const char **replies;           //  model replies in order ("" = garbage)
    size_t nreplies, asked;
    const char *repeat;             //  reply once the list is used up (NULL: garbage)
    ufo_value_t *prompts;           //  text of every prompt sent (list of strings)
    ufo_board_t *board;
    bool launched;                  //  mousepad launched: its window is listed
    ufo_value_t *tasks;             //  bodies of tasks run: [{"service", "body"}]
    const char *app_status;         //  status returned by the fake AppAgent
    int64_t app_steps;
    ufo_value_t *questions;         //  question events sent to the user
    const char *answer;             //  answer the user gives (NULL: none)
    ufo_value_t *events;            //  every progress event
    int launch_denied;
    bool nameless;                  //  also list a window without an application name
    int no_worker;                  //  has_worker says no this many times
    int submit_errors;              //  run_task of an app fails (NULL) this many times
    bool act;                       //  the fake AppAgent's trajectory acts on a control
    ufo_value_t *saved;             //  experience records saved (experience_save), or NULL
    ufo_value_t *mcp_calls;         //  API tool calls made: [{"function", "args"}], or NULL
    const char *confirm;            //  the user's answer to a confirmation: "yes" | "no" | NULL none
    host_session_t *session;        //  the session being driven
    host_reply_t reply;             //  the reply of the operation in flight (deferred)
    bool pending;                   //  an operation is in flight and completes in s_drive
    int ops_started;                //  operations started
    bool cancel_at_ask;             //  the session is cancelled while the next model call is in flight
    bool cancel_at_task;            //  ... while the next subtask runs
    bool cancel_at_user;            //  ... while the next question waits for the user
    bool cancel_with_answer;        //  ... just as the user's answer to the next question comes
    bool cancelled;
} fake_t;

//  The operation completes later (s_drive); its reply is f->reply.
static host_reply_t *
f_later (fake_t *f)
{
    if (f->pending)
        UFO_FAIL_ ("an operation started while another was in flight");
    f->ops_started++;
    f->pending = true;
    memset (&f->reply, 0, sizeof f->reply);
    return &f->reply;
}

//  The operation completes now, inside the ops call.
static void
f_now (fake_t *f, host_reply_t *reply)
{
    f->ops_started++;
    host_session_done (f->session, reply);
}

static void
f_windows (void *arg, const char *shot_path, bool want_url)
{
    fake_t *f = (fake_t *) arg;
    ufo_value_t *list = ufo_value_new_list ();
    if (f->launched) {
        ufo_value_t *w = ufo_value_new_map ();
        ufo_value_map_set_str (w, "label", "1");
        ufo_value_map_set_str (w, "name", "mousepad");
        ufo_value_map_set_int (w, "pid", 4242);
        ufo_value_map_set_int (w, "xid", 77);
        ufo_value_map_set_str (w, "title", "Untitled 1 - Mousepad");
        ufo_value_list_push (list, &w);
    }
    if (f->nameless) {
        ufo_value_t *w = ufo_value_new_map ();
        ufo_value_map_set_str (w, "label", "2");
        ufo_value_map_set_str (w, "name", "");
        ufo_value_map_set_int (w, "xid", 78);
        ufo_value_map_set_str (w, "title", "Mystery");
        ufo_value_list_push (list, &w);
    }
    if (shot_path) {
        FILE *out = fopen (shot_path, "wb");
        if (out) {
            fputs ("not really a png", out);
            fclose (out);
        }
    }
    host_reply_t reply = { .value = list, .url = want_url ? ufo_strdup ("data:image/png;base64,AAAA") : NULL };
    f_now (f, &reply);
}

static void
f_launch (void *arg, const char *name)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *reply = f_later (f);
    if (strcmp (name, "mousepad") != 0) {
        f->launch_denied++;
        reply->number = ufo_error_set (&reply->err, UFO_E_DENIED, "\"%s\" is not an allowed launcher", name);
        return;
    }
    f->launched = true;
    reply->number = 4242;
}

static void
f_snapshot (void *arg, int64_t xid, const char *path)
{
    UFO_UNUSED (xid);
    FILE *out = fopen (path, "wb");
    if (out)
        fclose (out);
    f_now ((fake_t *) arg, &(host_reply_t) { .number = 0 });
}

static void
f_ask (void *arg, const ufo_value_t *messages, const ufo_llm_opts_t *opts)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *pending = f_later (f);
    if (f->cancel_at_ask) {
        //  the reply never comes: the session is cancelled meanwhile, and the backend ends
        //  the call with an error (s_drive completes it)
        f->cancel_at_ask = false;
        f->cancelled = true;
        ufo_error_set (&pending->err, UFO_E_CANCELLED, "session cancelled during the LLM call");
        return;
    }
    char *text = ufo_json_dump (messages, UFO_JSON_COMPACT, NULL);
    ufo_value_list_push_str (f->prompts, text);
    free (text);
    ufo_llm_response_t *r = (ufo_llm_response_t *) ufo_calloc (1, sizeof *r);
    const char *reply = f->asked < f->nreplies ? f->replies [f->asked] : f->repeat;
    f->asked++;
    r->prompt_tokens = 100;
    r->completion_tokens = 10;
    r->cost = 0.01;
    snprintf (r->model, sizeof r->model, "fake/model");
    ufo_error_t perr = { 0 };
    r->decision = reply ? ufo_llm_extract_json (reply, strlen (reply), (ufo_schema_t) opts->schema, &perr) : NULL;
    if (!r->decision) {
        r->code = UFO_E_SYNTAX;
        r->error = ufo_strdup (reply ? perr.message : "the model replied garbage 4 times");
    }
    pending->response = r;
}

static void
f_board_get (void *arg)
{
    fake_t *f = (fake_t *) arg;
    f_later (f)->value = ufo_board_to_map (f->board);
}

static void
f_board_add (void *arg, const char *memory, ufo_value_t **item_p)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *reply = f_later (f);
    reply->number = ufo_board_add_data_take (f->board, ufo_board_memory_parse (memory), item_p, &reply->err);
}

static ufo_value_t *
f_task_result (fake_t *f, const char *service, ufo_value_t **body_p, host_progress_fn *on_progress,
               void *progress_arg, ufo_error_t *err)
{
    if (f->submit_errors > 0 && strncmp (service, "app:", 4) == 0) {
        f->submit_errors--;
        ufo_value_destroy (body_p);
        return ufo_error_set (err, UFO_E_UNAVAILABLE, "task on %s failed after 1 attempt(s): deadline", service),
               NULL;
    }
    ufo_value_t *rec = ufo_value_new_map ();
    ufo_value_map_set_str (rec, "service", service);
    ufo_value_t *body = ufo_value_map_set (rec, "body", body_p);
    ufo_value_list_push (f->tasks, &rec);
    ufo_value_t *result = ufo_value_new_map ();
    ufo_value_t *cost = ufo_value_new_map ();
    ufo_value_map_set_float (cost, "total", 0.5);
    ufo_value_map_set_int (cost, "prompt_tokens", 1000);
    ufo_value_map_set_int (cost, "completion_tokens", 100);
    if (strcmp (service, "eval") == 0) {
        ufo_value_map_set_str (result, "reason", "looks done");
        ufo_value_map_set (result, "sub_scores", &(ufo_value_t *) { ufo_json_parse_str ("{\"typed\": \"yes\"}", NULL) });
        ufo_value_map_set_str (result, "complete", "yes");
        ufo_value_map_set (result, "cost", &cost);
        return result;
    }
    //  an AppAgent: one cost event on the way, then its result
    ufo_value_t *event = ufo_json_parse_str ("{\"kind\": \"cost\", \"step\": 0.2, \"round\": 0.2, \"session\": 0.2, "
                                             "\"tokens\": {\"prompt\": 400, \"completion\": 40}}", NULL);
    on_progress (event, progress_arg);
    ufo_value_destroy (&event);
    ufo_value_map_set_str (result, "status", f->app_status ? f->app_status : "FINISH");
    ufo_value_map_set_int (result, "steps", f->app_steps);
    ufo_value_map_set (result, "results", &(ufo_value_t *) { ufo_json_parse_str ("[\"typed it\"]", NULL) });
    ufo_value_map_set_str (result, "comment", "done in the app");
    ufo_value_map_set_str (result, "error", f->app_status && !strcmp (f->app_status, "ERROR") ? "window vanished" : "");
    ufo_value_map_set (result, "cost", &cost);
    //  the trajectory the AppAgent would have written
    ufo_value_t *traj = ufo_value_new_map ();
    ufo_value_map_set_int (traj, "Step", ufo_value_map_int (body, "step_base", 0));
    ufo_value_map_set_str (traj, "Subtask", ufo_value_map_str (body, "subtask", ""));
    ufo_value_map_set_int (traj, "Round", ufo_value_map_int (body, "round", 0));
    if (f->act)
        ufo_value_map_set (traj, "Action", &(ufo_value_t *) { ufo_json_parse_str (
            "{\"function\": \"set_edit_text\", \"control_text\": \"Text Area\", \"args\": {\"text\": \"hello\"}}", NULL) });
    ufo_board_add_data_take (f->board, UFO_MEM_TRAJECTORIES, &traj, NULL);
    return result;
}

static void
f_run_task (void *arg, const char *service, ufo_value_t **body_p, host_progress_fn *on_progress,
            void *progress_arg)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *reply = f_later (f);
    if (f->cancel_at_task) {
        //  the backend cancels the task and ends the operation with an error
        f->cancel_at_task = false;
        f->cancelled = true;
        ufo_value_t *rec = ufo_value_new_map ();
        ufo_value_map_set_str (rec, "service", service);
        ufo_value_map_set (rec, "body", body_p);
        ufo_value_list_push (f->tasks, &rec);
        ufo_error_set (&reply->err, UFO_E_CANCELLED, "session cancelled while %s ran", service);
        return;
    }
    reply->value = f_task_result (f, service, body_p, on_progress, progress_arg, &reply->err);
}

static void
f_ask_user (void *arg, ufo_value_t **event_p)
{
    fake_t *f = (fake_t *) arg;
    ufo_value_t *reply = NULL;
    if (!strcmp (ufo_value_map_str (*event_p, "kind", ""), "confirm")) {
        if (f->confirm) {
            reply = ufo_value_new_map ();
            ufo_value_map_set_str (reply, "qid", ufo_value_map_str (*event_p, "qid", ""));
            ufo_value_map_set_bool (reply, "confirm", !strcmp (f->confirm, "yes"));
        }
    }
    else
    if (f->answer) {
        reply = ufo_value_new_map ();
        ufo_value_map_set_str (reply, "qid", ufo_value_map_str (*event_p, "qid", ""));
        ufo_value_map_set (reply, "answers", &(ufo_value_t *) { ufo_value_new_list () });
        ufo_value_list_push_str (ufo_value_map_get (reply, "answers"), f->answer);
    }
    ufo_value_list_push (f->questions, event_p);
    if (f->cancel_at_user) {
        f->cancel_at_user = false;
        f->cancelled = true;
        ufo_value_destroy (&reply);         //  no answer comes
    }
    if (f->cancel_with_answer) {
        f->cancel_with_answer = false;
        f->cancelled = true;                //  the answer comes, and the cancel right after it
    }
    f_later (f)->value = reply;
}

static void
f_experience_save (void *arg, ufo_value_t **record_p)
{
    fake_t *f = (fake_t *) arg;
    if (!f->saved)
        f->saved = ufo_value_new_list ();
    ufo_value_list_push (f->saved, record_p);
    host_reply_t *reply = f_later (f);
    snprintf (reply->id, sizeof reply->id, "exp-%zu", ufo_value_size (f->saved));
}

//  One MCP server "notes" with a tool add_note {text: string}; a call of it answers
//  "note 7 saved: TEXT", a call of another tool fails.
static ufo_value_t *
f_mcp_result (fake_t *f, const char *function, const ufo_value_t *args, ufo_error_t *err)
{
    if (!function)
        return ufo_json_parse_str ("[{\"function\": \"notes.add_note\", \"description\": \"Adds a note to the "
                                   "notebook.\", \"args\": \"{text: string (required)}\"}]", NULL);
    if (!f->mcp_calls)
        f->mcp_calls = ufo_value_new_list ();
    ufo_value_t *call = ufo_value_new_map ();
    ufo_value_map_set_str (call, "function", function);
    ufo_value_map_set (call, "args", &(ufo_value_t *) { args ? ufo_value_dup (args) : ufo_value_new_null () });
    ufo_value_list_push (f->mcp_calls, &call);
    if (strcmp (function, "notes.add_note") != 0)
        return ufo_error_set (err, UFO_E_NOT_FOUND, "no tool %s", function), NULL;
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_bool (r, "success", true);
    ufo_value_map_set (r, "text", &(ufo_value_t *) {
        ufo_value_new_stringf ("note 7 saved: %s", ufo_value_map_str (args, "text", "")) });
    return r;
}

static void
f_mcp (void *arg, const char *function, const ufo_value_t *args)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *reply = f_later (f);
    reply->value = f_mcp_result (f, function, args, &reply->err);
}

static void
f_progress (void *arg, ufo_value_t **event_p)
{
    ufo_value_list_push (((fake_t *) arg)->events, event_p);
}

static bool
f_cancelled (void *arg)
{
    return ((fake_t *) arg)->cancelled;
}

static void
f_has_worker (void *arg, const char *service)
{
    fake_t *f = (fake_t *) arg;
    host_reply_t *reply = f_later (f);
    reply->number = 1;
    if (f->no_worker > 0) {
        f->no_worker--;
        ufo_error_set (&reply->err, UFO_E_NOT_FOUND, "no worker of %s", service);
        reply->number = 0;
    }
}

static char s_root [256];
static bool s_eva_round = false;
static bool s_resume = false;
static const char *s_mode = NULL;           //  the body's "mode" of the next s_run
static const char *s_llm_mode = NULL;
static const char *s_llm_endpoint = NULL;
static const char *s_save_experience = NULL;   //  SAVE_EXPERIENCE of the next s_run
static bool s_with_mcp = false;                 //  the next s_run offers f_mcp
static const char *s_confirm_actions = NULL;    //  desktop.confirm_actions (JSON) of the next s_run
static const char *s_confirm_policy = NULL;     //  desktop.confirm_policy of the next s_run
static ufo_prompts_t *s_prompts;

static void
s_fake_init (fake_t *f, const char **replies, size_t n)
{
    memset (f, 0, sizeof *f);
    f->replies = replies;
    f->nreplies = n;
    f->prompts = ufo_value_new_list ();
    f->board = ufo_board_new ();
    f->tasks = ufo_value_new_list ();
    f->questions = ufo_value_new_list ();
    f->events = ufo_value_new_list ();
    f->app_steps = 2;
}

static void
s_fake_free (fake_t *f)
{
    ufo_value_destroy (&f->prompts);
    ufo_board_destroy (&f->board);
    ufo_value_destroy (&f->tasks);
    ufo_value_destroy (&f->questions);
    ufo_value_destroy (&f->events);
    ufo_value_destroy (&f->saved);
    ufo_value_destroy (&f->mcp_calls);
}

//  Runs a session as ufo-host's loop does: advance until it waits, complete the operation
//  in flight, again until it ends. Bounded: a machine that never ends fails the test.
static ufo_value_t *
s_drive (fake_t *f, const host_session_config_t *cfg, const host_ops_t *ops)
{
    f->session = host_session_new (cfg, ops);
    int turns = 0;
    while (host_session_advance (f->session) == HOST_RUN_WAITING && turns++ < 10000) {
        if (!f->pending || !host_session_waiting (f->session)) {
            UFO_FAIL_ ("the session waits for an operation that was not started");
            break;
        }
        f->pending = false;
        host_session_done (f->session, &f->reply);
    }
    ufo_value_t *result = host_session_result (f->session);
    if (!result)
        UFO_FAIL_ ("the session did not end");
    host_session_destroy (&f->session);
    return result;
}

static ufo_value_t *
s_run (fake_t *f, const char *task, const char *requests_json, const char *plan_json, int64_t max_step,
       int64_t max_round, bool interactive)
{
    host_ops_t ops = { .arg = f, .windows = f_windows, .launch = f_launch, .snapshot = f_snapshot,
                       .ask = f_ask, .board_get = f_board_get, .board_add = f_board_add,
                       .run_task = f_run_task, .ask_user = f_ask_user, .progress = f_progress,
                       .cancelled = f_cancelled, .has_worker = f_has_worker,
                       .experience_save = f_experience_save, .mcp = s_with_mcp ? f_mcp : NULL };
    ufo_value_t *requests = ufo_json_parse_str (requests_json, NULL);
    ufo_value_t *plan = plan_json ? ufo_json_parse_str (plan_json, NULL) : NULL;
    ufo_value_t *launchers = ufo_json_parse_str ("[\"mousepad\"]", NULL);
    const char *secrets [] = { "sk-secret-key-123", NULL };
    ufo_value_t *confirm_actions = s_confirm_actions ? ufo_json_parse_str (s_confirm_actions, NULL) : NULL;
    host_session_config_t cfg = {
        .session = task, .task = task, .log_root = s_root, .device = "d0", .requests = requests,
        .plan = plan, .interactive = interactive, .max_step = max_step, .max_round = max_round,
        .resume = s_resume, .eva_session = true, .eva_round = s_eva_round, .eva_all_screenshots = true, .visual = true, .log_to_markdown = true,
        .json_retry = 3, .launchers = launchers, .prompts = s_prompts, .secrets = secrets,
        .mode = s_mode, .llm_mode = s_llm_mode, .llm_endpoint = s_llm_endpoint,
        .save_experience = s_save_experience,
        .confirm_actions = confirm_actions, .confirm_policy = s_confirm_policy,
    };
    ufo_value_t *result = s_drive (f, &cfg, &ops);
    ufo_value_destroy (&confirm_actions);
    ufo_value_destroy (&requests);
    ufo_value_destroy (&plan);
    ufo_value_destroy (&launchers);
    return result;
}

static ufo_value_t *
s_read_lines (const char *task, const char *name)
{
    ufo_tasklog_t *log = ufo_tasklog_open (s_root, task, NULL);
    ufo_value_t *lines = ufo_tasklog_read_lines (log, name);
    ufo_tasklog_destroy (&log);
    return lines;
}

static bool
s_exists (const char *task, const char *name)
{
    char path [512];
    snprintf (path, sizeof path, "%s/%s/%s", s_root, task, name);
    return access (path, F_OK) == 0;
}

#define LAUNCH "{\"Observation\": \"no editor\", \"Thought\": \"launch\", \"CurrentSubtask\": \"Open Mousepad\", " \
    "\"Message\": [], \"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"CONTINUE\", \"Plan\": [], " \
    "\"Bash\": \"mousepad\", \"Questions\": [], \"Comment\": \"\"}"
#define ASSIGN "```json\n{\"Observation\": \"mousepad is open\", \"Thought\": \"assign\", \"CurrentSubtask\": " \
    "\"Type hello into the document\", \"Message\": [\"type it as is\"], \"ControlLabel\": \"1\", \"ControlText\": " \
    "\"Untitled 1 - Mousepad\", \"Status\": \"ASSIGN\", \"Plan\": [], \"Bash\": \"\", \"Questions\": [], \"Comment\": \"\"}\n```"
#define FINISH "{\"Observation\": \"done\", \"Thought\": \"all done\", \"CurrentSubtask\": \"\", \"Message\": [], " \
    "\"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"FINISH\", \"Plan\": [], \"Bash\": \"\", " \
    "\"Questions\": [], \"Comment\": \"finished\"}"
#define PENDING "{\"Observation\": \"unclear\", \"Thought\": \"ask\", \"CurrentSubtask\": \"\", \"Message\": [], " \
    "\"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"PENDING\", \"Plan\": [], \"Bash\": \"\", " \
    "\"Questions\": [\"Which text should I write?\"], \"Comment\": \"\"}"
#define CONTINUE "{\"Observation\": \"o\", \"Thought\": \"t\", \"CurrentSubtask\": \"\", \"Message\": [], " \
    "\"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"CONTINUE\", \"Plan\": [], \"Bash\": \"\", " \
    "\"Questions\": [], \"Comment\": \"\"}"

UFO_TEST (test_one_round)
{
    const char *replies [] = { LAUNCH, ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 3);
    ufo_value_t *result = s_run (&f, "one", "[\"Write hello in a note\"]", NULL, 50, 1, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 5);     //  3 HostAgent + 2 AppAgent steps
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 1);
    CHECK_STR (ufo_value_path (result, "evaluation.complete") ? ufo_value_str (ufo_value_path (result, "evaluation.complete")) : "", "yes");
    //  cost: 3 host calls at 0.01, the app's 0.5 (its 0.2 event, then the rest at the end), eval 0.5
    CHECK (fabs (ufo_value_map_float (ufo_value_map_get (result, "cost"), "total", 0) - 1.03) < 1e-9);
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (result, "cost"), "prompt_tokens", 0), 2300);
    //  the subtask body
    REQUIRE (ufo_value_size (f.tasks) == 2);
    const ufo_value_t *sub = ufo_value_list_at (f.tasks, 0);
    CHECK_STR (ufo_value_map_str (sub, "service", ""), "app:mousepad");
    const ufo_value_t *body = ufo_value_map_get (sub, "body");
    CHECK_STR (ufo_value_map_str (body, "subtask", ""), "Type hello into the document");
    CHECK_STR (ufo_value_map_str (body, "request", ""), "Write hello in a note");
    CHECK_STR (ufo_value_map_str (body, "application", ""), "mousepad");
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (body, "window"), "xid", 0), 77);
    CHECK_STR (ufo_value_str (ufo_value_path (body, "tips.0")), "type it as is");
    CHECK_INT (ufo_value_map_int (body, "step_base", -1), 2);
    CHECK_INT (ufo_value_map_int (body, "max_steps", -1), 48);
    CHECK_INT (ufo_value_map_int (body, "round", -1), 0);
    CHECK_INT (ufo_value_map_int (body, "subtask_index", -1), 0);
    CHECK (ufo_value_map_bool (body, "interactive", true) == false);
    const ufo_value_t *eval = ufo_value_map_get (ufo_value_list_at (f.tasks, 1), "body");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (f.tasks, 1), "service")), "eval");
    CHECK_STR (ufo_value_map_str (eval, "level", ""), "session");
    //  the blackboard: request_0 at round end
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.0.request_0")), "Write hello in a note");
    ufo_value_destroy (&board);
    //  the logs
    ufo_value_t *lines = s_read_lines ("one", "response.log");
    CHECK_INT (ufo_value_size (lines), 3);
    const ufo_value_t *l1 = ufo_value_list_at (lines, 1);
    static const char *fields [] = { "Observation", "Thought", "CurrentSubtask", "Message", "ControlLabel",
        "ControlText", "Status", "Plan", "Bash", "Questions", "Comment", "Step", "RoundStep", "AgentStep",
        "Round", "Subtask", "SubtaskIndex", "FunctionCall", "Action", "ActionSuccess", "ActionType", "Request",
        "Agent", "AgentName", "Application", "Cost", "Tokens", "Results", "error", "time_cost", "ControlLog",
        "UserConfirm", "ScreenshotPath", "Timestamp" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (fields); i++)
        if (!ufo_value_map_has (l1, fields [i]))
            UFO_FAIL_ ("response.log line lacks %s", fields [i]);
    CHECK_STR (ufo_value_map_str (l1, "Status", ""), "ASSIGN");
    CHECK_STR (ufo_value_map_str (l1, "Application", ""), "mousepad");
    CHECK_STR (ufo_value_map_str (l1, "ScreenshotPath", ""), "desktop_step1.png");
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, 0), "ActionType", ""), "Bash");
    CHECK (ufo_value_path (ufo_value_list_at (lines, 0), "ActionSuccess.0.success")
           && ufo_value_bool (ufo_value_path (ufo_value_list_at (lines, 0), "ActionSuccess.0.success")));
    CHECK_INT (ufo_value_map_int (ufo_value_list_at (lines, 2), "Step", -1), 4);
    ufo_value_destroy (&lines);
    lines = s_read_lines ("one", "request.log");
    CHECK_INT (ufo_value_size (lines), 3);
    char *text = ufo_json_dump (lines, UFO_JSON_COMPACT, NULL);
    CHECK_CONTAINS (text, "desktop_step0.png");
    CHECK (strstr (text, "base64,AAAA") == NULL);
    free (text);
    ufo_value_destroy (&lines);
    CHECK (s_exists ("one", "request.json"));
    CHECK (s_exists ("one", "session.json"));
    CHECK (s_exists ("one", "blackboard.json"));
    CHECK (s_exists ("one", "output.md"));
    CHECK (s_exists ("one", "action_round_0_final.png"));
    //  progress: a step event per HostAgent step, cost events, the evaluation
    size_t steps = 0, evals = 0, costs = 0;
    for (size_t i = 0; i < ufo_value_size (f.events); i++) {
        const char *kind = ufo_value_map_str (ufo_value_list_at (f.events, i), "kind", "");
        steps += !strcmp (kind, "step");
        evals += !strcmp (kind, "evaluation");
        costs += !strcmp (kind, "cost");
    }
    CHECK_INT (steps, 3);
    CHECK_INT (evals, 1);
    CHECK (costs >= 4);
    //  the prompt held the window list with its label, and the launcher
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 1)), "label \\\"1\\\": Untitled 1 - Mousepad");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 0)), "- mousepad");
    //  and the AppAgent's outcome reached the third prompt
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 2)), "ended the subtask");
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_two_rounds_history)
{
    const char *replies [] = { LAUNCH, ASSIGN, FINISH, ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 5);
    ufo_value_t *result = s_run (&f, "two", "[\"Write hello\", \"Now add a second line\"]", NULL, 50, 5, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 2);
    REQUIRE (ufo_value_size (f.prompts) == 5);
    const char *round2 = ufo_value_str (ufo_value_list_at (f.prompts, 3));
    CHECK_CONTAINS (round2, "Now add a second line");
    CHECK_CONTAINS (round2, "[Request History:]");
    CHECK_CONTAINS (round2, "request_0");
    CHECK_CONTAINS (round2, "Write hello");
    CHECK_CONTAINS (round2, "Step Trajectories Completed Previously");
    CHECK_CONTAINS (round2, "Type hello into the document");
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.1.request_1")), "Now add a second line");
    ufo_value_destroy (&board);
    //  round 2's subtask starts after round 1's steps
    const ufo_value_t *body = ufo_value_map_get (ufo_value_list_at (f.tasks, 1), "body");
    CHECK_INT (ufo_value_map_int (body, "round", -1), 1);
    CHECK_INT (ufo_value_map_int (body, "step_base", -1), 6);
    CHECK (s_exists ("two", "action_round_1_final.png"));
    //  request.json was written again when round 1 started
    char path [512];
    snprintf (path, sizeof path, "%s/two/request.json", s_root);
    ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
    CHECK_INT (ufo_value_map_int (req, "round", -1), 1);
    CHECK_STR (ufo_value_map_str (req, "mode", ""), "normal");
    ufo_value_destroy (&req);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_round_evaluations)
{
    const char *finish [] = { FINISH, FINISH };
    fake_t f;
    s_fake_init (&f, finish, 2);
    s_eva_round = true;
    ufo_value_t *result = s_run (&f, "evaround", "[\"a\", \"b\"]", NULL, 50, 2, false);
    s_eva_round = false;
    REQUIRE (ufo_value_size (f.tasks) == 3);   //  round 0, round 1, session
    static const char *levels [] = { "round", "round", "session" };
    for (size_t i = 0; i < 3; i++) {
        const ufo_value_t *t = ufo_value_list_at (f.tasks, i);
        CHECK_STR (ufo_value_map_str (t, "service", ""), "eval");
        CHECK_STR (ufo_value_str (ufo_value_path (t, "body.level")), levels [i]);
    }
    CHECK_INT (ufo_value_int (ufo_value_path (ufo_value_list_at (f.tasks, 1), "body.round")), 1);
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (f.tasks, 1), "body.requests.0")), "b");
    CHECK_INT (ufo_value_size (ufo_value_path (ufo_value_list_at (f.tasks, 1), "body.requests")), 1);
    CHECK_INT (ufo_value_size (ufo_value_path (ufo_value_list_at (f.tasks, 2), "body.requests")), 2);
    CHECK (!ufo_value_map_has (ufo_value_map_get (ufo_value_list_at (f.tasks, 2), "body"), "round"));
    size_t evals = 0;
    for (size_t i = 0; i < ufo_value_size (f.events); i++)
        evals += !strcmp (ufo_value_map_str (ufo_value_list_at (f.events, i), "kind", ""), "evaluation");
    CHECK_INT (evals, 3);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  A session delivered again (its first HostAgent died): the rounds already on the board
//  are not run again, the steps and cost already logged count.
UFO_TEST (test_resume_redelivered)
{
    const char *finish [] = { FINISH };
    fake_t f;
    s_fake_init (&f, finish, 1);
    ufo_value_t *r0 = ufo_json_parse_str ("{\"request_0\": \"a\"}", NULL);
    ufo_board_add_data_take (f.board, UFO_MEM_REQUESTS, &r0, NULL);
    ufo_tasklog_t *log = ufo_tasklog_open (s_root, "resume", NULL);
    REQUIRE (log);
    for (int i = 0; i < 3; i++) {
        char line [200];
        snprintf (line, sizeof line, "{\"Step\": %d, \"Round\": %d, \"Cost\": 0.25, \"Tokens\": {\"prompt\": 10, "
                  "\"completion\": 1}}", i, i < 2 ? 0 : 1);
        ufo_value_t *v = ufo_json_parse_str (line, NULL);
        ufo_tasklog_append (log, "response.log", v, NULL);
        ufo_value_destroy (&v);
    }
    ufo_tasklog_destroy (&log);
    s_resume = true;
    ufo_value_t *result = s_run (&f, "resume", "[\"a\", \"b\"]", NULL, 50, 5, false);
    s_resume = false;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (f.asked, 1);                         //  only round 1 ran
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 0)), "[User Request:]\\nb");
    CHECK_INT (ufo_value_map_int (result, "rounds", 0), 2);
    CHECK_INT (ufo_value_map_int (result, "steps", 0), 4);      //  3 logged + 1
    CHECK (ufo_value_map_float (ufo_value_map_get (result, "cost"), "total", 0) > 0.75);
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_INT (ufo_value_size (ufo_value_map_get (board, "requests")), 2);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.1.request_1")), "b");
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.1.status")), "FINISH");
    ufo_value_destroy (&board);
    ufo_value_destroy (&result);
    s_fake_free (&f);

    //  round 0 had FAILed before the HostAgent died: the resumed session still ends in FAIL
    s_fake_init (&f, finish, 1);
    r0 = ufo_json_parse_str ("{\"request_0\": \"a\", \"status\": \"FAIL\"}", NULL);
    ufo_board_add_data_take (f.board, UFO_MEM_REQUESTS, &r0, NULL);
    s_resume = true;
    result = s_run (&f, "resume-fail", "[\"a\", \"b\"]", NULL, 50, 5, false);
    s_resume = false;
    CHECK_INT (f.asked, 1);                         //  only round 1 ran, and FINISHed
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FAIL");
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  The HostAgent died after the first subtask of round 0 ended: the re-delivered session
//  continues the round (memory, previous subtasks, subtask numbering) instead of redoing it.
UFO_TEST (test_resume_mid_round)
{
    static const char *logged [] = {
        "{\"Step\": 0, \"Round\": 0, \"Agent\": \"HostAgent\", \"Status\": \"CONTINUE\", \"Bash\": \"mousepad\", "
        "\"SubtaskIndex\": -1, \"CurrentSubtask\": \"Open Mousepad\", \"Plan\": [\"type the second line\"]}",
        "{\"Step\": 1, \"Round\": 0, \"Agent\": \"HostAgent\", \"Status\": \"ASSIGN\", \"SubtaskIndex\": 0, "
        "\"CurrentSubtask\": \"Type the first line\", \"Plan\": [\"type the second line\"]}",
        "{\"Step\": 2, \"Round\": 0, \"Agent\": \"AppAgent\", \"Status\": \"CONTINUE\", \"SubtaskIndex\": 0, "
        "\"Subtask\": \"Type the first line\", \"Application\": \"mousepad\"}",
        "{\"Step\": 3, \"Round\": 0, \"Agent\": \"AppAgent\", \"Status\": \"FINISH\", \"SubtaskIndex\": 0, "
        "\"Subtask\": \"Type the first line\", \"Application\": \"mousepad\", \"Comment\": \"typed\"}",
    };
    ufo_tasklog_t *log = ufo_tasklog_open (s_root, "midround", NULL);
    REQUIRE (log);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (logged); i++) {
        ufo_value_t *v = ufo_json_parse_str (logged [i], NULL);
        REQUIRE (v);
        ufo_tasklog_append (log, "response.log", v, NULL);
        ufo_value_destroy (&v);
    }
    ufo_tasklog_destroy (&log);
    const char *replies [] = { ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 2);
    f.launched = true;
    s_resume = true;
    ufo_value_t *result = s_run (&f, "midround", "[\"Write two lines\"]", NULL, 50, 1, false);
    s_resume = false;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (f.asked, 2);
    const char *prompt = ufo_value_str (ufo_value_list_at (f.prompts, 0));
    CHECK_CONTAINS (prompt, "resumed after the HostAgent restarted");
    CHECK_CONTAINS (prompt, "do not repeat them: \\\"Type the first line\\\" (mousepad, FINISH)");
    CHECK_CONTAINS (prompt, "Open Mousepad");                   //  the HostAgent's memory is back
    CHECK_CONTAINS (prompt, "type the second line");            //  and its plan
    //  one subtask submitted, numbered after the first, with the first as a previous subtask
    REQUIRE (ufo_value_size (f.tasks) == 2);
    const ufo_value_t *body = ufo_value_map_get (ufo_value_list_at (f.tasks, 0), "body");
    CHECK_INT (ufo_value_map_int (body, "subtask_index", -1), 1);
    CHECK_INT (ufo_value_map_int (body, "step_base", -1), 5);
    CHECK_STR (ufo_value_str (ufo_value_path (body, "previous_subtasks.0.subtask")), "Type the first line");
    CHECK_STR (ufo_value_str (ufo_value_path (body, "previous_subtasks.0.status")), "FINISH");
    ufo_value_t *lines = s_read_lines ("midround", "response.log");
    const ufo_value_t *l4 = ufo_value_list_at (lines, 4);
    CHECK_INT (ufo_value_map_int (l4, "Step", -1), 4);
    CHECK_INT (ufo_value_map_int (l4, "RoundStep", -1), 4);
    CHECK_INT (ufo_value_map_int (l4, "AgentStep", -1), 2);
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_pending_answered)
{
    const char *replies [] = { PENDING, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 2);
    f.answer = "Write 'dear diary'";
    ufo_value_t *result = s_run (&f, "pending", "[\"Write something\"]", NULL, 50, 1, true);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    REQUIRE (ufo_value_size (f.questions) == 1);
    const ufo_value_t *q = ufo_value_list_at (f.questions, 0);
    CHECK_STR (ufo_value_map_str (q, "kind", ""), "question");
    CHECK_STR (ufo_value_map_str (q, "from", ""), "HostAgent");
    CHECK_STR (ufo_value_str (ufo_value_path (q, "questions.0")), "Which text should I write?");
    CHECK (ufo_value_map_str (q, "qid", NULL) != NULL);
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "questions.0.answer")), "Write 'dear diary'");
    ufo_value_destroy (&board);
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 1)), "dear diary");
    ufo_value_t *lines = s_read_lines ("pending", "response.log");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (lines, 0), "Answers.0")), "Write 'dear diary'");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (lines, 0), "Questions.0")), "Which text should I write?");
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);

    //  without a user: the placeholder, and nobody is asked
    s_fake_init (&f, replies, 2);
    result = s_run (&f, "pending2", "[\"Write something\"]", NULL, 50, 1, false);
    CHECK_INT (ufo_value_size (f.questions), 0);
    board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "questions.0.answer")), "no answer available, proceed");
    ufo_value_destroy (&board);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  A model reply that echoes a registered key: the live step event is redacted like the log.
UFO_TEST (test_step_event_redacted)
{
    const char *replies [] = { "{\"Observation\": \"the key is sk-secret-key-123\", \"Thought\": \"t\", "
        "\"CurrentSubtask\": \"\", \"Message\": [], \"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": "
        "\"FINISH\", \"Plan\": [], \"Bash\": \"\", \"Questions\": [], \"Comment\": \"sk-secret-key-123\"}" };
    fake_t f;
    s_fake_init (&f, replies, 1);
    ufo_value_t *result = s_run (&f, "redact", "[\"x\"]", NULL, 50, 1, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    size_t steps = 0;
    for (size_t i = 0; i < ufo_value_size (f.events); i++) {
        const ufo_value_t *e = ufo_value_list_at (f.events, i);
        if (strcmp (ufo_value_map_str (e, "kind", ""), "step") != 0)
            continue;
        steps++;
        char *text = ufo_json_dump (e, UFO_JSON_COMPACT, NULL);
        CHECK (strstr (text, "sk-secret-key-123") == NULL);
        CHECK_CONTAINS (text, "the key is");
        free (text);
    }
    CHECK_INT (steps, 1);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  request.json: the body's batch mode, the effective LLM mode, the endpoint without credentials.
UFO_TEST (test_request_json)
{
    const char *replies [] = { FINISH };
    fake_t f;
    s_fake_init (&f, replies, 1);
    s_mode = "batch_normal";
    s_llm_mode = "replay";
    s_llm_endpoint = "https://user:pa55word@llm.example.com:8443/v1?api-key=sk-in-query&x=1";
    ufo_value_t *result = s_run (&f, "reqjson", "[\"x\"]", NULL, 50, 1, false);
    s_mode = s_llm_mode = s_llm_endpoint = NULL;
    char path [512];
    snprintf (path, sizeof path, "%s/reqjson/request.json", s_root);
    ufo_value_t *req = ufo_json_parse_file (path, NULL, NULL);
    CHECK_STR (ufo_value_map_str (req, "mode", ""), "batch_normal");
    CHECK_STR (ufo_value_str (ufo_value_path (req, "llm.mode")), "replay");
    CHECK_STR (ufo_value_str (ufo_value_path (req, "llm.endpoint")), "https://llm.example.com:8443/v1");
    CHECK_INT (ufo_value_map_int (req, "round", -1), 0);
    ufo_value_destroy (&req);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  ASSIGN to an application no AppAgent serves, then a subtask whose task fails to run:
//  each becomes a tip for the model and the round goes on (it used to hang or end in ERROR).
UFO_TEST (test_no_worker_tip)
{
    const char *replies [] = { LAUNCH, ASSIGN, ASSIGN, ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 5);
    f.no_worker = 1;
    f.submit_errors = 1;
    ufo_value_t *result = s_run (&f, "noworker", "[\"Write hello\"]", NULL, 50, 1, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (f.asked, 5);
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 2)), "no AppAgent serves mousepad; pick another "
                    "application or launch it with Bash");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 3)), "could not run on mousepad");
    //  only the third ASSIGN reached an AppAgent, as subtask 0; then the evaluation
    REQUIRE (ufo_value_size (f.tasks) == 2);
    CHECK_INT (ufo_value_int (ufo_value_path (ufo_value_list_at (f.tasks, 0), "body.subtask_index")), 0);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_garbage_error)
{
    fake_t f;
    s_fake_init (&f, NULL, 0);
    ufo_value_t *result = s_run (&f, "garbage", "[\"Do it\", \"and more\"]", NULL, 50, 2, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "garbage");
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 1);       //  an ERROR round ends the session
    CHECK_INT (ufo_value_size (f.tasks), 0);                       //  no evaluation after ERROR
    CHECK (ufo_value_type (ufo_value_map_get (result, "evaluation")) == UFO_TNULL);
    ufo_value_t *lines = s_read_lines ("garbage", "response.log");
    REQUIRE (ufo_value_size (lines) == 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, 0), "Status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (lines, 0), "error", ""), "garbage");
    ufo_value_destroy (&lines);
    ufo_value_t *session = ufo_json_parse_file ("/dev/null", NULL, NULL);
    ufo_value_destroy (&session);
    char path [512];
    snprintf (path, sizeof path, "%s/garbage/session.json", s_root);
    session = ufo_json_parse_file (path, NULL, NULL);
    CHECK_STR (ufo_value_map_str (session, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (session, "error", ""), "garbage");
    ufo_value_destroy (&session);
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.0.request_0")), "Do it");
    ufo_value_destroy (&board);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  A cancel while the model call is in flight: the backend ends the call with an error, the
//  machine winds the session down at once (round end, logs) and starts no other model call,
//  subtask, question or evaluation.
UFO_TEST (test_cancel_in_flight)
{
    const char *replies [] = { LAUNCH, ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 3);
    f.cancel_at_ask = true;
    ufo_value_t *result = s_run (&f, "cancelled", "[\"Write hello\", \"and more\"]", NULL, 50, 2, true);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "cancelled");
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 1);
    CHECK_INT (f.asked, 0);                                         //  the model's reply never counted
    CHECK_INT (ufo_value_size (f.tasks), 0);                        //  no subtask, no evaluation
    CHECK_INT (ufo_value_size (f.questions), 0);
    ufo_value_t *lines = s_read_lines ("cancelled", "response.log");
    REQUIRE (ufo_value_size (lines) == 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (lines, 0), "Status", ""), "ERROR");
    ufo_value_destroy (&lines);
    //  the round end still reached the board, and the session's files were written
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "requests.0.status")), "ERROR");
    ufo_value_destroy (&board);
    CHECK (s_exists ("cancelled", "session.json"));
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  A cancel while the subtask runs, and one while a question waits for the user: the
//  session ends in ERROR without another model call, subtask or evaluation; the question
//  gets the placeholder answer.
UFO_TEST (test_cancel_during_task_and_question)
{
    const char *replies [] = { LAUNCH, ASSIGN, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 3);
    f.cancel_at_task = true;
    ufo_value_t *result = s_run (&f, "cancel-task", "[\"Write hello\"]", NULL, 50, 1, true);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "cancelled");
    CHECK_INT (f.asked, 2);                                         //  LAUNCH, ASSIGN; not asked again
    CHECK_INT (ufo_value_size (f.tasks), 1);                        //  the subtask; no evaluation
    ufo_value_destroy (&result);
    s_fake_free (&f);

    const char *pending [] = { PENDING, FINISH };
    s_fake_init (&f, pending, 2);
    f.answer = "never given";
    f.cancel_at_user = true;
    result = s_run (&f, "cancel-question", "[\"Write something\"]", NULL, 50, 1, true);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "cancelled");
    CHECK_INT (f.asked, 1);
    CHECK_INT (ufo_value_size (f.questions), 1);
    CHECK_INT (ufo_value_size (f.tasks), 0);
    ufo_value_t *board = ufo_board_to_map (f.board);
    CHECK_STR (ufo_value_str (ufo_value_path (board, "questions.0.answer")), "no answer available, proceed");
    ufo_value_destroy (&board);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_max_step_and_round)
{
    fake_t f;
    s_fake_init (&f, NULL, 0);
    f.repeat = CONTINUE;
    ufo_value_t *result = s_run (&f, "maxstep", "[\"loop\", \"again\"]", NULL, 4, 2, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FAIL");
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 4);
    CHECK_INT (f.asked, 4);
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "MAX_STEP");
    ufo_value_destroy (&result);
    s_fake_free (&f);

    //  an AppAgent subtask counts against MAX_STEP too
    const char *replies [] = { LAUNCH, ASSIGN };
    s_fake_init (&f, replies, 2);
    f.repeat = CONTINUE;
    f.app_steps = 5;
    result = s_run (&f, "maxstep2", "[\"x\"]", NULL, 6, 1, false);
    CHECK_INT (ufo_value_map_int (result, "steps", -1), 7);
    CHECK_INT (f.asked, 2);
    CHECK_INT (ufo_value_map_int (ufo_value_map_get (ufo_value_list_at (f.tasks, 0), "body"), "max_steps", -1), 4);
    ufo_value_destroy (&result);
    s_fake_free (&f);

    //  round 0 finishes on the last step MAX_STEP allows: round 1 never runs, so the session FAILs
    const char *done [] = { FINISH, FINISH };
    s_fake_init (&f, done, 2);
    result = s_run (&f, "maxstep3", "[\"a\", \"b\"]", NULL, 1, 2, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FAIL");
    CHECK_STR (ufo_value_map_str (result, "error", ""), "MAX_STEP reached before round 1");
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 1);
    CHECK_INT (f.asked, 1);
    ufo_value_destroy (&result);
    s_fake_free (&f);

    const char *finish [] = { FINISH, FINISH, FINISH };
    s_fake_init (&f, finish, 3);
    result = s_run (&f, "maxround", "[\"a\", \"b\", \"c\"]", NULL, 50, 2, false);
    //  more requests than MAX_ROUND: refused as a whole, nothing runs
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FAIL");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "MAX_ROUND is 2");
    CHECK_INT (ufo_value_map_int (result, "rounds", -1), 0);
    CHECK_INT (f.asked, 0);
    CHECK_INT (ufo_value_size (f.tasks), 0);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_follower)
{
    const char *replies [] = { LAUNCH, ASSIGN, ASSIGN };
    fake_t f;
    s_fake_init (&f, replies, 3);
    ufo_value_t *result = s_run (&f, "follow", "[\"Write two lines\"]", "[\"Type line one\", \"Type line two\"]",
                                 50, 1, false);
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    CHECK_INT (f.asked, 3);                     //  no FINISH asked for: the plan ended the round
    REQUIRE (ufo_value_size (f.tasks) == 3);
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (f.tasks, 0), "body.subtask")), "Type line one");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (f.tasks, 1), "body.subtask")), "Type line two");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 2)), "The current subtask is: \\\"Type line two\\\"");
    CHECK_STR (ufo_value_str (ufo_value_path (ufo_value_list_at (f.tasks, 1), "body.previous_subtasks.0.status")),
               "FINISH");
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_app_error_and_bad_choices)
{
    const char *bad = "{\"Observation\": \"o\", \"Thought\": \"t\", \"CurrentSubtask\": \"x\", \"Message\": [], "
        "\"ControlLabel\": \"9\", \"ControlText\": \"nope\", \"Status\": \"ASSIGN\", \"Plan\": [], \"Bash\": \"\", "
        "\"Questions\": [], \"Comment\": \"\"}";
    const char *rm = "{\"Observation\": \"o\", \"Thought\": \"t\", \"CurrentSubtask\": \"\", \"Message\": [], "
        "\"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"CONTINUE\", \"Plan\": [], \"Bash\": \"rm -rf /\", "
        "\"Questions\": [], \"Comment\": \"\"}";
    const char *nameless = "{\"Observation\": \"o\", \"Thought\": \"t\", \"CurrentSubtask\": \"x\", \"Message\": [], "
        "\"ControlLabel\": \"2\", \"ControlText\": \"Mystery\", \"Status\": \"ASSIGN\", \"Plan\": [], \"Bash\": \"\", "
        "\"Questions\": [], \"Comment\": \"\"}";
    const char *replies [] = { rm, bad, nameless, LAUNCH, ASSIGN };
    fake_t f;
    s_fake_init (&f, replies, 5);
    f.nameless = true;
    f.app_status = "ERROR";
    ufo_value_t *result = s_run (&f, "apperr", "[\"x\"]", NULL, 50, 1, false);
    CHECK_INT (f.launch_denied, 1);
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 1)), "was refused");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 2)), "is not in the window list");
    CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 3)), "belongs to no known application");
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "window vanished");
    CHECK_INT (ufo_value_size (f.tasks), 1);    //  the subtask, no evaluation
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

#define SUMMARY "{\"request\": \"Write hello in a note\", \"applications\": [\"mousepad\"], \"subtasks\": " \
    "[{\"subtask\": \"Type hello into the document\", \"application\": \"mousepad\", \"steps\": " \
    "[{\"control\": \"Text Area\", \"action\": \"set_edit_text\", \"args\": {\"text\": \"hello\"}}]}]}"

//  SAVE_EXPERIENCE ask: when the session ends, the user is asked like any other question (a
//  question event from the HostAgent); yes: the summariser is asked and the record saved; no:
//  neither; not interactive: nobody to ask, nothing saved.
UFO_TEST (test_save_experience_ask)
{
    const char *answers [] = { "yes", "no", NULL };
    const bool interactive [] = { true, true, false };
    s_save_experience = "ask";
    for (int k = 0; k < 3; k++) {
        const char *replies [] = { LAUNCH, ASSIGN, FINISH, SUMMARY };
        fake_t f;
        s_fake_init (&f, replies, 4);
        f.act = true;
        f.answer = answers [k] ? answers [k] : "yes";
        char task [32];
        snprintf (task, sizeof task, "ask-%d", k);
        ufo_value_t *result = s_run (&f, task, "[\"Write hello in a note\"]", NULL, 50, 1, interactive [k]);
        CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
        //  the question went to the user, from the HostAgent, after the session's work
        const ufo_value_t *q = ufo_value_list_at (f.questions, ufo_value_size (f.questions) - 1);
        if (interactive [k]) {
            REQUIRE (q);
            CHECK_STR (ufo_value_map_str (q, "kind", ""), "question");
            CHECK_STR (ufo_value_map_str (q, "from", ""), "HostAgent");
            CHECK_CONTAINS (ufo_value_str (ufo_value_path (q, "questions.0")), "experience");
        }
        else
            CHECK_INT (ufo_value_size (f.questions), 0);
        if (k == 0) {
            REQUIRE (f.saved && ufo_value_size (f.saved) == 1);
            const ufo_value_t *rec = ufo_value_list_at (f.saved, 0);
            CHECK_STR (ufo_value_map_str (rec, "request", ""), "Write hello in a note");
            CHECK_STR (ufo_value_str (ufo_value_path (rec, "subtasks.0.steps.0.control")), "Text Area");
            CHECK_STR (ufo_value_map_str (rec, "session", ""), task);
            CHECK_INT ((int64_t) f.asked, 4);           //  the summariser was asked
        }
        else {
            CHECK (f.saved == NULL);
            CHECK_INT ((int64_t) f.asked, 3);           //  no summary asked for
        }
        ufo_value_destroy (&result);
        s_fake_free (&f);
    }
    s_save_experience = NULL;
}

#define TOOL_CALL "{\"Observation\": \"nothing open\", \"Thought\": \"the notes server can do it\", " \
    "\"CurrentSubtask\": \"\", \"Message\": [], \"ControlLabel\": \"\", \"ControlText\": \"\", \"Status\": \"CONTINUE\", " \
    "\"Plan\": [], \"Bash\": \"\", \"Function\": \"notes.add_note\", \"Args\": {\"text\": \"hello\"}, " \
    "\"Questions\": [], \"Comment\": \"\"}"

//  MCP tools configured for the HostAgent: they are in its prompt, a reply naming one with
//  CONTINUE calls it with the reply's Args, its result is the step's result (response.log,
//  ActionType MCP) and the next prompt's tip. Without the hook, no tools in the prompt.
UFO_TEST (test_mcp_tools)
{
    const char *replies [] = { TOOL_CALL, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 2);
    s_with_mcp = true;
    ufo_value_t *result = s_run (&f, "mcp-1", "[\"Add a note saying hello\"]", NULL, 50, 1, false);
    s_with_mcp = false;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    REQUIRE (f.mcp_calls && ufo_value_size (f.mcp_calls) == 1);
    const ufo_value_t *call = ufo_value_list_at (f.mcp_calls, 0);
    CHECK_STR (ufo_value_map_str (call, "function", ""), "notes.add_note");
    CHECK_STR (ufo_value_str (ufo_value_path (call, "args.text")), "hello");
    REQUIRE (ufo_value_size (f.prompts) >= 2);
    const char *first = ufo_value_str (ufo_value_list_at (f.prompts, 0));
    CHECK_CONTAINS (first, "[API Tools");
    CHECK_CONTAINS (first, "notes.add_note");
    CHECK_CONTAINS (first, "Adds a note to the notebook.");
    const char *second = ufo_value_str (ufo_value_list_at (f.prompts, 1));
    CHECK_CONTAINS (second, "The API tool notes.add_note returned: note 7 saved: hello");
    ufo_value_t *lines = s_read_lines ("mcp-1", "response.log");
    REQUIRE (ufo_value_size (lines) >= 1);
    const ufo_value_t *step = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (step, "ActionType", ""), "MCP");
    CHECK_STR (ufo_value_str (ufo_value_path (step, "Action.function")), "notes.add_note");
    CHECK_STR (ufo_value_str (ufo_value_path (step, "Action.args.text")), "hello");
    CHECK_CONTAINS (ufo_value_map_str (step, "Results", ""), "note 7 saved");
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);
    //  without MCP servers for the HostAgent the prompt has no tool list
    const char *plain [] = { FINISH };
    s_fake_init (&f, plain, 1);
    result = s_run (&f, "mcp-2", "[\"Add a note saying hello\"]", NULL, 50, 1, false);
    CHECK (!strstr (ufo_value_str (ufo_value_list_at (f.prompts, 0)), "[API Tools"));
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

//  The HostAgent's API tools follow the confirmation policy (desktop.confirm_actions and
//  desktop.confirm_policy), as the AppAgent's actions and tools do.
static void
s_confirm_case (const char *task, const char *patterns, const char *policy, bool interactive,
                const char *user, size_t calls, const char *user_confirm, const char *answered)
{
    const char *replies [] = { TOOL_CALL, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 2);
    f.confirm = user;
    s_with_mcp = true;
    s_confirm_actions = patterns;
    s_confirm_policy = policy;
    ufo_value_t *result = s_run (&f, task, "[\"Add a note saying hello\"]", NULL, 50, 1, interactive);
    s_with_mcp = false;
    s_confirm_actions = s_confirm_policy = NULL;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "FINISH");
    //  the tool ran only when the policy let it
    CHECK (ufo_value_size (f.mcp_calls) == calls);
    ufo_value_t *lines = s_read_lines (task, "response.log");
    REQUIRE (ufo_value_size (lines) >= 1);
    const ufo_value_t *step = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (step, "UserConfirm", "?"), user_confirm);
    CHECK_STR (ufo_value_map_str (step, "ActionType", ""), "MCP");
    //  the user was asked only in an interactive session with the policy "ask"
    size_t asked = 0;
    for (size_t i = 0; i < ufo_value_size (f.questions); i++) {
        const ufo_value_t *q = ufo_value_list_at (f.questions, i);
        if (!strcmp (ufo_value_map_str (q, "kind", ""), "confirm")) {
            asked++;
            CHECK_STR (ufo_value_map_str (q, "from", ""), "HostAgent");
            CHECK_STR (ufo_value_map_str (q, "function", ""), "notes.add_note");
            CHECK_STR (ufo_value_str (ufo_value_path (q, "args.text")), "hello");
            CHECK_CONTAINS (ufo_value_map_str (q, "reason", ""), "matches the confirmation policy");
        }
    }
    CHECK (asked == (interactive && *user_confirm && (!policy || !strcmp (policy, "ask")) ? 1u : 0u));
    //  a decision made without a user is told to the client
    const ufo_value_t *told = NULL;
    for (size_t i = 0; i < ufo_value_size (f.events); i++)
        if (!strcmp (ufo_value_map_str (ufo_value_list_at (f.events, i), "kind", ""), "confirm"))
            told = ufo_value_list_at (f.events, i);
    if (answered) {
        REQUIRE (told);
        CHECK_STR (ufo_value_map_str (told, "answered", ""), answered);
        CHECK_STR (ufo_value_map_str (told, "function", ""), "notes.add_note");
    }
    else
        CHECK (!told);
    if (!strcmp (user_confirm, "no")) {
        CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (step, "ActionSuccess"), 0), "error", ""),
                        "did not confirm");
        REQUIRE (ufo_value_size (f.prompts) >= 2);
        CHECK_CONTAINS (ufo_value_str (ufo_value_list_at (f.prompts, 1)),
                        "The API tool notes.add_note failed: the user did not confirm the API tool notes.add_note");
    }
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

UFO_TEST (test_mcp_confirm)
{
    //  asked and refused: not called, the refusal is the step's result and the next prompt's tip
    s_confirm_case ("confirm-1", "[\"notes.*\"]", "ask", true, "no", 0, "no", NULL);
    //  asked and confirmed
    s_confirm_case ("confirm-2", "[\"NOTES.add_*\"]", NULL, true, "yes", 1, "yes", NULL);
    //  asked, no answer comes (cancelled): refused
    s_confirm_case ("confirm-3", "[\"notes.*\"]", "ask", true, NULL, 0, "no", NULL);
    //  no user: refused without asking, the client told
    s_confirm_case ("confirm-4", "[\"notes.*\"]", "ask", false, NULL, 0, "no", "no");
    //  policy "yes": runs without asking, also in an interactive session
    s_confirm_case ("confirm-5", "[\"notes.*\"]", "yes", false, NULL, 1, "yes", "yes");
    s_confirm_case ("confirm-6", "[\"notes.*\"]", "yes", true, "no", 1, "yes", NULL);
    //  policy "no": refused without asking
    s_confirm_case ("confirm-7", "[\"notes.*\"]", "no", true, "yes", 0, "no", NULL);
    //  patterns that do not match (and non-strings): not under the policy
    s_confirm_case ("confirm-8", "[\"files.*\", 7, \"\"]", "ask", true, "no", 1, "", NULL);
}

//  The confirmation is an operation like the HostAgent's questions: the machine waits for
//  the user's answer without calling the tool, and a cancel while it waits refuses the call
//  and ends the session without another model call, tool call or evaluation.
UFO_TEST (test_mcp_confirm_cancelled)
{
    const char *replies [] = { TOOL_CALL, FINISH };
    fake_t f;
    s_fake_init (&f, replies, 2);
    f.confirm = "yes";                      //  would confirm, but the cancel comes first
    f.cancel_at_user = true;
    s_with_mcp = true;
    s_confirm_actions = "[\"notes.*\"]";
    ufo_value_t *result = s_run (&f, "confirm-cancel", "[\"Add a note saying hello\"]", NULL, 50, 1, true);
    s_with_mcp = false;
    s_confirm_actions = NULL;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK_CONTAINS (ufo_value_map_str (result, "error", ""), "cancelled");
    CHECK (!f.mcp_calls);                   //  the tool never ran
    CHECK_INT (f.asked, 1);                 //  no model call after the cancel
    CHECK_INT (ufo_value_size (f.tasks), 0);        //  no evaluation
    REQUIRE (ufo_value_size (f.questions) == 1);
    CHECK_STR (ufo_value_map_str (ufo_value_list_at (f.questions, 0), "kind", ""), "confirm");
    ufo_value_t *lines = s_read_lines ("confirm-cancel", "response.log");
    REQUIRE (ufo_value_size (lines) == 1);
    const ufo_value_t *step = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (step, "UserConfirm", "?"), "no");
    CHECK_STR (ufo_value_map_str (step, "Model", "?"), "fake/model");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (step, "ActionSuccess"), 0), "error", ""),
                    "did not confirm");
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);

    //  confirmed, but the cancel came with the answer: the tool is not started either
    s_fake_init (&f, replies, 2);
    f.confirm = "yes";
    f.cancel_with_answer = true;
    s_with_mcp = true;
    s_confirm_actions = "[\"notes.*\"]";
    result = s_run (&f, "confirm-cancel-2", "[\"Add a note saying hello\"]", NULL, 50, 1, true);
    s_with_mcp = false;
    s_confirm_actions = NULL;
    CHECK_STR (ufo_value_map_str (result, "status", ""), "ERROR");
    CHECK (!f.mcp_calls);
    CHECK_INT (f.asked, 1);
    lines = s_read_lines ("confirm-cancel-2", "response.log");
    REQUIRE (ufo_value_size (lines) == 1);
    step = ufo_value_list_at (lines, 0);
    CHECK_STR (ufo_value_map_str (step, "UserConfirm", "?"), "yes");
    CHECK_CONTAINS (ufo_value_map_str (ufo_value_list_at (ufo_value_map_get (step, "ActionSuccess"), 0), "error", ""),
                    "the session was cancelled before notes.add_note was called");
    ufo_value_destroy (&lines);
    ufo_value_destroy (&result);
    s_fake_free (&f);
}

int
main (void)
{
    snprintf (s_root, sizeof s_root, "/tmp/test_host_session.%d", (int) getpid ());
    char prompts [512];
    const char *src = getenv ("UFO_SOURCE_DIR");
    snprintf (prompts, sizeof prompts, "%s/prompts", src ? src : UFO_SOURCE_DIR);
    s_prompts = ufo_prompts_new (prompts, NULL);
    if (!s_prompts) {
        fprintf (stderr, "no prompts at %s\n", prompts);
        return 1;
    }
    UFO_RUN (test_one_round);
    UFO_RUN (test_two_rounds_history);
    UFO_RUN (test_round_evaluations);
    UFO_RUN (test_resume_redelivered);
    UFO_RUN (test_resume_mid_round);
    UFO_RUN (test_pending_answered);
    UFO_RUN (test_step_event_redacted);
    UFO_RUN (test_request_json);
    UFO_RUN (test_no_worker_tip);
    UFO_RUN (test_garbage_error);
    UFO_RUN (test_cancel_in_flight);
    UFO_RUN (test_cancel_during_task_and_question);
    UFO_RUN (test_max_step_and_round);
    UFO_RUN (test_follower);
    UFO_RUN (test_app_error_and_bad_choices);
    UFO_RUN (test_save_experience_ask);
    UFO_RUN (test_mcp_tools);
    UFO_RUN (test_mcp_confirm);
    UFO_RUN (test_mcp_confirm_cancelled);
    ufo_prompts_destroy (&s_prompts);
    char cmd [600];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", s_root);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_root);
    return UFO_TEST_END ();
}
