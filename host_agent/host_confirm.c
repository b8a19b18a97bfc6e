/*  host_confirm.c - the confirmation policy for the HostAgent's API tools; see host_confirm.h. */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "ufo_policy.h"
#include "ufo_value.h"
#include "host_confirm.h"

const char *
host_confirm_start (host_t *self, const char *tool, const ufo_value_t *args, host_phase_t then)
{
    const host_session_config_t *cfg = self->cfg;
    const char *hit = ufo_policy_match (cfg->confirm_actions, tool);
    if (!hit)
        return "";
    char why [512];
    snprintf (why, sizeof why, "the action %s matches the confirmation policy '%s'", tool, hit);
    const char *policy = cfg->confirm_policy && *cfg->confirm_policy ? cfg->confirm_policy : "ask";
    const char *answer = !strcmp (policy, "yes") ? "yes" : !strcmp (policy, "no") ? "no"
                       : !cfg->interactive ? (cfg->auto_confirm ? "yes" : "no") : NULL;
    if (!answer && self->ops->cancelled (self->ops->arg)) {
        //  nobody is asked for a session that is winding down
        ufo_info ("HostAgent: confirmation of %s refused: the session was cancelled (%s)", tool, why);
        return "no";
    }
    ufo_value_t *ev = ufo_value_new_map ();
    ufo_value_map_set_str (ev, "kind", "confirm");
    ufo_value_map_set (ev, "qid", &(ufo_value_t *) { ufo_value_new_stringf ("%s-hc%" PRId64, cfg->session, self->step) });
    ufo_value_map_set_str (ev, "from", "HostAgent");
    ufo_value_map_set_str (ev, "function", tool);
    ufo_value_map_set (ev, "args", &(ufo_value_t *) { args ? ufo_value_dup (args) : ufo_value_new_map () });
    ufo_value_t *control = ufo_value_new_map ();
    ufo_value_map_set_str (control, "label", "");
    ufo_value_map_set_str (control, "type", "");
    ufo_value_map_set_str (control, "name", "");
    ufo_value_map_set (ev, "control", &control);
    ufo_value_map_set_str (ev, "reason", why);
    if (answer) {
        ufo_info ("HostAgent: confirmation of %s answered '%s' without asking (%s)", tool, answer, why);
        if (!cfg->interactive) {
            ufo_value_map_set_str (ev, "answered", answer);
            ufo_value_map_set_str (ev, "by", strcmp (policy, "ask") ? "confirm_policy"
                                             : cfg->auto_confirm ? "auto_confirm" : "no user");
            self->ops->progress (self->ops->arg, &ev);
        }
        ufo_value_destroy (&ev);
        return answer;
    }
    //  the user answers later: the machine waits in phase then (a cancel ends it without one)
    host_start (self, then);
    self->ops->ask_user (self->ops->arg, &ev);
    return NULL;
}

const char *
host_confirm_answer (host_t *self, const char *tool)
{
    const ufo_value_t *reply = host_reply (self)->value;
    const ufo_value_t *c = ufo_value_map_get (reply, "confirm");
    const char *answer = ufo_value_type (c) == UFO_TBOOL && ufo_value_bool (c) ? "yes" : "no";
    ufo_info ("HostAgent: the user answered '%s' to the confirmation of %s%s", answer, tool,
              reply ? "" : " (no answer came)");
    return answer;
}

ufo_value_t *
host_confirm_refused (const char *tool)
{
    ufo_value_t *r = ufo_value_new_map ();
    ufo_value_map_set_bool (r, "success", false);
    ufo_value_map_set (r, "error", &(ufo_value_t *) {
        ufo_value_new_stringf ("the user did not confirm the API tool %s; it was not run", tool) });
    ufo_value_map_set_str (r, "text", "");
    return r;
}
