/*  test_task_proto.c - the dispatch request decoder (ufo_task_proto): valid requests of every
    type, and the errors for bad ones (docs/PROTOCOL.md section 3.3). */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msg.h"
#include "ufo_task_proto.h"
#include "ufo_value.h"
#include "ufo_test.h"

//  Encodes an envelope of type with a JSON body; returns the frame in buf.
static void
s_frame (ufo_buf_t *buf, const char *type, const char *json)
{
    ufo_error_t err;
    ufo_value_t *body = json ? ufo_json_parse (json, strlen (json), NULL, &err) : ufo_value_new_null ();
    ufo_msg_t *msg = ufo_msg_new (type);
    ufo_msg_set_id (msg, "r1");
    ufo_msg_set_body (msg, &body);
    ufo_buf_reset (buf);
    ufo_msg_encode (msg, buf);
    ufo_msg_destroy (&msg);
}

static int
s_decode (ufo_task_request_t *req, const char *type, const char *json, ufo_error_t *err)
{
    ufo_buf_t buf = { 0 };
    s_frame (&buf, type, json);
    int rc = ufo_task_request_decode (req, buf.data, buf.len, 1 << 20, err);
    ufo_buf_free (&buf);
    return rc;
}

UFO_TEST (test_valid_requests)
{
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    CHECK_INT (s_decode (&req, "worker.ready", "{\"worker\":\"w1\",\"service\":\"app:*\",\"device\":\"d1\","
                         "\"capacity\":4,\"running\":[\"t1\",\"t2\"]}", &err), 0);
    CHECK_INT (req.type, UFO_TASK_REQ_WORKER_READY);
    CHECK_STR (req.worker, "w1");
    CHECK_STR (req.service, "app:*");
    CHECK (req.has_device);
    CHECK_INT (req.capacity, 4);
    CHECK_INT (ufo_value_size (req.running), 2);
    CHECK_STR (req.id, "r1");
    CHECK_INT (s_decode (&req, "task.submit", "{\"client\":\"c\",\"task\":\"t\",\"service\":\"host\","
                         "\"idempotency_key\":\"k\",\"body\":{\"requests\":[\"x\"]}}", &err), 0);
    CHECK_INT (req.type, UFO_TASK_REQ_SUBMIT);
    CHECK (req.has_idem && !req.has_device);
    CHECK_INT (req.max_attempts, 0);
    CHECK_STR (ufo_value_str (ufo_value_path (req.body, "requests.0")), "x");
    CHECK_INT (s_decode (&req, "task.complete", "{\"worker\":\"w\",\"task\":\"t\",\"attempt\":2,"
                         "\"status\":\"cancelled\",\"result\":null}", &err), 0);
    CHECK_STR (req.status, "cancelled");
    CHECK_INT (req.attempt, 2);
    CHECK_INT (s_decode (&req, "dispatch.state", NULL, &err), 0);
    CHECK_INT (req.type, UFO_TASK_REQ_STATE);
    ufo_task_request_reset (&req);
    ufo_task_request_reset (&req);
}

UFO_TEST (test_bad_requests)
{
    static const struct { const char *type, *json; int code; } cases [] = {
        { "task.nonsense", "{}", UFO_E_INVALID },
        { "worker.ready", "[]", UFO_E_TYPE },
        { "worker.ready", "{\"service\":\"eval\"}", UFO_E_MISSING },
        { "worker.ready", "{\"worker\":\"w\",\"service\":\"ev al\"}", UFO_E_INVALID },
        { "worker.ready", "{\"worker\":\"w\",\"service\":\"*\"}", UFO_E_INVALID },
        { "worker.ready", "{\"worker\":\"w\",\"service\":\"eval\",\"capacity\":2000}", UFO_E_RANGE },
        { "worker.ready", "{\"worker\":\"w\",\"service\":\"eval\",\"capacity\":1.5}", UFO_E_TYPE },
        { "worker.heartbeat", "{\"worker\":\"w\",\"running\":\"t\"}", UFO_E_TYPE },
        { "task.submit", "{\"client\":\"c\",\"task\":\"t\",\"service\":\"app:*\"}", UFO_E_INVALID },
        { "task.submit", "{\"client\":\"c\",\"task\":\"a/b\",\"service\":\"x\"}", UFO_E_INVALID },
        { "task.submit", "{\"client\":\"c\",\"task\":\"t\",\"service\":\"x\",\"max_attempts\":5000}", UFO_E_RANGE },
        { "task.progress", "{\"worker\":\"w\",\"task\":\"t\",\"attempt\":1}", UFO_E_MISSING },
        { "task.complete", "{\"worker\":\"w\",\"task\":\"t\",\"attempt\":0,\"status\":\"done\"}", UFO_E_RANGE },
        { "task.complete", "{\"worker\":\"w\",\"task\":\"t\",\"attempt\":1,\"status\":\"ok\"}", UFO_E_INVALID },
        { "task.fetch", "{\"task\":5}", UFO_E_TYPE },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_task_request_t req;
        ufo_task_request_init (&req);
        ufo_error_t err;
        ufo_error_clear (&err);
        int rc = s_decode (&req, cases [i].type, cases [i].json, &err);
        if (rc != -1 || err.code != cases [i].code)
            fprintf (stderr, "  case %zu (%s %s): rc %d, %s: %s\n", i, cases [i].type, cases [i].json, rc,
                     ufo_errcode_name (err.code), err.message);
        CHECK_INT (rc, -1);
        CHECK_INT (err.code, cases [i].code);
        CHECK_STR (req.id, "r1");           //  the reply can still be correlated
        CHECK (req.body == NULL && req.running == NULL);
        ufo_task_request_reset (&req);
    }
    //  frames that are not envelopes, and the size limit
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    CHECK_INT (ufo_task_request_decode (&req, "\x97\x01", 2, 1 << 20, &err), -1);
    CHECK_INT (err.code, UFO_E_TRUNCATED);
    ufo_buf_t buf = { 0 };
    s_frame (&buf, "task.fetch", "{\"task\":\"t\"}");
    CHECK_INT (ufo_task_request_decode (&req, buf.data, buf.len, 8, &err), -1);
    CHECK_INT (err.code, UFO_E_TOO_LARGE);
    ufo_buf_free (&buf);
}

UFO_TEST (test_claims_and_matching)
{
    ufo_buf_t buf = { 0 };
    s_frame (&buf, "task.submit", "{}");
    CHECK (ufo_task_proto_claims (buf.data, buf.len));
    s_frame (&buf, "dispatch.state", "{}");
    CHECK (ufo_task_proto_claims (buf.data, buf.len));
    s_frame (&buf, "bb.add", "{}");
    CHECK (!ufo_task_proto_claims (buf.data, buf.len));
    s_frame (&buf, "task.", "{}");
    CHECK (!ufo_task_proto_claims (buf.data, buf.len));     //  a prefix alone is no type
    CHECK (!ufo_task_proto_claims ("", 0));
    ufo_buf_free (&buf);
    //  Every integer form of the version is a dispatch request too (PROTOCOL.md 1.2): the
    //  version as int8 (d0 01) and as uint16 (cd 00 01), the type as str8 (d9 0e).
    static const uint8_t int8_version [] = {
        0x97, 0xd0, 0x01, 0xae, 'd', 'i', 's', 'p', 'a', 't', 'c', 'h', '.', 's', 't', 'a', 't', 'e',
        0xa1, 'x', 0xa0, 0xa0, 0x00, 0xc0 };
    CHECK (ufo_task_proto_claims (int8_version, sizeof int8_version));
    static const uint8_t uint16_version_str8 [] = {
        0x97, 0xcd, 0x00, 0x01, 0xd9, 0x0b, 't', 'a', 's', 'k', '.', 's', 'u', 'b', 'm', 'i', 't',
        0xa1, 'x', 0xa0, 0xa0, 0x00, 0x80 };
    CHECK (ufo_task_proto_claims (uint16_version_str8, sizeof uint16_version_str8));
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    CHECK_INT (ufo_task_request_decode (&req, int8_version, sizeof int8_version, 1 << 20, &err), 0);
    CHECK_INT (req.type, UFO_TASK_REQ_STATE);
    ufo_task_request_reset (&req);
    CHECK (ufo_task_service_match ("app:*", "app:word"));
    CHECK (!ufo_task_service_match ("app:*", "app:"));
    CHECK (!ufo_task_service_match ("app:*", "eval"));
    CHECK (ufo_task_service_match ("eval", "eval"));
    CHECK (!ufo_task_service_match ("app:word", "app:excel"));
    char topic [64];
    ufo_task_topic (topic, sizeof topic, "task", "app:word");
    CHECK_STR (topic, "dispatch/task/app:word");
}

int
main (void)
{
    UFO_RUN (test_valid_requests);
    UFO_RUN (test_bad_requests);
    UFO_RUN (test_claims_and_matching);
    return UFO_TEST_END ();
}
