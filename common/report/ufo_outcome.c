/*  ufo_outcome.c - step and session outcomes (see ufo_outcome.h). */
#include "ufo_prelude.h"
#include "ufo_value.h"
#include "ufo_outcome.h"

bool
ufo_outcome_step_failed (const ufo_value_t *record, const char **why)
{
    if (ufo_value_type (record) != UFO_TMAP)
        return false;
    const char *reason = NULL;
    bool failed = false;
    const ufo_value_t *outcomes = ufo_value_map_get (record, "ActionSuccess");
    for (size_t i = 0; ufo_value_type (outcomes) == UFO_TLIST && i < ufo_value_size (outcomes); i++) {
        const ufo_value_t *o = ufo_value_list_at (outcomes, i);
        if (ufo_value_type (o) == UFO_TMAP && !ufo_value_map_bool (o, "success", true)) {
            failed = true;
            const char *e = ufo_value_map_str (o, "error", "");
            if (*e && !reason)
                reason = e;
        }
    }
    const char *error = ufo_value_map_str (record, "error", "");
    if (*error) {
        failed = true;
        reason = error;             //  the step's own error names the cause best
    }
    if (strcmp (ufo_value_map_str (record, "Status", ""), "ERROR") == 0)
        failed = true;
    if (failed && why)
        *why = reason ? reason : "failed";
    return failed;
}

const char *
ufo_outcome_session_status (const ufo_value_t *result, const char *task_status)
{
    const char *status = ufo_value_type (result) == UFO_TMAP ? ufo_value_map_str (result, "status", NULL) : NULL;
    if (status && *status)
        return status;
    if (task_status && strcmp (task_status, "cancelled") == 0)
        return "CANCELLED";
    return "ERROR";
}

bool
ufo_outcome_completed (const ufo_value_t *result)
{
    if (strcmp (ufo_outcome_session_status (result, NULL), "FINISH") != 0)
        return false;
    const char *complete = ufo_value_str (ufo_value_path (result, "evaluation.complete"));
    return !(complete && strcmp (complete, "no") == 0);
}

const char *
ufo_outcome_disagreement (const ufo_value_t *result, char *out, size_t size)
{
    const char *status = ufo_outcome_session_status (result, NULL);
    const char *complete = ufo_value_str (ufo_value_path (result, "evaluation.complete"));
    if (!complete)
        return NULL;
    if (strcmp (status, "FINISH") == 0 && strcmp (complete, "no") == 0)
        snprintf (out, size, "the agents said FINISH, but the evaluation found the request not completed");
    else
    if ((strcmp (status, "FAIL") == 0 || strcmp (status, "ERROR") == 0) && strcmp (complete, "yes") == 0)
        snprintf (out, size, "the agents ended with %s, but the evaluation found the request completed", status);
    else
        return NULL;
    return out;
}
