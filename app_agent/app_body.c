/*  app_body.c - the subtask body, checked (see app_body.h). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_tasklog.h"
#include "ufo_value.h"
#include "app_body.h"

#define S_MAX_INDEX 1000000
#define S_MAX_STEP  1000000000

static int
s_str (const ufo_value_t *body, const char *key, bool required, const char **out, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        *out = "";
        return required ? ufo_error_set (err, UFO_E_MISSING, "subtask body: '%s' is missing", key) : 0;
    }
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "subtask body: '%s' must be a string", key);
    *out = ufo_value_str (v);
    return 0;
}

static int
s_int (const ufo_value_t *body, const char *key, int64_t dflt, int64_t min, int64_t max,
       int64_t *out, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        *out = dflt;
        return 0;
    }
    if (ufo_value_type (v) != UFO_TINT || ufo_value_int (v) < min || ufo_value_int (v) > max)
        return ufo_error_set (err, UFO_E_RANGE, "subtask body: '%s' must be an integer in %" PRId64
                              "..%" PRId64, key, min, max);
    *out = ufo_value_int (v);
    return 0;
}

static int
s_list (const ufo_value_t *body, const char *key, const ufo_value_t **out, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    *out = NULL;
    if (!v || ufo_value_type (v) == UFO_TNULL)
        return 0;
    if (ufo_value_type (v) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "subtask body: '%s' must be a list", key);
    *out = v;
    return 0;
}

static bool
s_task_name_ok (const char *s)
{
    return *s && strcmp (s, ".") && strcmp (s, "..") && !strchr (s, '/');
}

static int
s_bool (const ufo_value_t *body, const char *key, bool *out, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    *out = false;
    if (!v || ufo_value_type (v) == UFO_TNULL)
        return 0;
    if (ufo_value_type (v) != UFO_TBOOL)
        return ufo_error_set (err, UFO_E_TYPE, "subtask body: '%s' must be true or false", key);
    *out = ufo_value_bool (v);
    return 0;
}

int
app_body_parse (const ufo_value_t *b, app_body_t *out, ufo_error_t *err)
{
    memset (out, 0, sizeof *out);
    if (ufo_value_type (b) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "subtask body must be a map");
    if (s_str (b, "session", true, &out->session, err)
    ||  s_str (b, "task", true, &out->task, err)
    ||  s_str (b, "log_root", false, &out->log_root, err)
    ||  s_str (b, "subtask", true, &out->subtask, err)
    ||  s_str (b, "request", false, &out->request, err)
    ||  s_str (b, "application", false, &out->application, err)
    ||  s_int (b, "round", 0, 0, S_MAX_INDEX, &out->round, err)
    ||  s_int (b, "subtask_index", 0, 0, S_MAX_INDEX, &out->subtask_index, err)
    ||  s_int (b, "step_base", 0, 0, S_MAX_STEP, &out->step_base, err)
    ||  s_int (b, "round_step_base", out->step_base, 0, S_MAX_STEP, &out->round_step_base, err)
    ||  s_int (b, "max_steps", 50, 0, S_MAX_INDEX, &out->max_steps, err)
    ||  s_list (b, "tips", &out->tips, err)
    ||  s_list (b, "previous_subtasks", &out->previous_subtasks, err)
    ||  s_bool (b, "interactive", &out->interactive, err)
    ||  s_bool (b, "auto_confirm", &out->auto_confirm, err))
        return -1;
    if (!*out->session)
        return ufo_error_set (err, UFO_E_INVALID, "subtask body: 'session' is empty");
    if (!s_task_name_ok (out->task))
        return ufo_error_set (err, UFO_E_INVALID, "subtask body: 'task' must be one path component");
    if (*out->log_root && !ufo_tasklog_root_safe (out->log_root))
        return ufo_error_set (err, UFO_E_INVALID, "subtask body: 'log_root' must be a directory path of at most "
                              "1024 bytes without \"..\" components");
    const ufo_value_t *window = ufo_value_map_get (b, "window");
    if (window && ufo_value_type (window) != UFO_TNULL && ufo_value_type (window) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "subtask body: 'window' must be a map");
    out->window = ufo_value_type (window) == UFO_TMAP ? window : NULL;
    return 0;
}
