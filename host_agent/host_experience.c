/*  host_experience.c - the HostAgent's knowledge (docs/KNOWLEDGE.md): at the start of a
    round, the records of similar past requests (RAG_EXPERIENCE) and web search results
    (RAG_ONLINE_SEARCH) for its prompts and the AppAgents'; at the end of a session, the
    summary of what it did (SAVE_EXPERIENCE) made by the model with the summariser prompt
    (prompts/experience/) and saved on the broker. */
#include "ufo_prelude.h"
#include "ufo_clock.h"
#include "ufo_cost.h"
#include "ufo_error.h"
#include "ufo_experience.h"
#include "ufo_llm.h"
#include "ufo_llm_parse.h"
#include "ufo_log.h"
#include "ufo_prompt.h"
#include "ufo_value.h"
#include "host_int.h"

bool
host_experience_start_find (host_t *self)
{
    if (!self->cfg->rag_experience || !self->ops->experience_find)
        return false;
    host_start (self, HP_ROUND_EXPERIENCE);
    self->ops->experience_find (self->ops->arg, self->request);
    return true;
}

bool
host_online_start_find (host_t *self)
{
    if (!self->cfg->rag_online || !self->ops->online_search)
        return false;
    host_start (self, HP_ROUND_ONLINE);
    self->ops->online_search (self->ops->arg, self->request);
    return true;
}

bool
host_demonstration_start_find (host_t *self)
{
    if (!self->cfg->rag_demonstration || !self->ops->demonstration_find || !self->subtask)
        return false;
    host_start (self, HP_ASSIGN_DEMO);
    self->ops->demonstration_find (self->ops->arg, self->subtask);
    return true;
}

ufo_value_t *
host_found_take (host_t *self, const char *failed)
{
    host_reply_t *reply = host_reply (self);
    ufo_value_t *found = reply->value;
    reply->value = NULL;
    if (ufo_value_type (found) != UFO_TLIST) {
        ufo_warn ("host: %s: %s", failed, reply->err.code ? reply->err.message : "not a list");
        ufo_value_destroy (&found);
        found = ufo_value_new_list ();
    }
    return found;
}

//  HP_SAVE_WANTED: whether this session is to be saved, by SAVE_EXPERIENCE ("ask": the
//  user is asked, HP_SAVE_SUMMARY takes the answer).
static void
s_wanted (host_t *self)
{
    const char *status = self->status;
    const char *mode = self->cfg->save_experience ? self->cfg->save_experience : "always_not";
    self->save_wanted = false;
    self->phase = HP_SAVE_SUMMARY;
    if (!self->ops->experience_save) {
        self->phase = HP_SESSION_LOGS;
        return;
    }
    if (strcmp (mode, "always") == 0)
        self->save_wanted = strcmp (status, "ERROR") != 0;
    else if (strcmp (mode, "auto") == 0) {
        const char *complete = ufo_value_map_str (self->evaluation, "complete", "");
        if (strcmp (complete, "yes") != 0)
            ufo_info ("host: session %s not saved as experience: the evaluation says complete=%s",
                      self->cfg->session, *complete ? complete : "(none)");
        self->save_wanted = strcmp (complete, "yes") == 0;
    }
    else if (strcmp (mode, "ask") == 0 && self->cfg->interactive && !self->ops->cancelled (self->ops->arg)) {
        ufo_value_t *event = ufo_value_new_map ();
        ufo_value_map_set_str (event, "kind", "question");
        ufo_value_map_set (event, "qid", &(ufo_value_t *) {
            ufo_value_new_stringf ("%s-experience", self->cfg->session) });
        ufo_value_map_set_str (event, "from", "HostAgent");
        ufo_value_t *q = ufo_value_new_list ();
        ufo_value_list_push_str (q, "Save this session as experience for later sessions? (yes/no)");
        ufo_value_map_set (event, "questions", &q);
        self->save_wanted = true;           //  if the user says yes
        host_start (self, HP_SAVE_SUMMARY);
        self->ops->ask_user (self->ops->arg, &event);
    }
}

//  HP_SAVE_SUMMARY: the model summarises the session (prompts/experience/).
static void
s_summary (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    self->phase = HP_SESSION_LOGS;
    if (self->save_wanted && strcmp (cfg->save_experience ? cfg->save_experience : "", "ask") == 0) {
        const ufo_value_t *reply = host_reply (self)->value;
        const char *a = ufo_value_str (ufo_value_list_at (ufo_value_map_get (reply, "answers"), 0));
        self->save_wanted = a && (a [0] == 'y' || a [0] == 'Y');
    }
    if (!self->save_wanted)
        return;
    ufo_value_t *trajectory = ufo_experience_trajectory (self->board);
    if (ufo_value_size (trajectory) == 0) {
        ufo_info ("host: session %s not saved as experience: no step acted on a control", cfg->session);
        ufo_value_destroy (&trajectory);
        return;
    }
    ufo_value_t *vars = ufo_value_new_map ();
    ufo_value_map_set_copy (vars, "requests", cfg->requests);
    ufo_value_map_set_str (vars, "status", self->status);
    ufo_value_map_set (vars, "trajectory", &trajectory);
    ufo_error_t err = {0};
    char *system = ufo_prompts_render (cfg->prompts, "experience", "system", vars, &err);
    char *user = system ? ufo_prompts_render (cfg->prompts, "experience", "user", vars, &err) : NULL;
    ufo_value_destroy (&vars);
    if (!user) {
        ufo_warn ("host: experience not saved: summariser prompt: %s", err.message);
        free (system);
        return;
    }
    ufo_value_t *messages = ufo_value_new_list ();
    const char *roles [] = { "system", "user" }, *texts [] = { system, user };
    for (int i = 0; i < 2; i++) {
        ufo_value_t *m = ufo_value_new_map ();
        ufo_value_map_set_str (m, "role", roles [i]);
        ufo_value_map_set_str (m, "content", texts [i]);
        ufo_value_list_push (messages, &m);
    }
    free (system);
    free (user);
    //  kept (the step's slot is free at session end) until the call completes
    ufo_value_destroy (&self->st.messages);
    self->st.messages = messages;
    self->st.opts = (ufo_llm_opts_t) { .agent = "ExperienceSummarizer", .step = self->step,
                                       .schema = UFO_SCHEMA_OBJECT, .json_retry = cfg->json_retry };
    host_start (self, HP_SAVE_STORED);
    self->ops->ask (self->ops->arg, self->st.messages, &self->st.opts);
}

//  HP_SAVE_STORED: the summary, checked, goes to the broker (its reply: HP_SESSION_LOGS).
static void
s_store (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    host_reply_t *reply = host_reply (self);
    ufo_llm_response_t *resp = reply->response;
    self->phase = HP_SESSION_LOGS;
    if (!resp || resp->code != UFO_OK || !resp->decision) {
        ufo_warn ("host: experience not saved: the summariser failed: %s",
                  resp && resp->error ? resp->error : reply->err.message);
        return;
    }
    ufo_cost_add (&self->cost, resp->cost, resp->prompt_tokens, resp->completion_tokens);
    ufo_value_t *record = ufo_value_dup (resp->decision);
    ufo_error_t err = {0};
    if (ufo_experience_check (record, &err) < 0) {
        ufo_warn ("host: experience not saved: the summary is not a record: %s", err.message);
        ufo_value_destroy (&record);
        return;
    }
    ufo_value_map_set_str (record, "session", cfg->session);
    ufo_value_map_set_str (record, "device", cfg->device ? cfg->device : "");
    char now [40];
    ufo_time_iso (now);
    ufo_value_map_set_str (record, "saved_at", now);
    ufo_value_map_set_str (record, "evaluation", ufo_value_map_str (self->evaluation, "complete", ""));
    host_start (self, HP_SAVE_DONE);
    self->ops->experience_save (self->ops->arg, &record);
}

static void
s_saved (host_t *self)
{
    host_reply_t *reply = host_reply (self);
    if (reply->number < 0)
        ufo_warn ("host: experience not saved: %s", reply->err.message);
    else
        ufo_info ("host: session %s saved as experience %s", self->cfg->session, reply->id);
    self->phase = HP_SESSION_LOGS;
}

void
host_experience_phase (host_t *self)
{
    switch (self->phase) {
        case HP_SAVE_WANTED:    s_wanted (self); break;
        case HP_SAVE_SUMMARY:   s_summary (self); break;
        case HP_SAVE_STORED:    s_store (self); break;
        case HP_SAVE_DONE:      s_saved (self); break;
        default:                assert (false);
    }
}
