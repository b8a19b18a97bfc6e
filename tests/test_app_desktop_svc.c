/*  test_app_desktop_svc.c - the desktop query service (ufo-app --desktop-service, app_agent/app_desktop_svc.c,
    docs/PROTOCOL.md 4.5): bodies it cannot use are refused with a clear error before the
    desktop is touched (this test has none: the desktop pointer is NULL, so a body that got
    through to it would crash the test). The queries themselves, on real desktops of remote
    devices, are tested by tests/netns/test_netns_mcp.sh. Also the confirmation policy's
    pattern match (common/config/ufo_policy.h). The source is compiled in, so this also runs
    in the sanitizer tree. */
#include "ufo_prelude.h"
#include "ufo_json.h"
#include "ufo_policy.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "app_ctx.h"
#include "app_desktop_svc.h"

//  Handles body_json (NULL: a NULL body) and checks that it failed with an error containing want.
static void
s_refused (app_ctx_t *ctx, const char *body_json, const char *want)
{
    ufo_value_t *body = body_json ? ufo_json_parse_str (body_json, NULL) : NULL;
    REQUIRE (!body_json || body);
    const char *status = NULL;
    void *png = (void *) 1;
    size_t len = 1;
    ufo_value_t *r = app_desktop_svc_handle (ctx, body, &status, &png, &len);
    REQUIRE (r);
    CHECK_STR (status, "failed");
    CHECK (png == NULL && len == 0);
    CHECK_CONTAINS (ufo_value_map_str (r, "error", ""), want);
    CHECK (strlen (ufo_value_map_str (r, "error", "")) < 600);
    ufo_value_destroy (&r);
    ufo_value_destroy (&body);
}

UFO_TEST (test_bad_bodies)
{
    app_ctx_t ctx;
    memset (&ctx, 0, sizeof ctx);
    ctx.device = "dev-t";
    ctx.png_level = 1;
    s_refused (&ctx, NULL, "a desktop query is a map");
    s_refused (&ctx, "[\"windows\"]", "a desktop query is a map");
    s_refused (&ctx, "\"screenshot\"", "a desktop query is a map");
    s_refused (&ctx, "{}", "unknown desktop query \"\"");
    s_refused (&ctx, "{\"op\": 7}", "unknown desktop query");
    s_refused (&ctx, "{\"op\": \"rm -rf\"}", "unknown desktop query \"rm -rf\" (\"windows\" or \"screenshot\")");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"xid\": \"12\"}", "\"xid\" must be an integer");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"xid\": 1.5}", "\"xid\" must be an integer");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"xid\": [1]}", "\"xid\" must be an integer");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"xid\": -3}", "\"xid\" must not be negative");
    //  the PNG's ttl_ms in the broker's blob store (PROTOCOL.md 2.3): an integer, 1 s .. 7 days
    s_refused (&ctx, "{\"op\": \"screenshot\", \"ttl_ms\": \"30000\"}", "\"ttl_ms\" must be an integer");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"ttl_ms\": 30000.5}", "\"ttl_ms\" must be an integer");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"ttl_ms\": 0}", "1000 .. 604800000");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"ttl_ms\": -1}", "1000 .. 604800000");
    s_refused (&ctx, "{\"op\": \"screenshot\", \"ttl_ms\": 604800001}", "1000 .. 604800000");
    //  a huge op name is cut in the message, not copied whole
    char big [20000];
    memcpy (big, "{\"op\": \"", 8);
    memset (big + 8, 'x', sizeof big - 20);
    snprintf (big + sizeof big - 12, 12, "\"}");
    s_refused (&ctx, big, "unknown desktop query \"xxxx");
}

UFO_TEST (test_policy_match)
{
    ufo_value_t *list = ufo_json_parse_str ("[7, \"\", null, \"files.*\", \"Delete*\"]", NULL);
    REQUIRE (list);
    CHECK_STR (ufo_policy_match (list, "files.write_file") ?: "", "files.*");
    CHECK_STR (ufo_policy_match (list, "FILES.read") ?: "", "files.*");      //  any case
    CHECK_STR (ufo_policy_match (list, "delete all") ?: "", "Delete*");
    CHECK (!ufo_policy_match (list, "notes.add"));
    CHECK (!ufo_policy_match (list, ""));                                    //  "" patterns never match
    CHECK (!ufo_policy_match (list, NULL));
    CHECK (!ufo_policy_match (NULL, "files.x"));
    ufo_value_t *map = ufo_json_parse_str ("{\"a\": \"*\"}", NULL);
    CHECK (!ufo_policy_match (map, "anything"));                            //  not a list
    ufo_value_destroy (&map);
    ufo_value_destroy (&list);
}

int
main (void)
{
    UFO_RUN (test_bad_bodies);
    UFO_RUN (test_policy_match);
    return UFO_TEST_END ();
}
