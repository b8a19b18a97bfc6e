/*  test_outcome.c - step and session outcomes (common/report/ufo_outcome.h): which steps failed and
    why, the session status word, completed, and the one-line disagreement between the agents'
    status and the evaluation; input of any shape (not a map, wrong types) is handled. */
#include "ufo_prelude.h"
#include "ufo_json.h"
#include "ufo_outcome.h"
#include "ufo_value.h"
#include "ufo_test.h"

static ufo_value_t *
s_json (const char *text)
{
    ufo_value_t *v = ufo_json_parse_str (text, NULL);
    assert (v);
    return v;
}

UFO_TEST (test_step_failed)
{
    static const struct { const char *record; bool failed; const char *why; } cases [] = {
        { "{\"Status\": \"CONTINUE\", \"ActionSuccess\": [{\"success\": true, \"error\": \"\"}], \"error\": \"\"}",
          false, NULL },
        { "{\"Status\": \"FINISH\", \"ActionSuccess\": []}", false, NULL },
        //  a refused launcher: the action's own error
        { "{\"Status\": \"CONTINUE\", \"ActionSuccess\": [{\"success\": false, \"error\": \"launcher 'x' is not "
          "in desktop.launchers\"}], \"error\": \"\"}", true, "launcher 'x' is not in desktop.launchers" },
        //  the step's error names the cause best
        { "{\"Status\": \"ERROR\", \"ActionSuccess\": [{\"success\": false, \"error\": \"a\"}], \"error\": \"llm: b\"}",
          true, "llm: b" },
        //  ERROR with no reason anywhere (and an older log that said success)
        { "{\"Status\": \"ERROR\", \"ActionSuccess\": [{\"success\": true}]}", true, "failed" },
        { "{\"Status\": \"CONTINUE\", \"error\": \"desktop: gone\"}", true, "desktop: gone" },
        //  shapes that are not what a log holds
        { "{\"ActionSuccess\": 7, \"error\": 3}", false, NULL },
        { "{\"ActionSuccess\": [1, \"x\", null]}", false, NULL },
        { "[1, 2]", false, NULL },
        { "\"text\"", false, NULL },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        ufo_value_t *record = s_json (cases [i].record);
        const char *why = NULL;
        bool failed = ufo_outcome_step_failed (record, &why);
        if (failed != cases [i].failed)
            UFO_FAIL_ ("case %zu: failed %d, expected %d", i, failed, cases [i].failed);
        if (cases [i].why)
            CHECK_STR (why, cases [i].why);
        else
            CHECK (why == NULL);
        CHECK (ufo_outcome_step_failed (record, NULL) == failed);
        ufo_value_destroy (&record);
    }
    CHECK (!ufo_outcome_step_failed (NULL, NULL));
}

UFO_TEST (test_session_status_and_completed)
{
    ufo_value_t *finish = s_json ("{\"status\": \"FINISH\", \"evaluation\": {\"complete\": \"yes\"}}");
    ufo_value_t *unsure = s_json ("{\"status\": \"FINISH\", \"evaluation\": {\"complete\": \"unsure\"}}");
    ufo_value_t *no_eval = s_json ("{\"status\": \"FINISH\", \"evaluation\": null}");
    ufo_value_t *judged_no = s_json ("{\"status\": \"FINISH\", \"evaluation\": {\"complete\": \"no\"}}");
    ufo_value_t *error = s_json ("{\"status\": \"ERROR\", \"error\": \"x\", \"evaluation\": null}");
    ufo_value_t *fail_yes = s_json ("{\"status\": \"FAIL\", \"evaluation\": {\"complete\": \"yes\"}}");
    ufo_value_t *odd = s_json ("{\"status\": 5}");
    CHECK_STR (ufo_outcome_session_status (finish, "done"), "FINISH");
    CHECK_STR (ufo_outcome_session_status (error, "done"), "ERROR");
    CHECK_STR (ufo_outcome_session_status (NULL, "failed"), "ERROR");
    CHECK_STR (ufo_outcome_session_status (NULL, "cancelled"), "CANCELLED");
    CHECK_STR (ufo_outcome_session_status (NULL, NULL), "ERROR");
    CHECK_STR (ufo_outcome_session_status (odd, "done"), "ERROR");
    CHECK (ufo_outcome_completed (finish));
    CHECK (ufo_outcome_completed (unsure));
    CHECK (ufo_outcome_completed (no_eval));
    CHECK (!ufo_outcome_completed (judged_no));
    CHECK (!ufo_outcome_completed (error));
    CHECK (!ufo_outcome_completed (fail_yes));
    CHECK (!ufo_outcome_completed (NULL));
    char line [160] = "untouched";
    CHECK (ufo_outcome_disagreement (finish, line, sizeof line) == NULL);
    CHECK (ufo_outcome_disagreement (unsure, line, sizeof line) == NULL);
    CHECK (ufo_outcome_disagreement (no_eval, line, sizeof line) == NULL);
    CHECK (ufo_outcome_disagreement (error, line, sizeof line) == NULL);
    CHECK_STR (line, "untouched");
    CHECK (ufo_outcome_disagreement (judged_no, line, sizeof line) == line);
    CHECK_STR (line, "the agents said FINISH, but the evaluation found the request not completed");
    CHECK (ufo_outcome_disagreement (fail_yes, line, sizeof line) == line);
    CHECK_STR (line, "the agents ended with FAIL, but the evaluation found the request completed");
    char small [8];
    CHECK (ufo_outcome_disagreement (judged_no, small, sizeof small) == small);
    CHECK_INT (strlen (small), 7);              //  cut, terminated
    ufo_value_destroy (&finish);
    ufo_value_destroy (&unsure);
    ufo_value_destroy (&no_eval);
    ufo_value_destroy (&judged_no);
    ufo_value_destroy (&error);
    ufo_value_destroy (&fail_yes);
    ufo_value_destroy (&odd);
}

int
main (void)
{
    UFO_RUN (test_step_failed);
    UFO_RUN (test_session_status_and_completed);
    return UFO_TEST_END ();
}
