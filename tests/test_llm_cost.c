/*  test_llm_cost.c - prices, cost arithmetic and the accumulator. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_cost.h"
#include "ufo_test.h"

static bool
s_near (double a, double b)
{
    return fabs (a - b) < 1e-12;
}

UFO_TEST (test_arithmetic)
{
    const char *text = "{\"openai/gpt-4o\": {\"input\": 0.0025, \"output\": 0.01},"
                       " \"azure/gpt-4o\": {\"input\": 0.005, \"output\": 0.015},"
                       " \"ollama/llama3\": {\"input\": 0, \"output\": 0}}";
    ufo_error_t err;
    ufo_prices_t *p = ufo_prices_parse (text, strlen (text), &err);
    REQUIRE (p);
    CHECK_INT (ufo_prices_size (p), 3);
    bool known = false;
    //  1200 * 0.0025 / 1000 + 300 * 0.01 / 1000 = 0.003 + 0.003
    CHECK (s_near (ufo_prices_cost (p, "openai", "gpt-4o", 1200, 300, &known), 0.006));
    CHECK (known);
    CHECK (s_near (ufo_prices_cost (p, ufo_prices_provider ("aoai"), "gpt-4o", 1000, 1000, &known), 0.02));
    CHECK (s_near (ufo_prices_cost (p, "ollama", "llama3", 5000, 5000, &known), 0.0));
    CHECK (known);
    CHECK (s_near (ufo_prices_cost (p, "openai", "gpt-9", 1000, 1000, &known), 0.0));
    CHECK (!known);
    CHECK (s_near (ufo_prices_cost (p, "openai", "gpt-4o", -5, 0, NULL), 0.0));
    ufo_prices_destroy (&p);
    ufo_prices_destroy (&p);
    CHECK (p == NULL);
}

UFO_TEST (test_unknown_warns_once)
{
    char path [] = "/tmp/ufo-cost-log-XXXXXX";
    int fd = mkstemp (path);
    REQUIRE (fd >= 0);
    FILE *f = fdopen (fd, "w+");
    ufo_log_set_stream (f);
    ufo_prices_t *p = ufo_prices_new ();
    for (int i = 0; i < 5; i++)
        ufo_prices_cost (p, "openai", "mystery", 10, 10, NULL);
    ufo_prices_cost (p, "openai", "other", 10, 10, NULL);
    ufo_log_set_stream (NULL);
    fflush (f);
    rewind (f);
    char line [512];
    int mystery = 0, other = 0;
    while (fgets (line, sizeof line, f)) {
        if (strstr (line, "openai/mystery"))
            mystery++;
        if (strstr (line, "openai/other"))
            other++;
    }
    CHECK_INT (mystery, 1);
    CHECK_INT (other, 1);
    fclose (f);
    unlink (path);
    ufo_prices_destroy (&p);
}

UFO_TEST (test_bad_tables)
{
    const char *bad [] = {
        "[]", "{\"a/b\": 3}", "{\"a/b\": {\"input\": 1}}", "{\"a/b\": {\"input\": -1, \"output\": 1}}",
        "{\"a/b\": {\"input\": \"1\", \"output\": 1}}", "{not json",
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        ufo_error_t err;
        ufo_prices_t *p = ufo_prices_parse (bad [i], strlen (bad [i]), &err);
        CHECK (p == NULL);
        CHECK (err.code != UFO_OK);
    }
    ufo_error_t err;
    CHECK (ufo_prices_load ("/nonexistent/prices.json", &err) == NULL);
}

UFO_TEST (test_shipped_prices)
{
    char path [1024];
    snprintf (path, sizeof path, "%s/config/prices.json", getenv ("UFO_SOURCE_DIR") ? getenv ("UFO_SOURCE_DIR") : "..");
    ufo_error_t err;
    ufo_prices_t *p = ufo_prices_load (path, &err);
    if (!p)
        fprintf (stderr, "%s\n", err.message);
    REQUIRE (p);
    CHECK (ufo_prices_size (p) >= 5);
    bool known = false;
    CHECK (ufo_prices_cost (p, "openai", "gpt-4o", 1000, 1000, &known) > 0);
    CHECK (known);
    ufo_prices_destroy (&p);
}

UFO_TEST (test_accumulator)
{
    ufo_cost_t c;
    memset (&c, 0, sizeof c);
    ufo_cost_add (&c, 0.5, 100, 10);
    ufo_cost_add (&c, 0.25, 50, 5);
    CHECK (s_near (c.step, 0.75));
    ufo_cost_next_step (&c);
    ufo_cost_add (&c, 1.0, 10, 1);
    CHECK (s_near (c.step, 1.0));
    CHECK (s_near (c.round, 1.75));
    ufo_cost_next_round (&c);
    CHECK (s_near (c.round, 0));
    CHECK (s_near (c.step, 0));
    ufo_cost_add (&c, 0.125, 1, 1);
    CHECK (s_near (c.session, 1.875));
    CHECK_INT (c.session_prompt_tokens, 161);
    CHECK_INT (c.session_completion_tokens, 17);
    CHECK_INT (c.round_prompt_tokens, 1);
    CHECK_INT (c.calls, 4);
    ufo_value_t *v = ufo_cost_to_value (&c);
    CHECK (s_near (ufo_value_map_float (v, "session", 0), 1.875));
    CHECK_INT (ufo_value_map_int (v, "calls", 0), 4);
    ufo_value_destroy (&v);
}

int
main (void)
{
    UFO_RUN (test_arithmetic);
    UFO_RUN (test_unknown_warns_once);
    UFO_RUN (test_bad_tables);
    UFO_RUN (test_shipped_prices);
    UFO_RUN (test_accumulator);
    return UFO_TEST_END ();
}
