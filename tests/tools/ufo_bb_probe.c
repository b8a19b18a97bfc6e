/*  ufo_bb_probe.c - a small broker client for the network-namespace tests (tests/netns/).

    ufo-bb-probe --cmd EP [--bus EP] [--timeout MS] COMMAND
      ping                      one ping; exit 0 when answered
      add BOARD N               adds items {"k": 1..N} to BOARD's requests memory, one call each
      write-loop BOARD SECONDS  adds {"k": 1, 2, ...} for SECONDS, each item retried until the
                                broker acknowledges it; prints "acked K" (the highest k acked)
      check BOARD K             exit 0 when items k = 1..K are all on BOARD (prints what it found)
      listen MS                 subscribes to everything on the bus for MS; prints "messages N"

    CURVE comes from the configuration like every process (UFO_SECURITY__* environment,
    certificate name "agent" by default; --cert-name NAME to choose another). */
#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_cert.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include <czmq.h>

static int
s_usage (void)
{
    fprintf (stderr, "usage: ufo-bb-probe --cmd EP [--bus EP] [--timeout MS] [--cert-name NAME] "
                     "ping | add BOARD N | write-loop BOARD SECONDS | check BOARD K | listen MS\n");
    return 2;
}

static int
s_add (ufo_bb_client_t *c, const char *board, int64_t k, ufo_error_t *err)
{
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "k", k);
    return ufo_bb_client_add (c, board, "requests", &item, NULL, NULL, err);
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-bb-probe");
    const char *cmd = NULL, *bus = NULL, *cert_name = "agent";
    int timeout = 3000, i = 1;
    for (; i + 1 < argc && argv [i][0] == '-'; i += 2) {
        if (strcmp (argv [i], "--cmd") == 0) cmd = argv [i + 1];
        else if (strcmp (argv [i], "--bus") == 0) bus = argv [i + 1];
        else if (strcmp (argv [i], "--timeout") == 0) timeout = atoi (argv [i + 1]);
        else if (strcmp (argv [i], "--cert-name") == 0) cert_name = argv [i + 1];
        else return s_usage ();
    }
    if (!cmd || i >= argc || timeout <= 0)
        return s_usage ();
    const char *what = argv [i];
    ufo_error_t err;
    ufo_config_t *cfg = ufo_config_load (NULL, &err);
    if (!cfg || ufo_security_init (cfg, cert_name, &err) < 0) {
        fprintf (stderr, "ufo-bb-probe: %s\n", err.message);
        ufo_config_destroy (&cfg);
        return 1;
    }
    ufo_config_destroy (&cfg);
    int rc = 1;
    if (strcmp (what, "listen") == 0 && i + 1 < argc && bus) {
        zsock_t *sub = zsock_new (ZMQ_SUB);
        if (ufo_security_apply_client (sub, NULL, NULL, &err) != 0) {
            fprintf (stderr, "ufo-bb-probe: %s\n", err.message);
            zsock_destroy (&sub);
            return 1;
        }
        zsock_set_subscribe (sub, "");
        zsock_connect (sub, "%s", bus);
        int64_t end = ufo_time_mono_ms () + atoi (argv [i + 1]);
        int n = 0;
        zpoller_t *poller = zpoller_new (sub, NULL);
        for (int64_t now; (now = ufo_time_mono_ms ()) < end;)
            if (zpoller_wait (poller, (int) (end - now))) {
                zmsg_t *msg = zmsg_recv (sub);
                zmsg_destroy (&msg);
                n++;
            }
        zpoller_destroy (&poller);
        zsock_destroy (&sub);
        printf ("messages %d\n", n);
        return 0;
    }
    ufo_bb_client_t *c = ufo_bb_client_new (cmd, NULL, &err);
    if (!c) {
        fprintf (stderr, "ufo-bb-probe: %s\n", err.message);
        return 1;
    }
    ufo_bb_client_set_timeout (c, timeout);
    ufo_bb_client_set_sender (c, "ufo-bb-probe");
    if (strcmp (what, "ping") == 0) {
        ufo_value_t *reply = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
        rc = reply ? 0 : 1;
        if (!reply)
            fprintf (stderr, "ufo-bb-probe: ping: %s\n", err.message);
        else
            printf ("pong seq %" PRId64 "\n", ufo_value_map_int (reply, "seq", -1));
        ufo_value_destroy (&reply);
    }
    else
    if (strcmp (what, "add") == 0 && i + 2 < argc) {
        int64_t n = atoll (argv [i + 2]);
        rc = 0;
        for (int64_t k = 1; k <= n && rc == 0; k++)
            if (s_add (c, argv [i + 1], k, &err) != 0) {
                fprintf (stderr, "ufo-bb-probe: add: %s (%s)\n", err.message, ufo_errcode_name (err.code));
                rc = 1;
            }
        if (rc == 0)
            printf ("added %" PRId64 "\n", n);
    }
    else
    if (strcmp (what, "write-loop") == 0 && i + 2 < argc) {
        int64_t end = ufo_time_mono_ms () + 1000 * (int64_t) atoi (argv [i + 2]);
        int64_t k = 1, retries = 0;
        while (ufo_time_mono_ms () < end) {
            if (s_add (c, argv [i + 1], k, &err) == 0) {
                k++;
                usleep (20000);
            }
            else
                retries++;                  //  the same k again: it must be acknowledged once
        }
        printf ("acked %" PRId64 " retries %" PRId64 "\n", k - 1, retries);
        rc = 0;
    }
    else
    if (strcmp (what, "check") == 0 && i + 2 < argc) {
        int64_t want = atoll (argv [i + 2]);
        ufo_value_t *snap = ufo_bb_client_snapshot (c, argv [i + 1], "requests", 0, &err);
        if (!snap)
            fprintf (stderr, "ufo-bb-probe: snapshot: %s\n", err.message);
        else {
            const ufo_value_t *items = ufo_value_map_get (ufo_value_map_get (snap, "board"), "requests");
            size_t n = ufo_value_size (items);
            bool *seen = ufo_calloc ((size_t) (want > 0 ? want : 0) + 1, 1);
            for (size_t j = 0; j < n; j++) {
                int64_t k = ufo_value_map_int (ufo_value_list_at (items, j), "k", 0);
                if (k >= 1 && k <= want)
                    seen [k] = true;
            }
            int64_t missing = 0;
            for (int64_t k = 1; k <= want; k++)
                missing += !seen [k];
            printf ("items %zu missing %" PRId64 "\n", n, missing);
            free (seen);
            rc = missing == 0 ? 0 : 1;
        }
        ufo_value_destroy (&snap);
    }
    else
        rc = s_usage ();
    ufo_bb_client_destroy (&c);
    return rc;
}
