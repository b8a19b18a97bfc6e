/*  main.c - ufo-broker: the blackboard broker process (see bb_server.h, docs/PROTOCOL.md). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_bb_proto.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "ufo_config.h"
#include "bb_server.h"
#include "bb_security.h"

static void
s_usage (FILE *out)
{
    fprintf (out,
        "usage: ufo-broker [--data-dir DIR] [--cmd ENDPOINT] [--bus ENDPOINT] [--config FILE]\n"
        "                  [--fsync always|everysec|no] [--repair] [--snapshot-every N]\n"
        "                  [--stats-ms MS] [--bus-hwm N] [--log-level LEVEL]\n"
        "       ufo-broker --help | --version\n"
        "Options take their value as --opt VALUE or --opt=VALUE.\n"
        "\n"
        "Serves the blackboards: requests on the command endpoint (ZeroMQ ROUTER), every change\n"
        "published on the bus endpoint (XPUB) with a strictly increasing sequence number.\n"
        "Defaults come from the configuration block \"broker\" (config/ufo.json, $UFO_CONFIG).\n"
        "\n"
        "  --data-dir DIR     durable log, snapshots and blobs (broker.data_dir)\n"
        "  --cmd ENDPOINT     command endpoint (broker.cmd_endpoint), e.g. tcp://127.0.0.1:5570;\n"
        "                     default ipc://RUN_DIR/broker-cmd, RUN_DIR = $UFO_RUN_DIR, else\n"
        "                     $XDG_RUNTIME_DIR/ufobus, else /tmp/ufobus-<uid>\n"
        "  --bus ENDPOINT     bus endpoint (broker.bus_endpoint), default ipc://RUN_DIR/broker-bus\n"
        "  --config FILE      configuration file\n"
        "  --fsync POLICY     always: acknowledge after fdatasync (group commit); everysec; no\n"
        "  --repair           truncate a log that is corrupt in the middle instead of refusing\n"
        "  --snapshot-every N log records between compacting snapshots (broker.snapshot_every)\n"
        "  --snapshot-growth PCT\n"
        "                     and until the log grew by PCT %% of the last snapshot, in items\n"
        "                     (broker.snapshot_growth, default 100; 0: snapshot_every alone)\n"
        "  --stats-ms MS      period of the stats event on the bus, 0 = never\n"
        "  --bus-hwm N        send high-water mark of the bus socket (default 100000)\n"
        "  --log-level LEVEL  trace, debug, info, warn, error\n"
        "SIGTERM or SIGINT: flush the log, answer what waited for it, exit 0.\n"
        "\n"
        "CURVE (security.curve, UFO_SECURITY__CURVE=true): both sockets are CURVE servers with the\n"
        "key pair security.cert (default CERT_DIR/broker.cert_secret, mode 0600); clients are\n"
        "admitted if their public certificate is in security.allowed_dir (default\n"
        "CERT_DIR/allowed), re-read on SIGHUP; the certificate's role (agent, client, monitor)\n"
        "decides what a client may ask (docs/DEPLOYMENT.md).\n");
}

static int
s_parse_fsync (const char *text)
{
    if (strcmp (text, "always") == 0) return BB_FSYNC_ALWAYS;
    if (strcmp (text, "everysec") == 0) return BB_FSYNC_EVERYSEC;
    if (strcmp (text, "no") == 0) return BB_FSYNC_NO;
    return -1;
}

static bool
s_parse_int (const char *text, int64_t min, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll (text, &end, 10);
    if (errno || end == text || *end || v < min)
        return false;
    *out = v;
    return true;
}

int
main (int argc, char **argv)
{
    ufo_log_set_name ("ufo-broker");
    const char *data_dir = NULL, *cmd = NULL, *bus = NULL, *config_path = NULL, *fsync_text = NULL;
    const char *snap_text = NULL, *stats_text = NULL, *hwm_text = NULL, *growth_text = NULL;
    const char *repair_flag = NULL, *level_text = NULL;
    const ufo_agent_opt_t values [] = {
        { "--data-dir", &data_dir }, { "--cmd", &cmd }, { "--bus", &bus }, { "--config", &config_path },
        { "--fsync", &fsync_text }, { "--snapshot-every", &snap_text }, { "--snapshot-growth", &growth_text },
        { "--stats-ms", &stats_text }, { "--bus-hwm", &hwm_text }, { "--log-level", &level_text }, { NULL, NULL }
    };
    const ufo_agent_opt_t flags [] = { { "--repair", &repair_flag }, { NULL, NULL } };
    int exit_code;
    if (ufo_agent_opts_parse_table ("ufo-broker", argc, argv, values, flags, s_usage, &exit_code) < 0)
        return exit_code;
    bool repair = repair_flag != NULL;
    if (level_text) {
        if (ufo_log_level_parse (level_text) < 0) {
            fprintf (stderr, "ufo-broker: --log-level needs trace|debug|info|warn|error\n");
            return 2;
        }
        ufo_log_set_level ((ufo_log_level_t) ufo_log_level_parse (level_text));
    }
    ufo_error_t err;
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo-broker: configuration: %s\n", err.message);
        return 2;
    }
    bb_server_config_t cfg = {
        .data_dir = data_dir ? data_dir : ufo_config_str (config, "broker.data_dir", "run/broker"),
        .cmd_endpoint = cmd ? cmd : ufo_config_str (config, "broker.cmd_endpoint", ""),
        .bus_endpoint = bus ? bus : ufo_config_str (config, "broker.bus_endpoint", ""),
        .repair = repair,
        .max_message_bytes = (size_t) ufo_config_int (config, "broker.max_message_bytes", 16 << 20),
        .max_item_bytes = (size_t) ufo_config_int (config, "broker.max_item_bytes", 1 << 20),
        .max_items_per_board = (size_t) ufo_config_int (config, "broker.max_items_per_board", 1000000),
        .max_blob_bytes = (size_t) ufo_config_int (config, "broker.max_blob_bytes", 16 << 20),
        .snapshot_every = (uint64_t) ufo_config_int (config, "broker.snapshot_every", 10000),
        .snapshot_growth = (uint64_t) ufo_config_int (config, "broker.snapshot_growth", 100),
        .stats_interval_ms = ufo_config_int (config, "broker.stats_interval_ms", 5000),
        .bus_hwm = 100000,
        .max_peer_output_bytes = (size_t) ufo_config_int (config, "broker.max_peer_output_bytes", 64 << 20),
        .dispatch = {
            .heartbeat_ivl_ms = (int) ufo_config_int (config, "dispatch.heartbeat_ivl_ms", 1000),
            .heartbeat_liveness = (int) ufo_config_int (config, "dispatch.heartbeat_liveness", 3),
            .default_max_attempts = (int) ufo_config_int (config, "dispatch.default_max_attempts", 3),
            .default_deadline_ms = ufo_config_int (config, "dispatch.default_deadline_ms", 600000),
            .max_message_bytes = (size_t) ufo_config_int (config, "broker.max_message_bytes", 16 << 20),
        },
    };
    char cmd_ep [512], bus_ep [512];
    if (ufo_bb_endpoint (cfg.cmd_endpoint, "cmd", cmd_ep, sizeof cmd_ep, &err) != 0
    ||  ufo_bb_endpoint (cfg.bus_endpoint, "bus", bus_ep, sizeof bus_ep, &err) != 0) {
        fprintf (stderr, "ufo-broker: %s\n", err.message);
        ufo_config_destroy (&config);
        return 2;
    }
    cfg.cmd_endpoint = cmd_ep;
    cfg.bus_endpoint = bus_ep;
    //  CURVE (security.curve): before any thread starts (SIGHUP is read from a descriptor).
    bb_security_t *security = bb_security_new (config, cfg.max_message_bytes, &err);
    if (!security && err.code) {
        fprintf (stderr, "ufo-broker: security: %s\n", err.message);
        ufo_config_destroy (&config);
        return 1;
    }
    cfg.security = security;
    //  with roles, task data on the bus is for its submitter only (docs/PROTOCOL.md 3.6)
    cfg.dispatch.seal_bodies = security && !ufo_config_bool (config, "security.monitor_sees_bodies", false);
    int rc = 2;
    int fsync_policy = s_parse_fsync (fsync_text ? fsync_text : ufo_config_str (config, "broker.fsync", "always"));
    int64_t value;
    if (fsync_policy < 0)
        fprintf (stderr, "ufo-broker: --fsync must be always, everysec or no\n");
    else
    if (snap_text && !s_parse_int (snap_text, 1, &value))
        fprintf (stderr, "ufo-broker: --snapshot-every needs a positive integer\n");
    else
    if (growth_text && (!s_parse_int (growth_text, 0, &value) || value > 100000))
        fprintf (stderr, "ufo-broker: --snapshot-growth needs an integer from 0 to 100000\n");
    else
    if (stats_text && !s_parse_int (stats_text, 0, &value))
        fprintf (stderr, "ufo-broker: --stats-ms needs a non-negative integer\n");
    else
    if (hwm_text && !s_parse_int (hwm_text, 1, &value))
        fprintf (stderr, "ufo-broker: --bus-hwm needs a positive integer\n");
    else {
        cfg.fsync = (bb_fsync_t) fsync_policy;
        if (snap_text) {
            s_parse_int (snap_text, 1, &value);
            cfg.snapshot_every = (uint64_t) value;
        }
        if (growth_text) {
            s_parse_int (growth_text, 0, &value);
            cfg.snapshot_growth = (uint64_t) value;
        }
        if (stats_text) {
            s_parse_int (stats_text, 0, &value);
            cfg.stats_interval_ms = value;
        }
        if (hwm_text) {
            s_parse_int (hwm_text, 1, &value);
            cfg.bus_hwm = (int) (value > INT_MAX ? INT_MAX : value);
        }
        bb_server_t *server = bb_server_new (&cfg, &err);
        if (!server)
            ufo_error ("cannot start: %s", err.message);
        else {
            rc = bb_server_run (server) == 0 ? 0 : 1;
            bb_server_destroy (&server);
            ufo_info ("stopped%s", rc ? " after a fatal storage error" : " cleanly");
        }
        if (!server && rc == 2)
            rc = 1;
    }
    bb_security_destroy (&security);
    ufo_config_destroy (&config);
    return rc;
}
