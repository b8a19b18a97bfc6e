/*  ufo_task_proto.c - task dispatch protocol: request decoding and validation, topics. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_value.h"
#include "ufo_msg.h"
#include "ufo_task_proto.h"

static const char *s_req_names [UFO_TASK_REQ_COUNT] = {
    "worker.ready", "worker.heartbeat", "worker.leave", "task.progress", "task.complete",
    "client.hello", "task.submit", "task.input", "task.cancel", "task.fetch", "dispatch.state",
    "client.heartbeat"
};

const char *
ufo_task_req_name (int type)
{
    return type >= 0 && type < UFO_TASK_REQ_COUNT ? s_req_names [type] : NULL;
}

int
ufo_task_req_parse (const char *name)
{
    for (int i = 0; name && i < UFO_TASK_REQ_COUNT; i++)
        if (strcmp (name, s_req_names [i]) == 0)
            return i;
    return -1;
}

bool
ufo_task_proto_claims (const void *frame, size_t len)
{
    //  Routed by the decoded envelope type, so every integer and string form that
    //  docs/PROTOCOL.md 1.2 allows for the head is recognised (a version written as int8
    //  "d0 01" was once routed to the blackboard decoder by a byte-pattern check).
    ufo_msg_head_t head;
    size_t body_off;
    if (!frame || ufo_msg_decode_head (frame, len, NULL, &head, &body_off, NULL) != 0)
        return false;
    static const char *prefixes [] = { "task.", "worker.", "client.", "dispatch." };
    size_t n = strlen (head.type);
    for (size_t i = 0; i < UFO_ARRAY_SIZE (prefixes); i++) {
        size_t pl = strlen (prefixes [i]);
        if (n > pl && memcmp (head.type, prefixes [i], pl) == 0)
            return true;
    }
    return false;
}

static bool
s_charset_ok (const char *name, size_t max)
{
    size_t len = name ? strlen (name) : 0;
    if (len == 0 || len > max)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name [i];
        if (!(isalnum ((unsigned char) c) || c == '_' || c == '.' || c == ':' || c == '@' || c == '-'))
            return false;
    }
    return true;
}

bool
ufo_task_id_valid (const char *name)
{
    return s_charset_ok (name, UFO_TASK_ID_MAX);
}

bool
ufo_task_service_valid (const char *name, bool allow_wildcard)
{
    if (allow_wildcard && name && strcmp (name, "app:*") == 0)
        return true;
    return s_charset_ok (name, UFO_TASK_NAME_MAX);
}

bool
ufo_task_service_match (const char *worker_service, const char *task_service)
{
    if (strcmp (worker_service, task_service) == 0)
        return true;
    return strcmp (worker_service, "app:*") == 0 && strncmp (task_service, "app:", 4) == 0
        && task_service [4] != 0;
}

void
ufo_task_request_init (ufo_task_request_t *req)
{
    memset (req, 0, sizeof *req);
    req->type = -1;
}

void
ufo_task_request_reset (ufo_task_request_t *req)
{
    ufo_value_destroy (&req->body);
    ufo_value_destroy (&req->running);
    ufo_task_request_init (req);
}

//  --- Field readers: each returns 0 or -1 with err naming the field ---------------------

static int
s_str (const ufo_value_t *body, const char *key, char *out, size_t size, bool required,
       ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        out [0] = 0;
        return required ? ufo_error_set (err, UFO_E_MISSING, "field '%s' is required", key) : 0;
    }
    if (ufo_value_type (v) != UFO_TSTRING)
        return ufo_error_set (err, UFO_E_TYPE, "field '%s' must be a string, found %s", key,
                              ufo_value_type_name (ufo_value_type (v)));
    size_t len = ufo_value_strlen (v);
    if (len >= size)
        return ufo_error_set (err, UFO_E_RANGE, "field '%s' is longer than %zu bytes", key, size - 1);
    if (memchr (ufo_value_str (v), 0, len))
        return ufo_error_set (err, UFO_E_INVALID, "field '%s' contains a NUL byte", key);
    memcpy (out, ufo_value_str (v), len + 1);
    return 0;
}

static int
s_int (const ufo_value_t *body, const char *key, int64_t min, int64_t max, int64_t dflt,
       int64_t *out, bool required, ufo_error_t *err)
{
    const ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v || ufo_value_type (v) == UFO_TNULL) {
        *out = dflt;
        return required ? ufo_error_set (err, UFO_E_MISSING, "field '%s' is required", key) : 0;
    }
    if (ufo_value_type (v) != UFO_TINT)
        return ufo_error_set (err, UFO_E_TYPE, "field '%s' must be an int, found %s", key,
                              ufo_value_type_name (ufo_value_type (v)));
    int64_t i = ufo_value_int (v);
    if (i < min || i > max)
        return ufo_error_set (err, UFO_E_RANGE, "field '%s' = %" PRId64 " is outside %" PRId64 "..%" PRId64,
                              key, i, min, max);
    *out = i;
    return 0;
}

static int
s_id (const ufo_value_t *body, const char *key, char *out, ufo_error_t *err)
{
    if (s_str (body, key, out, UFO_TASK_ID_MAX + 1, true, err) != 0)
        return -1;
    if (!ufo_task_id_valid (out))
        return ufo_error_set (err, UFO_E_INVALID, "field '%s' must be 1..%d bytes of [A-Za-z0-9_.:@-]",
                              key, UFO_TASK_ID_MAX);
    return 0;
}

//  Takes a value out of the body (so the request owns it without copying).
static ufo_value_t *
s_take (ufo_value_t *body, const char *key)
{
    ufo_value_t *v = ufo_value_map_get (body, key);
    if (!v)
        return ufo_value_new_null ();
    //  Swap it for a null and hand out the original.
    ufo_value_t *null = ufo_value_new_null ();
    ufo_value_t *copy = ufo_value_dup (v);
    ufo_value_map_set (body, key, &null);
    return copy;
}

//  The optional "running" list of worker.ready / worker.heartbeat.
static int
s_running (ufo_task_request_t *req, const ufo_value_t *body, ufo_error_t *err)
{
    const ufo_value_t *running = ufo_value_map_get (body, "running");
    if (!running || ufo_value_type (running) == UFO_TNULL) {
        req->running = ufo_value_new_list ();
        return 0;
    }
    if (ufo_value_type (running) != UFO_TLIST)
        return ufo_error_set (err, UFO_E_TYPE, "field 'running' must be a list of task ids");
    if (ufo_value_size (running) > UFO_TASK_RUNNING_MAX)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "field 'running' lists more than %d tasks",
                              UFO_TASK_RUNNING_MAX);
    for (size_t i = 0; i < ufo_value_size (running); i++)
        if (!ufo_task_id_valid (ufo_value_str (ufo_value_list_at (running, i))))
            return ufo_error_set (err, UFO_E_INVALID, "field 'running': item %zu is not a task id", i);
    req->running = ufo_value_dup (running);
    return 0;
}

static int
s_decode_body (ufo_task_request_t *req, ufo_value_t *body, ufo_error_t *err)
{
    switch (req->type) {
        case UFO_TASK_REQ_WORKER_READY: {
            if (s_id (body, "worker", req->worker, err) != 0
            ||  s_str (body, "service", req->service, sizeof req->service, true, err) != 0
            ||  s_str (body, "device", req->device, sizeof req->device, false, err) != 0
            ||  s_str (body, "name", req->name, sizeof req->name, false, err) != 0
            ||  s_int (body, "capacity", 1, 1024, 1, &req->capacity, false, err) != 0
            ||  s_int (body, "heartbeat_ivl_ms", 0, 600000, 0, &req->heartbeat_ivl_ms, false, err) != 0
            ||  s_int (body, "heartbeat_liveness", 0, 1000, 0, &req->heartbeat_liveness, false, err) != 0)
                return -1;
            if (!ufo_task_service_valid (req->service, true))
                return ufo_error_set (err, UFO_E_INVALID, "field 'service' must be 1..128 bytes of "
                                      "[A-Za-z0-9_.:@-], or \"app:*\"");
            req->has_device = req->device [0] != 0;
            return s_running (req, body, err);
        }
        case UFO_TASK_REQ_WORKER_HEARTBEAT:
            if (s_id (body, "worker", req->worker, err) != 0)
                return -1;
            return s_running (req, body, err);
        case UFO_TASK_REQ_WORKER_LEAVE:
            return s_id (body, "worker", req->worker, err);
        case UFO_TASK_REQ_CLIENT_HEARTBEAT:
            return s_id (body, "client", req->client, err);
        case UFO_TASK_REQ_PROGRESS:
        case UFO_TASK_REQ_COMPLETE:
            if (s_id (body, "worker", req->worker, err) != 0
            ||  s_id (body, "task", req->task, err) != 0
            ||  s_int (body, "attempt", 1, INT32_MAX, 0, &req->attempt, true, err) != 0)
                return -1;
            if (req->type == UFO_TASK_REQ_PROGRESS) {
                if (s_int (body, "n", 1, INT64_MAX, 0, &req->n, true, err) != 0)
                    return -1;
                req->body = s_take (body, "body");
                return 0;
            }
            if (s_str (body, "status", req->status, sizeof req->status, true, err) != 0)
                return -1;
            if (strcmp (req->status, "done") != 0 && strcmp (req->status, "failed") != 0
            &&  strcmp (req->status, "cancelled") != 0)
                return ufo_error_set (err, UFO_E_INVALID, "field 'status' must be done, failed or cancelled");
            req->body = s_take (body, "result");
            return 0;
        case UFO_TASK_REQ_CLIENT_HELLO:
            if (s_id (body, "client", req->client, err) != 0
            ||  s_str (body, "name", req->name, sizeof req->name, false, err) != 0
            ||  s_int (body, "heartbeat_ivl_ms", 0, 600000, 0, &req->heartbeat_ivl_ms, false, err) != 0
            ||  s_int (body, "heartbeat_liveness", 0, 1000, 0, &req->heartbeat_liveness, false, err) != 0)
                return -1;
            return 0;
        case UFO_TASK_REQ_SUBMIT:
            if (s_id (body, "client", req->client, err) != 0
            ||  s_id (body, "task", req->task, err) != 0
            ||  s_str (body, "service", req->service, sizeof req->service, true, err) != 0
            ||  s_str (body, "device", req->device, sizeof req->device, false, err) != 0
            ||  s_str (body, "session", req->session, sizeof req->session, false, err) != 0
            ||  s_str (body, "name", req->name, sizeof req->name, false, err) != 0
            ||  s_str (body, "idempotency_key", req->idem, sizeof req->idem, false, err) != 0
            ||  s_int (body, "deadline_ms", 0, 366LL * 86400 * 1000, 0, &req->deadline_ms, false, err) != 0
            ||  s_int (body, "max_attempts", 0, 1000, 0, &req->max_attempts, false, err) != 0)
                return -1;
            if (!ufo_task_service_valid (req->service, false))
                return ufo_error_set (err, UFO_E_INVALID, "field 'service' must be 1..128 bytes of [A-Za-z0-9_.:@-]");
            req->has_device = req->device [0] != 0;
            req->has_idem = req->idem [0] != 0;
            req->body = s_take (body, "body");
            return 0;
        case UFO_TASK_REQ_INPUT:
            if (s_id (body, "client", req->client, err) != 0
            ||  s_id (body, "task", req->task, err) != 0)
                return -1;
            req->body = s_take (body, "body");
            return 0;
        case UFO_TASK_REQ_CANCEL:
            if (s_id (body, "client", req->client, err) != 0
            ||  s_id (body, "task", req->task, err) != 0)
                return -1;
            return 0;
        case UFO_TASK_REQ_FETCH:
            return s_id (body, "task", req->task, err);
        case UFO_TASK_REQ_STATE:
            return 0;
        default:
            return ufo_error_set (err, UFO_E_INTERNAL, "unhandled request type");
    }
}

int
ufo_task_request_decode (ufo_task_request_t *req, const void *frame, size_t len,
                         size_t max_bytes, ufo_error_t *err)
{
    ufo_task_request_reset (req);
    if (len > max_bytes)
        return ufo_error_set (err, UFO_E_TOO_LARGE, "request of %zu bytes exceeds %zu", len, max_bytes);
    ufo_msg_limits_t limits = { max_bytes, 32 };
    ufo_msg_t *msg = ufo_msg_decode (frame, len, &limits, err);
    if (!msg)
        return -1;
    snprintf (req->id, sizeof req->id, "%s", ufo_msg_id (msg));
    snprintf (req->sender, sizeof req->sender, "%s", ufo_msg_sender (msg));
    snprintf (req->type_name, sizeof req->type_name, "%s", ufo_msg_type (msg));
    int type = ufo_task_req_parse (ufo_msg_type (msg));
    int rc = 0;
    ufo_value_t *body = ufo_msg_take_body (msg);
    if (type < 0)
        rc = ufo_error_set (err, UFO_E_INVALID, "unknown request type '%s'", req->type_name);
    else
    if (type == UFO_TASK_REQ_STATE && ufo_value_type (body) == UFO_TNULL)
        ;
    else
    if (ufo_value_type (body) != UFO_TMAP)
        rc = ufo_error_set (err, UFO_E_TYPE, "body of %s must be a map, found %s", req->type_name,
                            ufo_value_type_name (ufo_value_type (body)));
    else {
        req->type = type;
        rc = s_decode_body (req, body, err);
    }
    ufo_value_destroy (&body);
    ufo_msg_destroy (&msg);
    if (rc != 0) {
        char id [65];
        memcpy (id, req->id, sizeof id);
        char name [65];
        memcpy (name, req->type_name, sizeof name);
        ufo_task_request_reset (req);
        memcpy (req->id, id, sizeof id);
        memcpy (req->type_name, name, sizeof name);
        return -1;
    }
    req->type = type;
    return 0;
}

size_t
ufo_task_topic (char *out, size_t size, const char *kind, const char *service)
{
    int n = snprintf (out, size, "dispatch/%s/%s", kind, service);
    return n < 0 ? 0 : (size_t) n < size ? (size_t) n : size - 1;
}
