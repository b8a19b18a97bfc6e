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

ufo_value_t *
host_experience_find (host_t *self)
{
    const host_session_config_t *cfg = self->cfg;
    if (!cfg->rag_experience || !self->ops->experience_find)
        return NULL;
    ufo_error_t err = {0};
    ufo_value_t *found = self->ops->experience_find (self->ops->arg, self->request, &err);
    if (!found) {
        ufo_warn ("host: experience not retrieved: %s", err.message);
        found = ufo_value_new_list ();
    }
    ufo_info ("host: session %s round %" PRId64 ": %zu experience record(s) retrieved",
              cfg->session, self->round, ufo_value_size (found));
    return found;
}

ufo_value_t *
host_online_find (host_t *self)
{
    if (!self->cfg->rag_online || !self->ops->online_search)
        return NULL;
    ufo_error_t err = {0};
    ufo_value_t *found = self->ops->online_search (self->ops->arg, self->request, &err);
    if (!found) {
        ufo_warn ("host: online search failed, going on without it: %s", err.message);
        found = ufo_value_new_list ();
    }
    return found;
}

ufo_value_t *
host_demonstration_find (host_t *self)
{
    if (!self->cfg->rag_demonstration || !self->ops->demonstration_find || !self->subtask)
        return NULL;
    ufo_error_t err = {0};
    ufo_value_t *found = self->ops->demonstration_find (self->ops->arg, self->subtask, &err);
    if (!found) {
        ufo_warn ("host: demonstrations not retrieved: %s", err.message);
        found = ufo_value_new_list ();
    }
    return found;
}

//  Whether this session is to be saved, by SAVE_EXPERIENCE.
static bool
s_wanted (host_t *self, const char *status)
{
    const char *mode = self->cfg->save_experience ? self->cfg->save_experience : "always_not";
    if (strcmp (mode, "always") == 0)
        return strcmp (status, "ERROR") != 0;
    if (strcmp (mode, "auto") == 0) {
        const char *complete = ufo_value_map_str (self->evaluation, "complete", "");
        if (strcmp (complete, "yes") != 0)
            ufo_info ("host: session %s not saved as experience: the evaluation says complete=%s",
                      self->cfg->session, *complete ? complete : "(none)");
        return strcmp (complete, "yes") == 0;
    }
    if (strcmp (mode, "ask") == 0 && self->cfg->interactive) {
        ufo_value_t *event = ufo_value_new_map ();
        ufo_value_map_set_str (event, "kind", "question");
        ufo_value_map_set (event, "qid", &(ufo_value_t *) {
            ufo_value_new_stringf ("%s-experience", self->cfg->session) });
        ufo_value_map_set_str (event, "from", "HostAgent");
        ufo_value_t *q = ufo_value_new_list ();
        ufo_value_list_push_str (q, "Save this session as experience for later sessions? (yes/no)");
        ufo_value_map_set (event, "questions", &q);
        ufo_value_t *reply = self->ops->ask_user (self->ops->arg, &event);
        const char *a = ufo_value_str (ufo_value_list_at (ufo_value_map_get (reply, "answers"), 0));
        bool yes = a && (a [0] == 'y' || a [0] == 'Y');
        ufo_value_destroy (&reply);
        return yes;
    }
    return false;
}

void
host_experience_save (host_t *self, const char *status, const ufo_value_t *board)
{
    const host_session_config_t *cfg = self->cfg;
    if (!self->ops->experience_save || !s_wanted (self, status))
        return;
    ufo_value_t *trajectory = ufo_experience_trajectory (board);
    if (ufo_value_size (trajectory) == 0) {
        ufo_info ("host: session %s not saved as experience: no step acted on a control", cfg->session);
        ufo_value_destroy (&trajectory);
        return;
    }
    ufo_value_t *vars = ufo_value_new_map ();
    ufo_value_map_set_copy (vars, "requests", cfg->requests);
    ufo_value_map_set_str (vars, "status", status);
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
    ufo_llm_opts_t opts = { .agent = "ExperienceSummarizer", .step = self->step,
                            .schema = UFO_SCHEMA_OBJECT, .json_retry = cfg->json_retry };
    ufo_llm_response_t *resp = self->ops->ask (self->ops->arg, messages, &opts, &err);
    ufo_value_destroy (&messages);
    if (!resp || resp->code != UFO_OK || !resp->decision) {
        ufo_warn ("host: experience not saved: the summariser failed: %s",
                  resp && resp->error ? resp->error : err.message);
        ufo_llm_response_destroy (&resp);
        return;
    }
    ufo_cost_add (&self->cost, resp->cost, resp->prompt_tokens, resp->completion_tokens);
    ufo_value_t *record = ufo_value_dup (resp->decision);
    ufo_llm_response_destroy (&resp);
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
    char id [64] = "";
    if (self->ops->experience_save (self->ops->arg, &record, id, &err) < 0)
        ufo_warn ("host: experience not saved: %s", err.message);
    else
        ufo_info ("host: session %s saved as experience %s", cfg->session, id);
}
