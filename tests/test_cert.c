/*  test_cert.c - CURVE certificates: generation, file modes, loading, roles; and ZAP over
    real sockets: an allowed client gets through with its role, an unknown or plain client
    gets nothing. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_error.h"
#include "ufo_test.h"
#include <czmq.h>

static char s_dir [256];

static char *
s_path (const char *name)
{
    static char path [512];
    snprintf (path, sizeof (path), "%s/%s", s_dir, name);
    return path;
}

UFO_TEST (test_generate_and_load)
{
    ufo_error_t err;
    char keys [300];
    snprintf (keys, sizeof (keys), "%s/keys", s_dir);
    CHECK (ufo_cert_generate (keys, "agent-1", "agent", &err) == 0);
    struct stat st;
    CHECK (stat (s_path ("keys/agent-1.cert_secret"), &st) == 0 && (st.st_mode & 0777) == 0600);
    CHECK (stat (s_path ("keys/agent-1.cert"), &st) == 0 && (st.st_mode & 0777) == 0644);
    CHECK (stat (keys, &st) == 0 && (st.st_mode & 0777) == 0700);
    //  never overwrites
    CHECK (ufo_cert_generate (keys, "agent-1", "agent", &err) == -1);
    CHECK_INT (err.code, UFO_E_CONFLICT);
    //  bad names and roles
    CHECK (ufo_cert_generate (keys, "../evil", "agent", &err) == -1);
    CHECK (ufo_cert_generate (keys, "x", "root", &err) == -1);
    CHECK_CONTAINS (err.message, "role");
    CHECK (ufo_cert_role_valid ("monitor") && !ufo_cert_role_valid ("admin") && !ufo_cert_role_valid (NULL));

    ufo_cert_t *sec = ufo_cert_load (s_path ("keys/agent-1.cert_secret"), &err);
    REQUIRE (sec);
    CHECK (ufo_cert_has_secret (sec));
    CHECK_STR (ufo_cert_role (sec), "agent");
    CHECK_STR (ufo_cert_name (sec), "agent-1");
    CHECK_INT (strlen (ufo_cert_public_key (sec)), 40);
    ufo_cert_t *pub = ufo_cert_load (s_path ("keys/agent-1.cert"), &err);
    REQUIRE (pub);
    CHECK (!ufo_cert_has_secret (pub));
    CHECK_STR (ufo_cert_public_key (pub), ufo_cert_public_key (sec));
    CHECK_STR (ufo_cert_role (pub), "agent");
    ufo_cert_destroy (&pub);
    ufo_cert_destroy (&sec);
    ufo_cert_destroy (&sec);

    //  a private key others can read is refused, naming the file and the fix
    chmod (s_path ("keys/agent-1.cert_secret"), 0644);
    CHECK (ufo_cert_load (s_path ("keys/agent-1.cert_secret"), &err) == NULL);
    CHECK_INT (err.code, UFO_E_DENIED);
    CHECK_CONTAINS (err.message, "chmod 600");
    chmod (s_path ("keys/agent-1.cert_secret"), 0640);
    CHECK (ufo_cert_load (s_path ("keys/agent-1.cert_secret"), &err) == NULL);
    chmod (s_path ("keys/agent-1.cert_secret"), 0600);
    //  not a certificate
    FILE *f = fopen (s_path ("junk.cert"), "w");
    fputs ("hello\n", f);
    fclose (f);
    CHECK (ufo_cert_load (s_path ("junk.cert"), &err) == NULL);
    CHECK (ufo_cert_load (s_path ("missing.cert"), &err) == NULL);
    CHECK_INT (err.code, UFO_E_IO);
}

//  Receives one message on the server within timeout_ms; returns the role of its sender
//  ("" when there is none) or NULL when nothing came.
static char *
s_recv_role (zsock_t *server, int timeout_ms)
{
    zpoller_t *poller = zpoller_new (server, NULL);
    void *which = zpoller_wait (poller, timeout_ms);
    zpoller_destroy (&poller);
    if (!which)
        return NULL;
    zmsg_t *msg = zmsg_recv (server);
    zframe_t *identity = zmsg_pop (msg);
    zframe_t *body = zmsg_first (msg);
    const char *role = ufo_auth_frame_role (body);
    char *copy = strdup (role ? role : "");
    zframe_destroy (&identity);
    zmsg_destroy (&msg);
    return copy;
}

UFO_TEST (test_zap_roles)
{
    ufo_error_t err;
    char allowed [300], keys [300];
    snprintf (allowed, sizeof (allowed), "%s/allowed", s_dir);
    snprintf (keys, sizeof (keys), "%s/k2", s_dir);
    mkdir (allowed, 0755);
    REQUIRE (ufo_cert_generate (keys, "broker", "broker", &err) == 0);
    REQUIRE (ufo_cert_generate (keys, "mon", "monitor", &err) == 0);
    REQUIRE (ufo_cert_generate (keys, "stranger", "agent", &err) == 0);
    //  only the monitor's public certificate is allowed
    char cmd [1024];
    snprintf (cmd, sizeof (cmd), "cp %s/mon.cert %s/", keys, allowed);
    REQUIRE (system (cmd) == 0);

    ufo_auth_t *auth = ufo_auth_new (allowed, &err);
    REQUIRE (auth);
    ufo_cert_t *server_cert = ufo_cert_load (s_path ("k2/broker.cert_secret"), &err);
    REQUIRE (server_cert);
    zsock_t *server = zsock_new (ZMQ_ROUTER);
    ufo_cert_apply_server (server_cert, server);
    char endpoint [300];
    snprintf (endpoint, sizeof (endpoint), "ipc://%s/zap.ipc", s_dir);
    REQUIRE (zsock_bind (server, "%s", endpoint) == 0);

    //  allowed: the message arrives with the role of the broker's copy of the certificate
    ufo_cert_t *mon = ufo_cert_load (s_path ("k2/mon.cert_secret"), &err);
    zsock_t *client = zsock_new (ZMQ_DEALER);
    CHECK (ufo_cert_apply_client (mon, client, ufo_cert_public_key (server_cert)) == 0);
    zsock_connect (client, "%s", endpoint);
    zstr_send (client, "hello");
    char *role = s_recv_role (server, 5000);
    CHECK_STR (role, "monitor");
    free (role);

    //  unknown certificate: nothing arrives
    ufo_cert_t *stranger = ufo_cert_load (s_path ("k2/stranger.cert_secret"), &err);
    zsock_t *intruder = zsock_new (ZMQ_DEALER);
    ufo_cert_apply_client (stranger, intruder, ufo_cert_public_key (server_cert));
    zsock_connect (intruder, "%s", endpoint);
    zstr_send (intruder, "let me in");
    //  no CURVE at all: nothing arrives either
    zsock_t *plain = zsock_new (ZMQ_DEALER);
    zsock_connect (plain, "%s", endpoint);
    zstr_send (plain, "plain");
    role = s_recv_role (server, 1500);
    CHECK (role == NULL);
    free (role);

    //  the allowed client still works afterwards, and SIGHUP-style reload admits the stranger
    zstr_send (client, "again");
    role = s_recv_role (server, 5000);
    CHECK_STR (role, "monitor");
    free (role);
    snprintf (cmd, sizeof (cmd), "cp %s/stranger.cert %s/", keys, allowed);
    REQUIRE (system (cmd) == 0);
    CHECK (ufo_auth_reload (auth) == 0);
    zsock_t *late = zsock_new (ZMQ_DEALER);
    ufo_cert_apply_client (stranger, late, ufo_cert_public_key (server_cert));
    zsock_connect (late, "%s", endpoint);
    zstr_send (late, "now allowed");
    role = s_recv_role (server, 5000);
    CHECK_STR (role, "agent");
    free (role);

    zsock_destroy (&late);
    zsock_destroy (&plain);
    zsock_destroy (&intruder);
    zsock_destroy (&client);
    zsock_destroy (&server);
    ufo_cert_destroy (&stranger);
    ufo_cert_destroy (&mon);
    ufo_cert_destroy (&server_cert);
    ufo_auth_destroy (&auth);
}

//  Sealed boxes: only the certificate they were sealed to opens them.
UFO_TEST (test_seal)
{
    char keys [300], path [400];
    snprintf (keys, sizeof (keys), "%s/seal", s_dir);
    ufo_error_t err;
    REQUIRE (ufo_cert_generate (keys, "alice", "client", &err) == 0);
    REQUIRE (ufo_cert_generate (keys, "bob", "client", &err) == 0);
    snprintf (path, sizeof (path), "%s/alice.cert_secret", keys);
    ufo_cert_t *alice = ufo_cert_load (path, &err);
    snprintf (path, sizeof (path), "%s/bob.cert_secret", keys);
    ufo_cert_t *bob = ufo_cert_load (path, &err);
    snprintf (path, sizeof (path), "%s/alice.cert", keys);
    ufo_cert_t *alice_public = ufo_cert_load (path, &err);
    REQUIRE (alice && bob && alice_public);
    const char secret [] = "the result of alice's task";
    ufo_buf_t sealed = { 0 }, plain = { 0 };
    CHECK_INT (ufo_cert_seal (ufo_cert_public_key (alice), secret, sizeof secret - 1, &sealed, &err), 0);
    ufo_buf_putc (&sealed, 0);
    CHECK (strstr (sealed.data, "alice") == NULL);
    CHECK_INT (ufo_cert_unseal (alice, sealed.data, &plain, &err), 0);
    CHECK (plain.len == sizeof secret - 1 && memcmp (plain.data, secret, plain.len) == 0);
    ufo_buf_reset (&plain);
    CHECK_INT (ufo_cert_unseal (bob, sealed.data, &plain, &err), -1);
    CHECK_INT (err.code, UFO_E_DENIED);
    CHECK_INT (plain.len, 0);
    CHECK_INT (ufo_cert_unseal (alice_public, sealed.data, &plain, &err), -1);    //  no secret key
    CHECK_INT (ufo_cert_unseal (alice, "not base64 !!", &plain, &err), -1);
    CHECK_INT (err.code, UFO_E_SYNTAX);
    CHECK_INT (ufo_cert_unseal (alice, "", &plain, &err), -1);
    CHECK_INT (ufo_cert_seal ("short", secret, 3, &sealed, &err), -1);
    ufo_buf_free (&sealed);
    ufo_buf_free (&plain);
    ufo_cert_destroy (&alice_public);
    ufo_cert_destroy (&bob);
    ufo_cert_destroy (&alice);
}

int
main (void)
{
    snprintf (s_dir, sizeof (s_dir), "/tmp/ufo-cert-XXXXXX");
    if (!mkdtemp (s_dir))
        return 1;
    UFO_RUN (test_generate_and_load);
    UFO_RUN (test_zap_roles);
    UFO_RUN (test_seal);
    char cmd [300];
    snprintf (cmd, sizeof (cmd), "rm -rf %s", s_dir);
    if (system (cmd) != 0)
        fprintf (stderr, "could not remove %s\n", s_dir);
    zsys_shutdown ();
    return UFO_TEST_END ();
}
