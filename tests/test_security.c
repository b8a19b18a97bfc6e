/*  test_security.c - CURVE on a real ufo-broker, with certificates made by `ufo keygen`:
    an unauthenticated client and an unknown certificate get nothing (no replies, no bus
    traffic); a monitor subscribes and snapshots but cannot write; a client submits sessions
    to "host" but cannot write boards or touch another client's task; an agent does its
    work; a forged sender or client field changes nothing; SIGHUP re-reads the allowed
    directory; a private key readable by others stops the broker at start-up with a message
    naming the file, and a client process the same way. */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_value.h"
#include "ufo_test.h"
#include "ufo_wait.h"
#include "bb_test_util.h"
#include <czmq.h>

static bb_test_broker_t B;
static char s_keys [400], s_allowed [400], s_broker_key [41];

static void
s_keygen (const char *name, const char *role)
{
    char cmd [1400];
    snprintf (cmd, sizeof cmd, "%s/cli/ufo keygen %s --role %s --dir %s >/dev/null",
              getenv ("UFO_BUILD_DIR"), name, role, s_keys);
    if (system (cmd) != 0) {
        fprintf (stderr, "ufo keygen %s failed\n", name);
        exit (1);
    }
}

static void
s_allow_cert (const char *name)
{
    char cmd [1400];
    snprintf (cmd, sizeof cmd, "cp %s/%s.cert %s/", s_keys, name, s_allowed);
    if (system (cmd) != 0)
        exit (1);
}

static char *
s_secret (const char *name)
{
    static char path [600];
    snprintf (path, sizeof path, "%s/%s.cert_secret", s_keys, name);
    return path;
}

//  A broker client with the named certificate (NULL: no CURVE at all).
static ufo_bb_client_t *
s_client (const char *name, bool bus)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new_curve (B.cmd, bus ? B.bus : NULL, name ? s_broker_key : "",
                                                  name ? s_secret (name) : "", &err);
    if (!c)
        fprintf (stderr, "client %s: %s\n", name ? name : "(plain)", err.message);
    else
        ufo_bb_client_set_timeout (c, 5000);
    return c;
}

//  Sends type with a JSON body; returns the error code (0 = ok reply). A request that gets
//  no reply comes back as UFO_E_TIMEOUT: either the reply did not come or, with no
//  connection at all (the handshake was refused), the send itself timed out.
static int
s_call (ufo_bb_client_t *c, const char *type, const char *json, int timeout_ms)
{
    ufo_error_t err;
    ufo_value_t *body = json ? ufo_json_parse_str (json, &err) : NULL;
    ufo_bb_client_set_timeout (c, timeout_ms);
    ufo_value_t *reply = ufo_bb_client_call (c, type, &body, NULL, 0, NULL, NULL, &err);
    ufo_bb_client_set_timeout (c, 5000);
    if (reply) {
        ufo_value_destroy (&reply);
        return 0;
    }
    return err.code == UFO_E_UNAVAILABLE ? UFO_E_TIMEOUT : err.code;
}

//  A raw SUB socket subscribed to everything, CURVE with the named certificate or plain.
static zsock_t *
s_raw_sub (const char *name)
{
    zsock_t *sub = zsock_new (ZMQ_SUB);
    if (name) {
        ufo_error_t err;
        ufo_security_apply_client (sub, s_broker_key, s_secret (name), &err);
    }
    zsock_set_subscribe (sub, "");
    zsock_connect (sub, "%s", B.bus);
    return sub;
}

//  Messages that arrive on sub within timeout_ms.
static int
s_drain (zsock_t *sub, int timeout_ms)
{
    int n = 0;
    zpoller_t *poller = zpoller_new (sub, NULL);
    while (zpoller_wait (poller, timeout_ms)) {
        zmsg_t *msg = zmsg_recv (sub);
        zmsg_destroy (&msg);
        n++;
        timeout_ms = 100;
    }
    zpoller_destroy (&poller);
    return n;
}

static const char *s_add = "{\"board\":\"s1\",\"memory\":\"requests\",\"item\":{\"request_0\":\"hello\"}}";

UFO_TEST (test_outsiders_get_nothing)
{
    //  Outsiders connect first, so they would see everything that follows.
    zsock_t *plain_sub = s_raw_sub (NULL), *stranger_sub = s_raw_sub ("stranger");
    ufo_bb_client_t *plain = s_client (NULL, false), *stranger = s_client ("stranger", false);
    ufo_bb_client_t *agent = s_client ("agent1", true);
    REQUIRE (plain && stranger && agent);
    //  the agent works; a monitor replica follows the board on the bus
    CHECK_INT (s_call (agent, "ping", NULL, 10000), 0);
    ufo_bb_client_t *mon = s_client ("mon1", true);
    REQUIRE (mon);
    ufo_error_t err;
    CHECK (ufo_bb_client_follow (mon, "s1", &err) == 0);
    zsock_t *mon_sub = s_raw_sub ("mon1");
    //  wait until the monitor's subscription is live: write to a scratch board until one of
    //  its events arrives (bounded)
    static const char *sync_add = "{\"board\":\"sync\",\"memory\":\"requests\",\"item\":\"sync\"}";
    int synced = 0;
    WAIT_UNTIL ((s_call (agent, "bb.add", sync_add, 5000), synced = s_drain (mon_sub, 200)) > 0, 10000);
    CHECK (synced > 0);
    for (int i = 0; i < 5; i++)
        CHECK_INT (s_call (agent, "bb.add", s_add, 5000), 0);
    int64_t until = ufo_time_mono_ms () + 5000;
    while (ufo_time_mono_ms () < until && ufo_bb_client_replica_last (mon, "s1") == 0)
        ufo_bb_client_poll (mon, 100, &err);
    while (ufo_time_mono_ms () < until
       && ufo_value_size (ufo_value_map_get (ufo_bb_client_replica (mon, "s1"), "requests")) < 5)
        ufo_bb_client_poll (mon, 100, &err);
    CHECK_INT (ufo_value_size (ufo_value_map_get (ufo_bb_client_replica (mon, "s1"), "requests")), 5);
    CHECK (s_drain (mon_sub, 3000) >= 5);
    //  outsiders: no replies, no bus traffic
    CHECK_INT (s_call (plain, "ping", NULL, 1500), UFO_E_TIMEOUT);
    CHECK_INT (s_call (stranger, "ping", NULL, 1500), UFO_E_TIMEOUT);
    CHECK_INT (s_call (plain, "bb.add", s_add, 500), UFO_E_TIMEOUT);
    CHECK_INT (s_call (stranger, "bb.add", s_add, 500), UFO_E_TIMEOUT);
    CHECK_INT (s_drain (plain_sub, 500), 0);
    CHECK_INT (s_drain (stranger_sub, 500), 0);
    //  and their writes did not happen
    ufo_value_t *snap = ufo_bb_client_snapshot (agent, "s1", "requests", 0, &err);
    REQUIRE (snap);
    CHECK_INT (ufo_value_size (ufo_value_map_get (ufo_value_map_get (snap, "board"), "requests")), 5);
    ufo_value_destroy (&snap);
    zsock_destroy (&mon_sub);
    zsock_destroy (&plain_sub);
    zsock_destroy (&stranger_sub);
    ufo_bb_client_destroy (&mon);
    ufo_bb_client_destroy (&agent);
    ufo_bb_client_destroy (&stranger);
    ufo_bb_client_destroy (&plain);
}

UFO_TEST (test_monitor_read_only)
{
    ufo_bb_client_t *mon = s_client ("mon1", false);
    REQUIRE (mon);
    CHECK_INT (s_call (mon, "ping", NULL, 10000), 0);
    CHECK_INT (s_call (mon, "stats", NULL, 5000), 0);
    CHECK_INT (s_call (mon, "bb.list", NULL, 5000), 0);
    CHECK_INT (s_call (mon, "bb.snapshot", "{\"board\":\"s1\"}", 5000), 0);
    CHECK_INT (s_call (mon, "dispatch.state", NULL, 5000), 0);
    CHECK_INT (s_call (mon, "bb.add", s_add, 5000), UFO_E_DENIED);
    CHECK_INT (s_call (mon, "bb.clear", "{\"board\":\"s1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (mon, "bb.delete", "{\"board\":\"s1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (mon, "client.hello", "{\"client\":\"m1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (mon, "task.submit", "{\"client\":\"m1\",\"task\":\"mt\",\"service\":\"host\",\"body\":{}}",
                       5000), UFO_E_DENIED);
    CHECK_INT (s_call (mon, "worker.ready", "{\"worker\":\"w\",\"service\":\"host\"}", 5000), UFO_E_DENIED);
    ufo_error_t err;
    char hex [65];
    CHECK (ufo_bb_client_blob_put (mon, "png", 3, hex, &err) == -1 && err.code == UFO_E_DENIED);
    //  a forged sender name changes nothing
    ufo_bb_client_set_sender (mon, "ufo-host");
    CHECK_INT (s_call (mon, "bb.add", s_add, 5000), UFO_E_DENIED);
    ufo_bb_client_set_sender (mon, "ufo-broker");
    CHECK_INT (s_call (mon, "bb.add", s_add, 5000), UFO_E_DENIED);
    //  each denial is logged
    CHECK (bb_test_log_contains (&B, "rejected: denied: role monitor is read-only", 3000));
    //  nothing was written
    ufo_value_t *snap = ufo_bb_client_snapshot (mon, "s1", "requests", 0, &err);
    REQUIRE (snap);
    CHECK_INT (ufo_value_size (ufo_value_map_get (ufo_value_map_get (snap, "board"), "requests")), 5);
    ufo_value_destroy (&snap);
    ufo_bb_client_destroy (&mon);
}

UFO_TEST (test_client_and_agent)
{
    ufo_bb_client_t *c1 = s_client ("client1", false), *c2 = s_client ("client2", false);
    ufo_bb_client_t *agent = s_client ("agent1", false);
    REQUIRE (c1 && c2 && agent);
    CHECK_INT (s_call (c1, "ping", NULL, 10000), 0);
    CHECK_INT (s_call (c2, "ping", NULL, 10000), 0);
    //  clients read boards but never write them
    CHECK_INT (s_call (c1, "bb.snapshot", "{\"board\":\"s1\"}", 5000), 0);
    CHECK_INT (s_call (c1, "bb.add", s_add, 5000), UFO_E_DENIED);
    CHECK_INT (s_call (c1, "bb.delete", "{\"board\":\"s1\"}", 5000), UFO_E_DENIED);
    ufo_error_t err;
    char hex [65];
    CHECK (ufo_bb_client_blob_put (c1, "png", 3, hex, &err) == -1 && err.code == UFO_E_DENIED);
    //  a client submits sessions to "host" and a device's desktop queries to "desktop", nothing else
    CHECK_INT (s_call (c1, "client.hello", "{\"client\":\"c1\",\"name\":\"test client 1\"}", 5000), 0);
    CHECK_INT (s_call (c1, "task.submit",
                       "{\"client\":\"c1\",\"task\":\"sess-1\",\"service\":\"host\",\"session\":\"s1\",\"body\":{}}",
                       5000), 0);
    CHECK_INT (s_call (c1, "task.submit", "{\"client\":\"c1\",\"task\":\"desk-1\",\"service\":\"desktop\","
                       "\"device\":\"d1\",\"deadline_ms\":1000,\"body\":{\"op\":\"windows\"}}", 5000), 0);
    CHECK_INT (s_call (c1, "task.submit",
                       "{\"client\":\"c1\",\"task\":\"sub-1\",\"service\":\"app:mousepad\",\"body\":{}}", 5000),
               UFO_E_DENIED);
    CHECK_INT (s_call (c1, "worker.ready", "{\"worker\":\"w\",\"service\":\"host\"}", 5000), UFO_E_DENIED);
    //  another client, even naming c1 in its fields, cannot touch c1's session
    CHECK_INT (s_call (c2, "client.hello", "{\"client\":\"c1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (c2, "task.input", "{\"client\":\"c1\",\"task\":\"sess-1\",\"body\":{\"qid\":\"q\"}}", 5000),
               UFO_E_DENIED);
    CHECK_INT (s_call (c2, "task.cancel", "{\"client\":\"c2\",\"task\":\"sess-1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (c2, "task.fetch", "{\"task\":\"sess-1\"}", 5000), UFO_E_DENIED);
    CHECK_INT (s_call (c2, "task.submit",
                       "{\"client\":\"c2\",\"task\":\"sess-1\",\"service\":\"host\",\"body\":{}}", 5000), UFO_E_DENIED);
    //  its owner can
    int rc = s_call (c1, "task.input", "{\"client\":\"c1\",\"task\":\"sess-1\",\"body\":{\"qid\":\"q\"}}", 5000);
    CHECK (rc != UFO_E_DENIED && rc != UFO_E_TIMEOUT);    //  past the role check (dispatch decides)
    CHECK_INT (s_call (c1, "task.fetch", "{\"task\":\"sess-1\"}", 5000), 0);
    CHECK_INT (s_call (c1, "task.cancel", "{\"client\":\"c1\",\"task\":\"sess-1\"}", 5000), 0);
    CHECK (bb_test_log_contains (&B, "was not submitted with this certificate", 3000));
    //  an agent does an agent's work: boards, blobs, workers, subtasks
    CHECK_INT (s_call (agent, "bb.add", "{\"board\":\"s2\",\"memory\":\"trajectories\",\"item\":{\"Step\":1}}", 5000), 0);
    CHECK (ufo_bb_client_blob_put (agent, "png-bytes", 9, hex, &err) == 0);
    char *data = NULL;
    size_t len = 0;
    CHECK (ufo_bb_client_blob_get (c1, hex, &data, &len, &err) == 0 && len == 9);
    free (data);
    CHECK_INT (s_call (agent, "worker.ready", "{\"worker\":\"w-agent1\",\"service\":\"app:*\",\"capacity\":1}", 5000), 0);
    CHECK_INT (s_call (agent, "client.hello", "{\"client\":\"h1\"}", 5000), 0);
    CHECK_INT (s_call (agent, "task.submit",
                       "{\"client\":\"h1\",\"task\":\"sub-2\",\"service\":\"app:mousepad\",\"body\":{}}", 5000), 0);
    CHECK_INT (s_call (agent, "worker.leave", "{\"worker\":\"w-agent1\"}", 5000), 0);
    CHECK_INT (s_call (agent, "bb.delete", "{\"board\":\"s2\"}", 5000), 0);
    ufo_bb_client_destroy (&agent);
    ufo_bb_client_destroy (&c2);
    ufo_bb_client_destroy (&c1);
}

UFO_TEST (test_sighup_rereads)
{
    ufo_bb_client_t *late = s_client ("late", false);
    REQUIRE (late);
    CHECK_INT (s_call (late, "ping", NULL, 1500), UFO_E_TIMEOUT);
    ufo_bb_client_destroy (&late);
    s_allow_cert ("late");
    CHECK (kill (B.pid, SIGHUP) == 0);
    CHECK (bb_test_log_contains (&B, "SIGHUP: re-read", 5000));
    late = s_client ("late", false);
    REQUIRE (late);
    CHECK_INT (s_call (late, "ping", NULL, 10000), 0);
    CHECK_INT (s_call (late, "bb.add", s_add, 5000), UFO_E_DENIED);    //  a client, by its certificate
    ufo_bb_client_destroy (&late);
    //  revoked: removed from the directory, SIGHUP; a new connection gets nothing
    char path [700];
    snprintf (path, sizeof path, "%s/late.cert", s_allowed);
    CHECK (unlink (path) == 0);
    CHECK (kill (B.pid, SIGHUP) == 0);
    CHECK (bb_test_log_contains (&B, "SIGHUP: re-read 4 allowed", 5000));
    late = s_client ("late", false);
    REQUIRE (late);
    CHECK_INT (s_call (late, "ping", NULL, 1500), UFO_E_TIMEOUT);
    ufo_bb_client_destroy (&late);
    //  the broker survived the signals
    CHECK_INT (waitpid (B.pid, NULL, WNOHANG), 0);
}

UFO_TEST (test_private_key_modes)
{
    //  a client process: refused, naming the file
    char text [1200];
    snprintf (text, sizeof text, "{\"security\": {\"curve\": true, \"cert_dir\": \"%s\"}}", s_keys);
    ufo_config_t *cfg = ufo_config_new ();
    ufo_error_t err;
    REQUIRE (ufo_config_load_text (cfg, text, strlen (text), &err) == 0);
    CHECK_INT (ufo_security_init (cfg, "client1", &err), 1);
    chmod (s_secret ("client1"), 0644);
    CHECK_INT (ufo_security_init (cfg, "client1", &err), -1);
    CHECK_CONTAINS (err.message, s_secret ("client1"));
    CHECK_CONTAINS (err.message, "chmod 600");
    chmod (s_secret ("client1"), 0600);
    CHECK_INT (ufo_security_init (cfg, "nobody", &err), -1);       //  no such certificate
    CHECK_CONTAINS (err.message, "nobody.cert_secret");
    ufo_security_set_default (NULL, NULL, &err);
    ufo_config_destroy (&cfg);

    //  the broker: exits non-zero at start-up, naming the file
    bb_test_stop (&B, SIGTERM);
    chmod (s_secret ("broker"), 0640);
    bb_test_start (&B, NULL);
    int status = bb_test_wait_exit (&B, 10000);
    CHECK (status > 0);
    CHECK (bb_test_log_contains (&B, s_secret ("broker"), 1000));
    CHECK (bb_test_log_contains (&B, "group or others", 1000));
    chmod (s_secret ("broker"), 0600);
}

int
main (void)
{
    bb_test_init (&B, "security");
    snprintf (s_keys, sizeof s_keys, "%s/keys", B.dir);
    snprintf (s_allowed, sizeof s_allowed, "%s/keys/allowed", B.dir);
    s_keygen ("broker", "broker");
    s_keygen ("agent1", "agent");
    s_keygen ("client1", "client");
    s_keygen ("client2", "client");
    s_keygen ("mon1", "monitor");
    s_keygen ("stranger", "agent");
    s_keygen ("late", "client");
    mkdir (s_allowed, 0755);
    s_allow_cert ("agent1");
    s_allow_cert ("client1");
    s_allow_cert ("client2");
    s_allow_cert ("mon1");
    if (!bb_test_broker_key (s_keys, s_broker_key))
        return 1;

    setenv ("UFO_SECURITY__CURVE", "true", 1);
    setenv ("UFO_SECURITY__CERT_DIR", s_keys, 1);
    const char *extra [] = { "--stats-ms", "0", NULL };
    bb_test_start (&B, extra);
    unsetenv ("UFO_SECURITY__CURVE");
    unsetenv ("UFO_SECURITY__CERT_DIR");

    UFO_RUN (test_outsiders_get_nothing);
    UFO_RUN (test_monitor_read_only);
    UFO_RUN (test_client_and_agent);
    UFO_RUN (test_sighup_rereads);
    setenv ("UFO_SECURITY__CURVE", "true", 1);
    setenv ("UFO_SECURITY__CERT_DIR", s_keys, 1);
    UFO_RUN (test_private_key_modes);
    int rc = UFO_TEST_END ();
    if (rc != 0)
        setenv ("BB_TEST_KEEP", "1", 1);
    bb_test_cleanup (&B);
    zsys_shutdown ();
    return rc;
}
