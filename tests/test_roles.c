/*  test_roles.c - the broker's role table (blackboard_broker/bb_roles.c): every request type
    per role, ownership of client ids and task ids by certificate key, owners surviving a
    restart, forged fields and garbage. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_msg.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "bb_roles.h"

#define KEY_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define KEY_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static ufo_buf_t s_buf;

//  Encodes an envelope of type with a JSON body and sender.
static void
s_frame (const char *type, const char *sender, const char *json)
{
    ufo_error_t err;
    ufo_msg_t *msg = ufo_msg_new (type);
    ufo_msg_set_sender (msg, sender);
    ufo_value_t *body = json ? ufo_json_parse_str (json, &err) : ufo_value_new_map ();
    assert (body);
    ufo_msg_set_body (msg, &body);
    ufo_buf_reset (&s_buf);
    ufo_msg_encode (msg, &s_buf);
    ufo_msg_destroy (&msg);
}

static bool
s_allow (bb_roles_t *roles, const char *role, const char *key, const char *type, const char *json)
{
    s_frame (type, "someone", json);
    char t [65], id [65], why [256] = "";
    bool ok = bb_roles_allow (roles, role, key, s_buf.data, s_buf.len, t, id, why, sizeof why);
    if (strcmp (t, type) != 0) {
        fprintf (stderr, "type read as '%s', not '%s'\n", t, type);
        return !ok;                 //  makes the caller's CHECK fail
    }
    if (!ok && !*why) {
        fprintf (stderr, "denied without a reason\n");
        return true;
    }
    return ok;
}

static const char *s_board_writes [] = { "bb.add", "bb.clear", "bb.delete", "blob.put", NULL };
static const char *s_reads [] = { "bb.snapshot", "bb.list", "blob.get", "stats", "ping", "dispatch.state", NULL };
static const char *s_worker [] = { "worker.ready", "worker.heartbeat", "worker.leave", "task.progress",
                                   "task.complete", NULL };

UFO_TEST (test_table)
{
    ufo_error_t err;
    bb_roles_t *roles = bb_roles_new (NULL, 1 << 20, &err);
    REQUIRE (roles);
    const char *add = "{\"board\":\"b\",\"memory\":\"requests\",\"item\":{\"x\":1}}";
    for (const char **t = s_reads; *t; t++) {
        CHECK (s_allow (roles, "agent", KEY_A, *t, NULL));
        CHECK (s_allow (roles, "client", KEY_A, *t, NULL));
        CHECK (s_allow (roles, "monitor", KEY_A, *t, NULL));
        CHECK (!s_allow (roles, NULL, KEY_A, *t, NULL));
        CHECK (!s_allow (roles, "", KEY_A, *t, NULL));
        CHECK (!s_allow (roles, "broker", KEY_A, *t, NULL));
        CHECK (!s_allow (roles, "root", KEY_A, *t, NULL));
    }
    for (const char **t = s_board_writes; *t; t++) {
        CHECK (s_allow (roles, "agent", KEY_A, *t, add));
        CHECK (!s_allow (roles, "client", KEY_A, *t, add));
        CHECK (!s_allow (roles, "monitor", KEY_A, *t, add));
    }
    const char *wbody = "{\"worker\":\"w1\",\"service\":\"host\",\"task\":\"t1\",\"attempt\":1,\"n\":1,"
                        "\"status\":\"done\"}";
    for (const char **t = s_worker; *t; t++) {
        CHECK (s_allow (roles, "agent", KEY_A, *t, wbody));
        CHECK (!s_allow (roles, "client", KEY_A, *t, wbody));
        CHECK (!s_allow (roles, "monitor", KEY_A, *t, wbody));
    }
    //  unknown request types: only an agent gets through (and then the decoder's error)
    CHECK (s_allow (roles, "agent", KEY_A, "bb.frobnicate", NULL));
    CHECK (!s_allow (roles, "client", KEY_A, "bb.frobnicate", NULL));
    CHECK (!s_allow (roles, "monitor", KEY_A, "task.frobnicate", NULL));

    //  monitors cannot even say hello or submit
    CHECK (!s_allow (roles, "monitor", KEY_A, "client.hello", "{\"client\":\"m1\"}"));
    CHECK (!s_allow (roles, "monitor", KEY_A, "task.submit",
                     "{\"client\":\"m1\",\"task\":\"t9\",\"service\":\"host\",\"body\":{}}"));
    bb_roles_destroy (&roles);
    bb_roles_destroy (&roles);
}

UFO_TEST (test_client_ownership)
{
    ufo_error_t err;
    char path [] = "/tmp/ufo-roles-XXXXXX";
    REQUIRE (mkdtemp (path));
    char owners [128];
    snprintf (owners, sizeof owners, "%s/owners", path);
    bb_roles_t *roles = bb_roles_new (owners, 1 << 20, &err);
    REQUIRE (roles);
    //  a client may submit to "host" (sessions) and "desktop" (a device's windows, screenshots) only
    CHECK (s_allow (roles, "client", KEY_A, "client.hello", "{\"client\":\"ca\"}"));
    CHECK (s_allow (roles, "client", KEY_A, "task.submit",
                    "{\"client\":\"ca\",\"task\":\"s1\",\"service\":\"host\",\"body\":{}}"));
    CHECK (s_allow (roles, "client", KEY_A, "task.submit",
                    "{\"client\":\"ca\",\"task\":\"d1\",\"service\":\"desktop\",\"device\":\"a\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_A, "task.submit",
                     "{\"client\":\"ca\",\"task\":\"d2\",\"service\":\"desktops\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_A, "task.submit",
                     "{\"client\":\"ca\",\"task\":\"s2\",\"service\":\"app:mousepad\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_A, "task.submit",
                     "{\"client\":\"ca\",\"task\":\"s3\",\"service\":\"eval\",\"body\":{}}"));
    //  without a key a client cannot own anything
    CHECK (!s_allow (roles, "client", NULL, "task.submit",
                     "{\"client\":\"cx\",\"task\":\"s4\",\"service\":\"host\",\"body\":{}}"));
    //  inputs, cancel, fetch: own tasks only
    CHECK (s_allow (roles, "client", KEY_A, "task.input", "{\"client\":\"ca\",\"task\":\"s1\",\"body\":{}}"));
    CHECK (s_allow (roles, "client", KEY_A, "task.fetch", "{\"task\":\"s1\"}"));
    CHECK (s_allow (roles, "client", KEY_A, "task.cancel", "{\"client\":\"ca\",\"task\":\"s1\"}"));
    //  another certificate, even claiming the same client id (a forged field), gets nowhere
    CHECK (!s_allow (roles, "client", KEY_B, "task.input", "{\"client\":\"ca\",\"task\":\"s1\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_B, "task.input", "{\"client\":\"cb\",\"task\":\"s1\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_B, "task.cancel", "{\"client\":\"cb\",\"task\":\"s1\"}"));
    CHECK (!s_allow (roles, "client", KEY_B, "task.fetch", "{\"task\":\"s1\"}"));
    CHECK (!s_allow (roles, "client", KEY_B, "client.hello", "{\"client\":\"ca\"}"));
    CHECK (!s_allow (roles, "client", KEY_B, "client.heartbeat", "{\"client\":\"ca\"}"));
    //  nor can it take over the task id by submitting it again
    CHECK (!s_allow (roles, "client", KEY_B, "task.submit",
                     "{\"client\":\"cb\",\"task\":\"s1\",\"service\":\"host\",\"body\":{}}"));
    //  its own work is fine
    CHECK (s_allow (roles, "client", KEY_B, "task.submit",
                    "{\"client\":\"cb\",\"task\":\"s5\",\"service\":\"host\",\"body\":{}}"));
    //  an unknown task: nobody's, so no input
    CHECK (!s_allow (roles, "client", KEY_A, "task.input", "{\"client\":\"ca\",\"task\":\"zz\",\"body\":{}}"));
    //  agents are trusted with every task
    CHECK (s_allow (roles, "agent", KEY_B, "task.input", "{\"client\":\"h\",\"task\":\"s1\",\"body\":{}}"));
    //  a malformed dispatch request from a client is denied, not crashed on
    CHECK (!s_allow (roles, "client", KEY_A, "task.submit", "{\"client\":7}"));
    CHECK (!s_allow (roles, "client", KEY_A, "task.input", "[1,2]"));
    bb_roles_destroy (&roles);

    //  owners survive a restart
    roles = bb_roles_new (owners, 1 << 20, &err);
    REQUIRE (roles);
    CHECK (s_allow (roles, "client", KEY_A, "task.input", "{\"client\":\"ca\",\"task\":\"s1\",\"body\":{}}"));
    CHECK (!s_allow (roles, "client", KEY_B, "task.input", "{\"client\":\"cb\",\"task\":\"s1\",\"body\":{}}"));
    CHECK (s_allow (roles, "client", KEY_B, "task.cancel", "{\"client\":\"cb\",\"task\":\"s5\"}"));
    bb_roles_destroy (&roles);
    //  a garbage owners file: bad lines are skipped
    FILE *f = fopen (owners, "a");
    fputs ("garbage\nT:../x " KEY_A "\nT:ok short\n\n", f);
    fclose (f);
    roles = bb_roles_new (owners, 1 << 20, &err);
    REQUIRE (roles);
    CHECK (s_allow (roles, "client", KEY_A, "task.fetch", "{\"task\":\"s1\"}"));
    CHECK (!s_allow (roles, "client", KEY_A, "task.fetch", "{\"task\":\"ok\"}"));
    bb_roles_destroy (&roles);
    char cmd [200];
    snprintf (cmd, sizeof cmd, "rm -rf %s", path);
    CHECK (system (cmd) == 0);
}

UFO_TEST (test_eviction)
{
    ufo_error_t err;
    char dir [] = "/tmp/ufo-roles-XXXXXX";
    REQUIRE (mkdtemp (dir));
    char owners [128];
    snprintf (owners, sizeof owners, "%s/owners", dir);
    bb_roles_t *roles = bb_roles_new (owners, 1 << 20, &err);
    REQUIRE (roles);
    char json [200];
    //  more tasks than the table keeps (and enough appends to make the file compact itself):
    //  the oldest are forgotten, the newest kept, in memory and in the file
    for (int i = 0; i < 2 * BB_ROLES_MAX_OWNERS + 10; i++) {
        snprintf (json, sizeof json, "{\"client\":\"ca\",\"task\":\"t%d\",\"service\":\"host\",\"body\":{}}", i);
        if (!s_allow (roles, "client", KEY_A, "task.submit", json)) {
            CHECK (false);
            break;
        }
    }
    CHECK (!s_allow (roles, "client", KEY_A, "task.fetch", "{\"task\":\"t1\"}"));
    snprintf (json, sizeof json, "{\"task\":\"t%d\"}", 2 * BB_ROLES_MAX_OWNERS + 9);
    CHECK (s_allow (roles, "client", KEY_A, "task.fetch", json));
    bb_roles_destroy (&roles);
    //  the file stayed bounded, and a restart knows the newest
    struct stat st;
    CHECK (stat (owners, &st) == 0 && st.st_size < 3 * BB_ROLES_MAX_OWNERS * 60);
    roles = bb_roles_new (owners, 1 << 20, &err);
    REQUIRE (roles);
    CHECK (s_allow (roles, "client", KEY_A, "task.fetch", json));
    CHECK (!s_allow (roles, "client", KEY_B, "task.fetch", json));
    CHECK (!s_allow (roles, "client", KEY_A, "task.fetch", "{\"task\":\"t1\"}"));
    bb_roles_destroy (&roles);
    char cmd [200];
    snprintf (cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK (system (cmd) == 0);
}

UFO_TEST (test_garbage)
{
    ufo_error_t err;
    bb_roles_t *roles = bb_roles_new (NULL, 1 << 20, &err);
    REQUIRE (roles);
    char t [65], id [65], why [256];
    const char *frames [] = { "", "\x97", "\x97\x01", "\x97\x02\xa4ping\xa0", "\x97\x01\xdbxxxx", "hello world",
                              "\x97\x01\xd9\xffping" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (frames); i++) {
        CHECK (!bb_roles_allow (roles, "monitor", KEY_A, frames [i], strlen (frames [i]), t, id, why, sizeof why));
        CHECK (!bb_roles_allow (roles, "client", KEY_A, frames [i], strlen (frames [i]), t, id, why, sizeof why));
    }
    //  an agent's malformed request goes on to the decoder, which answers it
    CHECK (bb_roles_allow (roles, "agent", KEY_A, "x", 1, t, id, why, sizeof why));
    //  the id is read for the reply even when denied
    s_frame ("bb.add", "forged-agent-name", "{}");
    CHECK (!bb_roles_allow (roles, "monitor", KEY_A, s_buf.data, s_buf.len, t, id, why, sizeof why));
    CHECK_STR (t, "bb.add");
    CHECK_INT (strlen (id), 32);
    CHECK_CONTAINS (why, "read-only");
    //  roles read the envelope as routing does: a version written as int8 (d0 01, which
    //  docs/PROTOCOL.md 1.2 says receivers accept) is still a monitor's allowed ping
    s_frame ("ping", "monitor-1", NULL);
    REQUIRE ((uint8_t) s_buf.data [0] == 0x97 && s_buf.data [1] == 0x01);
    ufo_buf_t wide = { 0 };
    ufo_buf_append (&wide, "\x97\xd0\x01", 3);
    ufo_buf_append (&wide, s_buf.data + 2, s_buf.len - 2);
    CHECK (bb_roles_allow (roles, "monitor", KEY_A, wide.data, wide.len, t, id, why, sizeof why));
    CHECK_STR (t, "ping");
    ufo_buf_free (&wide);
    bb_roles_destroy (&roles);
}

int
main (void)
{
    UFO_RUN (test_table);
    UFO_RUN (test_client_ownership);
    UFO_RUN (test_eviction);
    UFO_RUN (test_garbage);
    ufo_buf_free (&s_buf);
    return UFO_TEST_END ();
}
