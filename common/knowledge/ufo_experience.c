/*  ufo_experience.c - experience records on the broker and in the index (see ufo_experience.h). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_bb_client.h"
#include "ufo_kb.h"
#include "ufo_experience.h"

#define S_MEMORY "requests"
#define S_MAX_ID 64

static int
s_text_list (const ufo_value_t *list, const char *name, bool required, ufo_error_t *err)
{
    if (!list && !required)
        return 0;
    if (ufo_value_type (list) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "experience record: '%s' must be a list", name);
    for (size_t i = 0; i < ufo_value_size (list); i++)
        if (ufo_value_type (ufo_value_list_at (list, i)) != UFO_TSTRING)
            return ufo_error_set (err, UFO_E_TYPE, "experience record: '%s' [%zu] must be a string",
                                  name, i);
    return 0;
}

static bool
s_is_str (const ufo_value_t *map, const char *key)
{
    return ufo_value_type (ufo_value_map_get (map, key)) == UFO_TSTRING;
}

int
ufo_experience_check (const ufo_value_t *r, ufo_error_t *err)
{
    if (ufo_value_type (r) != UFO_TMAP)
        return ufo_error_set (err, UFO_E_TYPE, "experience record: must be a map");
    if (!s_is_str (r, "request") || !*ufo_value_map_str (r, "request", ""))
        return ufo_error_set (err, UFO_E_MISSING, "experience record: 'request' (a non-empty string) is missing");
    if (s_text_list (ufo_value_map_get (r, "applications"), "applications", true, err)
    ||  s_text_list (ufo_value_map_get (r, "tips"), "tips", false, err))
        return -1;
    const ufo_value_t *subtasks = ufo_value_map_get (r, "subtasks");
    if (ufo_value_type (subtasks) != UFO_TLIST || ufo_value_size (subtasks) == 0)
        return ufo_error_set (err, UFO_E_MISSING, "experience record: 'subtasks' (a non-empty list) is missing");
    for (size_t i = 0; i < ufo_value_size (subtasks); i++) {
        const ufo_value_t *s = ufo_value_list_at (subtasks, i);
        if (ufo_value_type (s) != UFO_TMAP || !s_is_str (s, "subtask") || !s_is_str (s, "application"))
            return ufo_error_set (err, UFO_E_MISSING, "experience record: subtasks [%zu] needs "
                                  "'subtask' and 'application' strings", i);
        const ufo_value_t *steps = ufo_value_map_get (s, "steps");
        if (ufo_value_type (steps) != UFO_TLIST)
            return ufo_error_set (err, UFO_E_MISSING, "experience record: subtasks [%zu].steps must be a list", i);
        for (size_t k = 0; k < ufo_value_size (steps); k++) {
            const ufo_value_t *st = ufo_value_list_at (steps, k);
            const ufo_value_t *args = ufo_value_map_get (st, "args");
            if (ufo_value_type (st) != UFO_TMAP || !s_is_str (st, "control") || !s_is_str (st, "action")
            ||  (args && ufo_value_type (args) != UFO_TMAP))
                return ufo_error_set (err, UFO_E_MISSING, "experience record: subtasks [%zu].steps [%zu] "
                                      "needs 'control' and 'action' strings (and 'args' a map)", i, k);
        }
    }
    return 0;
}

char *
ufo_experience_text (const ufo_value_t *r)
{
    ufo_buf_t b = {0};
    ufo_buf_printf (&b, "%s\n", ufo_value_map_str (r, "request", ""));
    const ufo_value_t *subtasks = ufo_value_map_get (r, "subtasks");
    for (size_t i = 0; i < ufo_value_size (subtasks); i++) {
        const ufo_value_t *s = ufo_value_list_at (subtasks, i);
        ufo_buf_printf (&b, "%zu. %s (%s):", i + 1, ufo_value_map_str (s, "subtask", ""),
                        ufo_value_map_str (s, "application", ""));
        const ufo_value_t *steps = ufo_value_map_get (s, "steps");
        for (size_t k = 0; k < ufo_value_size (steps); k++) {
            const ufo_value_t *st = ufo_value_list_at (steps, k);
            ufo_buf_printf (&b, "%s %s on \"%s\"", k ? ";" : "", ufo_value_map_str (st, "action", ""),
                            ufo_value_map_str (st, "control", ""));
        }
        ufo_buf_putc (&b, '\n');
    }
    const ufo_value_t *tips = ufo_value_map_get (r, "tips");
    for (size_t i = 0; i < ufo_value_size (tips); i++)
        ufo_buf_printf (&b, "Tip: %s\n", ufo_value_str (ufo_value_list_at (tips, i)) ?: "");
    return ufo_buf_detach (&b, NULL);
}

ufo_value_t *
ufo_experience_trajectory (const ufo_value_t *board)
{
    ufo_value_t *out = ufo_value_new_list ();
    const ufo_value_t *traj = ufo_value_map_get (board, "trajectories");
    for (size_t i = 0; i < ufo_value_size (traj); i++) {
        const ufo_value_t *t = ufo_value_list_at (traj, i);
        const ufo_value_t *action = ufo_value_map_get (t, "Action");
        const char *function = ufo_value_map_str (action, "function", "");
        if (!*function)
            continue;
        ufo_value_t *step = ufo_value_new_map ();
        ufo_value_map_set_str (step, "subtask", ufo_value_map_str (t, "Subtask", ""));
        ufo_value_map_set_str (step, "application", ufo_value_map_str (t, "Application", ""));
        ufo_value_map_set_str (step, "control", ufo_value_map_str (action, "control_text", ""));
        ufo_value_map_set_str (step, "action", function);
        const ufo_value_t *args = ufo_value_map_get (action, "args");
        if (ufo_value_type (args) == UFO_TMAP)
            ufo_value_map_set_copy (step, "args", args);
        else
            ufo_value_map_set (step, "args", &(ufo_value_t *) { ufo_value_new_map () });
        ufo_value_list_push (out, &step);
    }
    return out;
}

static bool
s_id_ok (const char *id)
{
    size_t len = id ? strlen (id) : 0;
    if (len == 0 || len >= S_MAX_ID)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum ((unsigned char) id [i]) && id [i] != '-' && id [i] != '_')
            return false;
    return true;
}

//  "experience:" or "demonstration:" for kind; NULL for another kind.
static const char *
s_prefix (const char *kind)
{
    if (kind && strcmp (kind, "experience") == 0)
        return UFO_EXPERIENCE_PREFIX;
    if (kind && strcmp (kind, "demonstration") == 0)
        return UFO_DEMONSTRATION_PREFIX;
    return NULL;
}

int
ufo_experience_board (const char *kind, const char *id, char board [UFO_EXPERIENCE_BOARD_MAX],
                      ufo_error_t *err)
{
    const char *prefix = s_prefix (kind);
    if (!prefix)
        return ufo_error_set (err, UFO_E_INVALID, "unknown record kind '%s'", kind ? kind : "");
    if (!s_id_ok (id))
        return ufo_error_set (err, UFO_E_INVALID, "'%s' is not an %s id", id ? id : "", kind);
    snprintf (board, UFO_EXPERIENCE_BOARD_MAX, "%s%s", prefix, id);
    return 0;
}

ufo_value_t *
ufo_experience_save_request (const char *kind, ufo_value_t **record_p, char *id_out, ufo_error_t *err)
{
    assert (record_p && id_out);
    if (!s_prefix (kind)) {
        ufo_value_destroy (record_p);
        return ufo_error_set (err, UFO_E_INVALID, "unknown record kind '%s'", kind ? kind : ""), NULL;
    }
    if (ufo_experience_check (*record_p, err) < 0) {
        ufo_value_destroy (record_p);
        return NULL;
    }
    //  time-ordered ids: seconds, then randomness against two saves in the same second
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    unsigned int seed = (unsigned int) (ts.tv_nsec ^ getpid ());
    snprintf (id_out, S_MAX_ID, "%010lld-%08x", (long long) ts.tv_sec,
              (unsigned int) rand_r (&seed) ^ (unsigned int) ts.tv_nsec);
    char board [UFO_EXPERIENCE_BOARD_MAX];
    ufo_experience_board (kind, id_out, board, NULL);
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set (item, kind, record_p);
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_map_set_str (body, "memory", S_MEMORY);
    ufo_value_map_set (body, "item", &item);
    return body;
}

ufo_value_t *
ufo_experience_get_request (const char *kind, const char *id, ufo_error_t *err)
{
    char board [UFO_EXPERIENCE_BOARD_MAX];
    if (ufo_experience_board (kind, id, board, err) < 0)
        return NULL;
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_map_set_str (body, "memory", S_MEMORY);
    return body;
}

ufo_value_t *
ufo_experience_get_reply (const ufo_value_t *reply, const char *kind, const char *id, ufo_error_t *err)
{
    if (!ufo_value_map_bool (reply, "exists", false))
        return ufo_error_set (err, UFO_E_NOT_FOUND, "no %s record %s", kind, id), NULL;
    const ufo_value_t *items = ufo_value_path (reply, "board.requests");
    const ufo_value_t *record = ufo_value_map_get (ufo_value_list_at (items, 0), kind);
    if (ufo_experience_check (record, err) < 0)
        return NULL;
    ufo_value_t *out = ufo_value_dup (record);
    ufo_value_map_set_str (out, "id", id);
    return out;
}

ufo_value_t *
ufo_experience_boards (const ufo_value_t *reply, const char *kind)
{
    ufo_value_t *out = ufo_value_new_list ();
    const char *prefix = s_prefix (kind);
    size_t plen = prefix ? strlen (prefix) : 0;
    const ufo_value_t *boards = ufo_value_map_get (reply, "boards");
    for (size_t i = 0; prefix && i < ufo_value_size (boards); i++) {
        const ufo_value_t *b = ufo_value_list_at (boards, i);
        const char *name = ufo_value_map_str (b, "name", "");
        if (strncmp (name, prefix, plen) != 0)
            continue;
        ufo_value_t *e = ufo_value_new_map ();
        ufo_value_map_set_str (e, "id", name + plen);
        ufo_value_map_set_int (e, "last", ufo_value_map_int (b, "last", 0));
        ufo_value_list_push (out, &e);
    }
    return out;
}

int
ufo_experience_save (ufo_bb_client_t *bb, const char *kind, ufo_value_t **record_p, char *id_out,
                     ufo_error_t *err)
{
    ufo_value_t *body = ufo_experience_save_request (kind, record_p, id_out, err);
    ufo_value_t *reply = body ? ufo_bb_client_call (bb, "bb.add", &body, NULL, 0, NULL, NULL, err) : NULL;
    if (!reply)
        return -1;
    ufo_value_destroy (&reply);
    return 0;
}

ufo_value_t *
ufo_experience_get (ufo_bb_client_t *bb, const char *kind, const char *id, ufo_error_t *err)
{
    ufo_value_t *body = ufo_experience_get_request (kind, id, err);
    ufo_value_t *reply = body ? ufo_bb_client_call (bb, "bb.snapshot", &body, NULL, 0, NULL, NULL, err) : NULL;
    if (!reply)
        return NULL;
    ufo_value_t *out = ufo_experience_get_reply (reply, kind, id, err);
    ufo_value_destroy (&reply);
    return out;
}

ufo_value_t *
ufo_experience_list (ufo_bb_client_t *bb, const char *kind, ufo_error_t *err)
{
    if (!s_prefix (kind))
        return ufo_error_set (err, UFO_E_INVALID, "unknown record kind '%s'", kind ? kind : ""), NULL;
    ufo_value_t *reply = ufo_bb_client_call (bb, "bb.list", NULL, NULL, 0, NULL, NULL, err);
    if (!reply)
        return NULL;
    ufo_value_t *boards = ufo_experience_boards (reply, kind);
    ufo_value_destroy (&reply);
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (boards); i++) {
        const ufo_value_t *b = ufo_value_list_at (boards, i);
        const char *id = ufo_value_map_str (b, "id", "");
        ufo_error_t gerr = {0};
        ufo_value_t *record = ufo_experience_get (bb, kind, id, &gerr);
        if (!record) {
            if (ufo_experience_fatal (&gerr)) {
                if (err)
                    *err = gerr;
                ufo_value_destroy (&out);
                break;
            }
            ufo_warn ("knowledge: %s board %s%s skipped: %s", kind, s_prefix (kind), id, gerr.message);
            continue;
        }
        ufo_value_map_remove (record, "id");
        ufo_value_t *e = ufo_value_new_map ();
        ufo_value_map_set_str (e, "id", id);
        ufo_value_map_set (e, "record", &record);
        ufo_value_map_set_int (e, "last", ufo_value_map_int (b, "last", 0));
        ufo_value_list_push (out, &e);
    }
    ufo_value_destroy (&boards);
    return out;
}

bool
ufo_experience_fatal (const ufo_error_t *err)
{
    return err->code == UFO_E_TIMEOUT || err->code == UFO_E_UNAVAILABLE || err->code == UFO_E_IO
        || err->code == UFO_E_CANCELLED;
}

int
ufo_experience_delete (ufo_bb_client_t *bb, const char *kind, const char *id, ufo_error_t *err)
{
    char board [UFO_EXPERIENCE_BOARD_MAX];
    if (ufo_experience_board (kind, id, board, err) < 0)
        return -1;
    return ufo_bb_client_delete (bb, board, err);
}

ufo_value_t *
ufo_experience_sync_wanted (ufo_kb_t *kb, const ufo_value_t *boards)
{
    ufo_value_t *out = ufo_value_new_list ();
    for (size_t i = 0; i < ufo_value_size (boards); i++) {
        const ufo_value_t *e = ufo_value_list_at (boards, i);
        const char *id = ufo_value_map_str (e, "id", "");
        int64_t known = 0;
        if (!ufo_kb_source_get (kb, id, &known, NULL) || known != ufo_value_map_int (e, "last", 0))
            ufo_value_list_push_str (out, id);
    }
    return out;
}

int
ufo_experience_sync_apply (ufo_kb_t *kb, const char *kind, const ufo_value_t *boards,
                           const ufo_value_t *records, ufo_error_t *err)
{
    ufo_value_t *seen = ufo_value_new_map ();
    int rc = ufo_kb_begin (kb, err), count = 0;
    for (size_t i = 0; rc == 0 && i < ufo_value_size (boards); i++) {
        const ufo_value_t *e = ufo_value_list_at (boards, i);
        const char *id = ufo_value_map_str (e, "id", "");
        int64_t last = ufo_value_map_int (e, "last", 0), known = 0;
        if (ufo_kb_source_get (kb, id, &known, NULL) && known == last) {
            ufo_value_map_set_bool (seen, id, true);
            count++;
            continue;
        }
        const ufo_value_t *record = ufo_value_map_get (records, id);
        if (!record)
            continue;               //  not read (skipped): removed below if the index had it
        ufo_value_map_set_bool (seen, id, true);
        ufo_kb_source_remove (kb, id, NULL);
        ufo_value_t *copy = ufo_value_dup (record);
        ufo_value_map_remove (copy, "id");
        char *text = ufo_experience_text (copy);
        char *json = ufo_json_dump (copy, UFO_JSON_COMPACT, NULL);
        ufo_kb_passage_t p = { kind, "", id, ufo_value_map_str (copy, "request", ""), text, json };
        if (ufo_kb_add (kb, &p, err) < 0 || ufo_kb_source_set (kb, id, kind, "", last, 0, err) < 0)
            rc = -1;
        else
            count++;
        free (text);
        free (json);
        ufo_value_destroy (&copy);
    }
    if (rc == 0) {
        ufo_value_t *sources = ufo_kb_sources (kb, kind, NULL);
        for (size_t i = 0; i < ufo_value_size (sources); i++) {
            const char *id = ufo_value_str (ufo_value_list_at (sources, i));
            if (!ufo_value_map_has (seen, id))
                ufo_kb_source_remove (kb, id, NULL);
        }
        ufo_value_destroy (&sources);
        rc = ufo_kb_commit (kb, err);
    }
    else
        ufo_kb_commit (kb, NULL);
    ufo_value_destroy (&seen);
    return rc == 0 ? count : -1;
}

ufo_value_t *
ufo_experience_retrieve (ufo_kb_t *kb, const char *kind, const char *query, size_t topk,
                         size_t max_text)
{
    ufo_value_t *out = ufo_value_new_list ();
    ufo_error_t err = {0};
    ufo_value_t *hits = kb ? ufo_kb_search (kb, query, kind, NULL, topk, NULL, 0, &err) : NULL;
    for (size_t i = 0; i < ufo_value_size (hits); i++) {
        const ufo_value_t *hit = ufo_value_list_at (hits, i);
        ufo_value_t *record = ufo_json_parse_str (ufo_value_map_str (hit, "ref", ""), NULL);
        if (!record)
            continue;
        //  bounded: drop steps from the end of the last subtasks until it fits
        ufo_value_map_remove (record, "evaluation");
        size_t len = 0;
        free (ufo_json_dump (record, UFO_JSON_COMPACT, &len));
        ufo_value_t *subtasks = ufo_value_map_get (record, "subtasks");
        for (size_t s = ufo_value_size (subtasks); max_text && len > max_text && s > 0; ) {
            ufo_value_t *steps = ufo_value_map_get (ufo_value_list_at (subtasks, s - 1), "steps");
            if (ufo_value_size (steps) == 0) {
                s--;
                continue;
            }
            ufo_value_list_remove (steps, ufo_value_size (steps) - 1);
            free (ufo_json_dump (record, UFO_JSON_COMPACT, &len));
        }
        ufo_value_map_set_str (record, "id", ufo_value_map_str (hit, "source", ""));
        ufo_value_list_push (out, &record);
    }
    ufo_value_destroy (&hits);
    return out;
}
