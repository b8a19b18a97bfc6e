/*  fuzz_task_request.c - libFuzzer target for the dispatch request decoder
    (ufo_task_request_decode, docs/PROTOCOL.md section 3), the code that sees every byte a
    worker or submitter sends to the broker. Input: one envelope frame. Any input: no crash,
    no leak, an error with a code on failure; on success the request is consistent with its
    type (ids valid, service valid, status one of three, counts in range). */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_task_proto.h"
#include "ufo_value.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_task_request: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    ufo_task_request_t req;
    ufo_task_request_init (&req);
    ufo_error_t err;
    ufo_error_clear (&err);
    size_t max = size > 0 && (data [0] & 1) ? 64 : 1 << 20;     //  the size limit runs too
    bool claimed = ufo_task_proto_claims (data, size);
    int rc = ufo_task_request_decode (&req, data, size, max, &err);
    if (rc != 0) {
        FUZZ_REQUIRE (err.code != UFO_OK);
        FUZZ_REQUIRE (req.type == -1 && req.body == NULL && req.running == NULL);
        FUZZ_REQUIRE (memchr (req.id, 0, sizeof req.id));
    }
    else {
        FUZZ_REQUIRE (claimed);
        FUZZ_REQUIRE (req.type >= 0 && req.type < UFO_TASK_REQ_COUNT);
        FUZZ_REQUIRE (strcmp (req.type_name, ufo_task_req_name (req.type)) == 0);
        switch (req.type) {
            case UFO_TASK_REQ_WORKER_READY:
                FUZZ_REQUIRE (ufo_task_id_valid (req.worker));
                FUZZ_REQUIRE (ufo_task_service_valid (req.service, true));
                FUZZ_REQUIRE (req.capacity >= 1 && req.capacity <= 1024);
                FUZZ_REQUIRE (ufo_value_size (req.running) <= UFO_TASK_RUNNING_MAX);
                for (size_t i = 0; i < ufo_value_size (req.running); i++)
                    FUZZ_REQUIRE (ufo_task_id_valid (ufo_value_str (ufo_value_list_at (req.running, i))));
                break;
            case UFO_TASK_REQ_PROGRESS:
            case UFO_TASK_REQ_COMPLETE:
                FUZZ_REQUIRE (ufo_task_id_valid (req.worker) && ufo_task_id_valid (req.task));
                FUZZ_REQUIRE (req.attempt >= 1);
                FUZZ_REQUIRE (req.body != NULL);
                if (req.type == UFO_TASK_REQ_COMPLETE)
                    FUZZ_REQUIRE (strcmp (req.status, "done") == 0 || strcmp (req.status, "failed") == 0
                                  || strcmp (req.status, "cancelled") == 0);
                else
                    FUZZ_REQUIRE (req.n >= 1);
                break;
            case UFO_TASK_REQ_SUBMIT:
                FUZZ_REQUIRE (ufo_task_id_valid (req.client) && ufo_task_id_valid (req.task));
                FUZZ_REQUIRE (ufo_task_service_valid (req.service, false));
                FUZZ_REQUIRE (req.deadline_ms >= 0 && req.max_attempts >= 0 && req.max_attempts <= 1000);
                FUZZ_REQUIRE (!req.has_device || *req.device);
                break;
            default:
                break;
        }
    }
    ufo_task_request_reset (&req);
    ufo_task_request_reset (&req);
    return 0;
}
