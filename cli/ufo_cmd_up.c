/*  ufo_cmd_up.c - `ufo up [--workers N] [--apps LIST] [--devices N] [--config FILE]
    [--data-dir DIR] [--no-eval]`: the whole system on this machine.

    Starts ufo-broker (ipc endpoints in the run directory, data under
    $XDG_DATA_HOME/ufobus), then per device a virtual desktop (scripts/desktop-session,
    when there is no DISPLAY, and for every device after the first), one ufo-host, the
    device's desktop service (`ufo-app --desktop-service`: window lists and screenshots for
    `ufo mcp-server`) and N ufo-app workers per application of LIST (default "*": any
    application), and one ufo-eval. A child that exits is restarted with exponential backoff (bounded); Ctrl-C
    or SIGTERM stops everything, desktops included. The endpoints go into RUN_DIR/up.json,
    where `ufo run` and `ufo batch` find them. Binaries are looked up beside `ufo` (also
    the build tree's sibling directories), then in PATH; a missing one is skipped with a
    warning. Children's output goes to RUN_DIR/logs/<child>.log. */
#include "ufo_prelude.h"
#include "ufo_bb_proto.h"
#include "ufo_clock.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_paths.h"
#include "ufo_value.h"
#include <sys/prctl.h>
#include <sys/wait.h>
#include "ufo_cli.h"
#include "ufo_cli_session.h"
#include "ufo_cli_model.h"
#include "ufo_desktop.h"

#define S_MAX_CHILDREN 128
#define S_MAX_DEVICES 16
#define S_MAX_RESTARTS 20
#define S_STOP_GRACE_S 10.0

typedef struct {
    char name [96];
    char path [PATH_MAX];
    char *argv [16];
    int argc;
    int device;                 //  index into the devices, -1 for none
    pid_t pid;
    int restarts;
    double next_start;          //  when to (re)start, seconds on the monotonic clock
    double started_at;
    bool gave_up;
} s_child_t;

typedef struct {
    char id [32];
    char session [PATH_MAX];    //  desktop-session directory ("" = the caller's own display)
    char *env [16];             //  "NAME=VALUE" to set in the children
    int nenv;
    char *unset [4];
    int nunset;
} s_device_t;

static volatile sig_atomic_t s_stop = 0;

static void
s_on_signal (int sig)
{
    UFO_UNUSED (sig);
    s_stop = 1;
}

//  True if a launcher starts the application `app` by another name (its launcher name or
//  program belongs to the same profile: "libreoffice" is started by "libreoffice-writer").
static bool
s_app_launcher (const ufo_value_t *launchers, const char *app)
{
    for (size_t i = 0; i < ufo_value_size (launchers) && ufo_value_type (launchers) == UFO_TMAP; i++) {
        const char *argv0 = ufo_value_str (ufo_value_list_at (ufo_value_map_value_at (launchers, i), 0));
        if (ufo_desktop_same_app (ufo_value_map_key_at (launchers, i), app) || ufo_desktop_same_app (argv0, app))
            return true;
    }
    return false;
}

//  Finds an executable: beside ufo, in ../<subdir>/ (the build tree), then in PATH.
static bool
s_find_binary (const char *name, const char *subdir, char *out, size_t size)
{
    char exe [PATH_MAX];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe [n] = 0;
        char *slash = strrchr (exe, '/');
        if (slash)
            *slash = 0;
        int n1 = snprintf (out, size, "%s/%s", exe, name);
        if (n1 > 0 && (size_t) n1 < size && access (out, X_OK) == 0)
            return true;
        if (subdir) {
            int n2 = snprintf (out, size, "%s/../%s/%s", exe, subdir, name);
            if (n2 > 0 && (size_t) n2 < size && access (out, X_OK) == 0)
                return true;
        }
    }
    const char *path = getenv ("PATH");
    while (path && *path) {
        const char *colon = strchr (path, ':');
        size_t len = colon ? (size_t) (colon - path) : strlen (path);
        snprintf (out, size, "%.*s/%s", (int) len, path, name);
        if (len && access (out, X_OK) == 0)
            return true;
        path = colon ? colon + 1 : NULL;
    }
    return false;
}

static s_child_t *
s_add_child (s_child_t *children, int *count, const char *name, const char *binary, const char *subdir,
             int device)
{
    if (*count >= S_MAX_CHILDREN)
        return NULL;
    s_child_t *c = &children [*count];
    memset (c, 0, sizeof *c);
    if (!s_find_binary (binary, subdir, c->path, sizeof c->path)) {
        fprintf (stderr, "ufo up: %s not found (not built yet?); %s is not started\n", binary, name);
        return NULL;
    }
    snprintf (c->name, sizeof c->name, "%s", name);
    c->argv [c->argc++] = ufo_strdup (c->path);
    c->device = device;
    (*count)++;
    return c;
}

static void
s_arg (s_child_t *c, const char *arg)
{
    if (c && c->argc < (int) UFO_ARRAY_SIZE (c->argv) - 1)
        c->argv [c->argc++] = ufo_strdup (arg);
}

//  Starts a virtual desktop for a device: parses desktop-session's "export NAME=VALUE" lines.
static int
s_start_desktop (s_device_t *dev)
{
    char script [PATH_MAX];
    if (!ufo_data_find ("scripts/desktop-session", script, sizeof script)
    &&  !s_find_binary ("desktop-session", "scripts", script, sizeof script)) {
        fprintf (stderr, "ufo up: scripts/desktop-session not found\n");
        return -1;
    }
    char cmd [PATH_MAX + 64];
    snprintf (cmd, sizeof cmd, "'%s' start --owner %d", script, (int) getpid ());
    FILE *p = popen (cmd, "r");
    if (!p)
        return -1;
    char line [4096];
    while (fgets (line, sizeof line, p)) {
        line [strcspn (line, "\r\n")] = 0;
        if (strncmp (line, "unset ", 6) == 0) {
            char *save = NULL;
            for (char *t = strtok_r (line + 6, " ", &save); t && dev->nunset < 4; t = strtok_r (NULL, " ", &save))
                dev->unset [dev->nunset++] = ufo_strdup (t);
            continue;
        }
        if (strncmp (line, "export ", 7) != 0 || dev->nenv >= 15)
            continue;
        //  printf %q: plain words, or backslash escapes; drop the escaping backslashes
        char value [4096];
        size_t n = 0;
        for (const char *s = line + 7; *s && n + 1 < sizeof value; s++) {
            if (*s == '\\' && s [1])
                s++;
            value [n++] = *s;
        }
        value [n] = 0;
        dev->env [dev->nenv++] = ufo_strdup (value);
        if (strncmp (value, "UFO_DESKTOP_SESSION=", 20) == 0)
            snprintf (dev->session, sizeof dev->session, "%s", value + 20);
    }
    int status = pclose (p);
    if (status != 0 || !dev->session [0]) {
        fprintf (stderr, "ufo up: desktop-session start failed for device %s\n", dev->id);
        return -1;
    }
    return 0;
}

static void
s_stop_desktop (s_device_t *dev)
{
    if (!dev->session [0])
        return;
    char script [PATH_MAX];
    if (!ufo_data_find ("scripts/desktop-session", script, sizeof script)
    &&  !s_find_binary ("desktop-session", "scripts", script, sizeof script))
        return;
    pid_t pid = fork ();
    if (pid == 0) {
        execl (script, script, "stop", dev->session, (char *) NULL);
        _exit (127);
    }
    if (pid > 0)
        waitpid (pid, NULL, 0);
    dev->session [0] = 0;
}

static void
s_spawn (s_child_t *c, s_device_t *devices, const char *logdir)
{
    char log [PATH_MAX];
    snprintf (log, sizeof log, "%s/%s.log", logdir, c->name);
    pid_t pid = fork ();
    if (pid < 0) {
        fprintf (stderr, "ufo up: fork: %s\n", strerror (errno));
        c->next_start = ufo_time_mono_s () + 1;
        return;
    }
    if (pid == 0) {
        setpgid (0, 0);
        //  if ufo up itself is killed (SIGKILL, no clean stop), its children follow it
        prctl (PR_SET_PDEATHSIG, SIGTERM);
        if (getppid () == 1)
            _exit (0);
        int fd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2 (fd, STDOUT_FILENO);
            dup2 (fd, STDERR_FILENO);
            close (fd);
        }
        int null = open ("/dev/null", O_RDONLY);
        if (null >= 0) {
            dup2 (null, STDIN_FILENO);
            close (null);
        }
        if (c->device >= 0) {
            s_device_t *dev = &devices [c->device];
            for (int i = 0; i < dev->nunset; i++)
                unsetenv (dev->unset [i]);
            for (int i = 0; i < dev->nenv; i++)
                putenv (dev->env [i]);
        }
        signal (SIGINT, SIG_DFL);
        signal (SIGTERM, SIG_DFL);
        execv (c->path, c->argv);
        fprintf (stderr, "exec %s: %s\n", c->path, strerror (errno));
        _exit (127);
    }
    c->pid = pid;
    c->started_at = ufo_time_mono_s ();
}

static void
s_write_state (const char *path, const char *run_dir, const char *cmd, const char *bus, const char *data_dir,
               const char *log_root, s_device_t *devices, int ndev, s_child_t *children, int nchild)
{
    ufo_value_t *state = ufo_value_new_map ();
    ufo_value_map_set_int (state, "pid", getpid ());
    ufo_value_map_set_str (state, "cmd_endpoint", cmd);
    ufo_value_map_set_str (state, "bus_endpoint", bus);
    ufo_value_map_set_str (state, "run_dir", run_dir);
    ufo_value_map_set_str (state, "data_dir", data_dir);
    ufo_value_map_set_str (state, "log_root", log_root);
    ufo_value_t *devs = ufo_value_map_set (state, "devices", &(ufo_value_t *) { ufo_value_new_list () });
    for (int i = 0; i < ndev; i++) {
        ufo_value_t *d = ufo_value_new_map ();
        ufo_value_map_set_str (d, "id", devices [i].id);
        ufo_value_map_set_str (d, "desktop_session", devices [i].session);
        for (int k = 0; k < devices [i].nenv; k++)
            if (strncmp (devices [i].env [k], "DISPLAY=", 8) == 0)
                ufo_value_map_set_str (d, "display", devices [i].env [k] + 8);
        ufo_value_list_push (devs, &d);
    }
    ufo_value_t *kids = ufo_value_map_set (state, "children", &(ufo_value_t *) { ufo_value_new_list () });
    for (int i = 0; i < nchild; i++) {
        ufo_value_t *k = ufo_value_new_map ();
        ufo_value_map_set_str (k, "name", children [i].name);
        ufo_value_map_set_int (k, "pid", children [i].pid);
        ufo_value_list_push (kids, &k);
    }
    char *text = ufo_json_dump (state, UFO_JSON_PRETTY, NULL);
    char tmp [PATH_MAX];
    snprintf (tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen (tmp, "w");
    if (f) {
        fputs (text, f);
        fputc ('\n', f);
        fclose (f);
        rename (tmp, path);
    }
    free (text);
    ufo_value_destroy (&state);
}

int
ufo_cmd_up (int argc, char **argv)
{
    int workers = 1, ndev = 1;
    const char *apps = "*", *config_path = NULL, *data_arg = NULL;
    bool eval = true;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0) {
            ufo_cli_usage (stdout, "up");
            printf ("\nOptions:\n"
                    "  --workers N     AppAgent workers per application and device (default 1)\n"
                    "  --apps LIST     applications served, comma-separated (default \"*\": any)\n"
                    "  --devices N     devices (desktops) on this machine (default 1)\n"
                    "  --config FILE   configuration file passed to every process\n"
                    "  --data-dir DIR  broker data and session logs (default $XDG_DATA_HOME/ufobus)\n"
                    "  --no-eval       do not start the EvaluationAgent\n"
                    UFO_CLI_MODEL_HELP ("  ")
                    "The run directory ($UFO_RUN_DIR, $XDG_RUNTIME_DIR/ufobus or /tmp/ufobus-<uid>) holds\n"
                    "the ipc endpoints, up.json and the children's logs. Ctrl-C stops everything.\n");
            return UFO_CLI_OK;
        }
        if (strcmp (arg, "--no-eval") == 0) {
            eval = false;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf (stderr, "ufo up: unexpected %s\n", arg);
            ufo_cli_usage (stderr, "up");
            return UFO_CLI_USAGE;
        }
        const char *v = argv [++i];
        if (ufo_cli_model_option (arg, v)) {}        //  --api-type / --api-base / --model
        else if (strcmp (arg, "--workers") == 0 && (workers = atoi (v)) >= 1 && workers <= 16) {}
        else if (strcmp (arg, "--devices") == 0 && (ndev = atoi (v)) >= 1 && ndev <= S_MAX_DEVICES) {}
        else if (strcmp (arg, "--apps") == 0 && *v && strlen (v) < 512) apps = v;
        else if (strcmp (arg, "--config") == 0) config_path = v;
        else if (strcmp (arg, "--data-dir") == 0) data_arg = v;
        else {
            fprintf (stderr, "ufo up: bad option %s %s (workers 1..16, devices 1..%d)\n", arg, v, S_MAX_DEVICES);
            return UFO_CLI_USAGE;
        }
    }
    ufo_error_t err = { 0 };
    ufo_config_t *config = ufo_config_load (config_path, &err);
    if (!config) {
        fprintf (stderr, "ufo up: configuration: %s\n", err.message);
        return UFO_CLI_FAIL;
    }
    char run_dir [256], cmd [512], bus [512], data_dir [PATH_MAX], log_root [PATH_MAX + 8], logdir [300];
    char state_path [300];
    if (ufo_cli_run_dir (run_dir, sizeof run_dir, &err) != 0
    ||  ufo_bb_endpoint (ufo_config_str (config, "broker.cmd_endpoint", ""), "cmd", cmd, sizeof cmd, &err) != 0
    ||  ufo_bb_endpoint (ufo_config_str (config, "broker.bus_endpoint", ""), "bus", bus, sizeof bus, &err) != 0) {
        fprintf (stderr, "ufo up: %s\n", err.message);
        ufo_config_destroy (&config);
        return UFO_CLI_FAIL;
    }
    bool launchers_set = ufo_value_size (ufo_config_get (config, "desktop.launchers")) > 0;
    ufo_cli_model_at_start (config, stdout, "ufo up");     //  per-agent model, prices, quick doctor
    ufo_value_t *launchers = launchers_set ? ufo_value_dup (ufo_config_get (config, "desktop.launchers")) : NULL;
    ufo_config_destroy (&config);
    if (!launchers_set) {
        //  embedded default: the desktop applications installed here
        const char *known [] = { "mousepad", "gnome-calculator", "gedit", "gnome-text-editor", "xterm" };
        char found [PATH_MAX];
        launchers = ufo_value_new_map ();
        for (size_t i = 0; i < UFO_ARRAY_SIZE (known); i++)
            if (s_find_binary (known [i], NULL, found, sizeof found)) {
                ufo_value_t *argv1 = ufo_value_new_list ();
                ufo_value_list_push_str (argv1, known [i]);
                ufo_value_map_set (launchers, known [i], &argv1);
            }
        //  and the profiled applications installed here (LibreOffice Writer and Calc with a
        //  private profile, Firefox with its own): docs/DESKTOP.md "Application profiles"
        const ufo_value_t *profiles = ufo_desktop_profiles ();
        for (size_t i = 0; i < ufo_value_size (profiles); i++) {
            const ufo_value_t *own = ufo_value_map_get (ufo_value_map_value_at (profiles, i), "launchers");
            for (size_t k = 0; k < ufo_value_size (own); k++) {
                const char *argv0 = ufo_value_str (ufo_value_list_at (ufo_value_map_value_at (own, k), 0));
                if (argv0 && s_find_binary (argv0, NULL, found, sizeof found))
                    ufo_value_map_set_copy (launchers, ufo_value_map_key_at (own, k), ufo_value_map_value_at (own, k));
            }
        }
    }
    //  every application named in --apps needs a launcher ("*" serves any of them)
    char names [1024] = "";
    for (size_t i = 0, n = 0; i < ufo_value_size (launchers) && ufo_value_type (launchers) == UFO_TMAP; i++)
        if (n + strlen (ufo_value_map_key_at (launchers, i)) + 3 < sizeof names)
            n += (size_t) snprintf (names + n, sizeof names - n, "%s%s", n ? ", " : "",
                                    ufo_value_map_key_at (launchers, i));
    {
        char list [512];
        snprintf (list, sizeof list, "%s", apps);
        char *save = NULL;
        for (char *app = strtok_r (list, ",", &save); app; app = strtok_r (NULL, ",", &save))
            if (strcmp (app, "*") != 0 && !ufo_value_map_get (launchers, app) && !s_app_launcher (launchers, app)) {
                fprintf (stderr, "ufo up: --apps: no launcher for \"%s\"; launchers known: %s (desktop.launchers%s)\n",
                         app, *names ? names : "none", launchers_set ? " of the configuration" : ", default: the "
                         "applications installed here");
                ufo_value_destroy (&launchers);
                return UFO_CLI_USAGE;
            }
    }
    snprintf (state_path, sizeof state_path, "%s/up.json", run_dir);
    ufo_value_t *old = access (state_path, R_OK) == 0 ? ufo_json_parse_file (state_path, NULL, NULL) : NULL;
    int64_t old_pid = ufo_value_map_int (old, "pid", 0);
    ufo_value_destroy (&old);
    if (old_pid > 0 && old_pid != getpid () && kill ((pid_t) old_pid, 0) == 0) {
        fprintf (stderr, "ufo up: already running (pid %" PRId64 ", %s); `ufo down` stops it\n", old_pid, state_path);
        ufo_value_destroy (&launchers);
        return UFO_CLI_FAIL;
    }
    if (data_arg)
        snprintf (data_dir, sizeof data_dir, "%s", data_arg);
    else if (getenv ("XDG_DATA_HOME") && *getenv ("XDG_DATA_HOME"))
        snprintf (data_dir, sizeof data_dir, "%s/ufobus", getenv ("XDG_DATA_HOME"));
    else
        snprintf (data_dir, sizeof data_dir, "%s/.local/share/ufobus", getenv ("HOME") ? getenv ("HOME") : "/tmp");
    snprintf (log_root, sizeof log_root, "%s/logs", data_dir);
    snprintf (logdir, sizeof logdir, "%s/logs", run_dir);
    char mk [PATH_MAX * 2 + 64];
    int mkn = snprintf (mk, sizeof mk, "mkdir -p '%s' '%s' '%s/broker'", log_root, logdir, data_dir);
    if (mkn < 0 || (size_t) mkn >= sizeof mk || system (mk) != 0) {
        fprintf (stderr, "ufo up: cannot create %s\n", data_dir);
        ufo_value_destroy (&launchers);
        return UFO_CLI_FAIL;
    }
    //  the children find everything through the environment
    setenv ("UFO_RUN_DIR", run_dir, 1);
    setenv ("UFO_BROKER__CMD_ENDPOINT", cmd, 1);
    setenv ("UFO_BROKER__BUS_ENDPOINT", bus, 1);
    if (config_path)
        setenv ("UFO_CONFIG", config_path, 1);
    if (!launchers_set) {
        char *json = ufo_json_dump (launchers, UFO_JSON_COMPACT, NULL);
        setenv ("UFO_DESKTOP__LAUNCHERS", json ? json : "{}", 1);
        free (json);
    }
    struct sigaction sa = { .sa_handler = s_on_signal };
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    signal (SIGPIPE, SIG_IGN);

    s_device_t devices [S_MAX_DEVICES];
    memset (devices, 0, sizeof devices);
    const char *display = getenv ("DISPLAY");
    int code = UFO_CLI_OK;
    for (int d = 0; d < ndev; d++) {
        snprintf (devices [d].id, sizeof devices [d].id, "d%d", d);
        if (d == 0 && display && *display) {
            char env [300];
            snprintf (env, sizeof env, "DISPLAY=%s", display);
            devices [d].env [devices [d].nenv++] = ufo_strdup (env);
            continue;
        }
        if (s_start_desktop (&devices [d]) != 0) {
            code = UFO_CLI_FAIL;
            s_stop = 1;
            break;
        }
    }
    s_child_t children [S_MAX_CHILDREN];
    int nchild = 0;
    char name [96];
    s_child_t *c = s_add_child (children, &nchild, "broker", "ufo-broker", "blackboard_broker", -1);
    s_arg (c, "--data-dir");
    char broker_data [PATH_MAX + 16];
    snprintf (broker_data, sizeof broker_data, "%s/broker", data_dir);
    s_arg (c, broker_data);
    s_arg (c, "--cmd");
    s_arg (c, cmd);
    s_arg (c, "--bus");
    s_arg (c, bus);
    if (eval)
        s_add_child (children, &nchild, "eval", "ufo-eval", "eval_agent", -1);
    for (int d = 0; d < ndev && !s_stop; d++) {
        snprintf (name, sizeof name, "host-%.30s", devices [d].id);
        c = s_add_child (children, &nchild, name, "ufo-host", "host_agent", d);
        s_arg (c, "--device");
        s_arg (c, devices [d].id);
        //  the device's desktop queries (PROTOCOL.md 4.5), whatever its AppAgents are doing
        snprintf (name, sizeof name, "desktop-%.30s", devices [d].id);
        c = s_add_child (children, &nchild, name, "ufo-app", "app_agent", d);
        s_arg (c, "--desktop-service");
        s_arg (c, "--device");
        s_arg (c, devices [d].id);
        char list [512];
        snprintf (list, sizeof list, "%s", apps);
        char *save = NULL;
        for (char *app = strtok_r (list, ",", &save); app; app = strtok_r (NULL, ",", &save))
            for (int w = 0; w < workers; w++) {
                snprintf (name, sizeof name, "app-%.20s-%.40s-%d", devices [d].id, strcmp (app, "*") ? app : "any", w + 1);
                c = s_add_child (children, &nchild, name, "ufo-app", "app_agent", d);
                s_arg (c, "--app");
                s_arg (c, app);
                s_arg (c, "--device");
                s_arg (c, devices [d].id);
            }
    }
    if (!s_stop) {
        for (int i = 0; i < nchild; i++) {
            s_spawn (&children [i], devices, logdir);
            if (i == 0)
                usleep (200 * 1000);        //  the broker binds first
        }
        s_write_state (state_path, run_dir, cmd, bus, data_dir, log_root, devices, ndev, children, nchild);
        printf ("ufo up: %d process(es), %d device(s)\n  broker cmd: %s\n  broker bus: %s\n  run dir:    %s\n"
                "  data:       %s\n  logs:       %s (sessions), %s (processes)\n  state:      %s\n",
                nchild, ndev, cmd, bus, run_dir, data_dir, log_root, logdir, state_path);
        for (int d = 0; d < ndev; d++)
            for (int k = 0; k < devices [d].nenv; k++)
                if (strncmp (devices [d].env [k], "DISPLAY=", 8) == 0)
                    printf ("  device %s:  %s%s\n", devices [d].id, devices [d].env [k],
                            devices [d].session [0] ? " (virtual desktop)" : "");
        printf ("  launchers:  %s\n", *names ? names : "none (set desktop.launchers)");
        printf ("  apps:       %s\n", strcmp (apps, "*") == 0 ? "any (one AppAgent worker serves every application)"
                                                            : apps);
        printf ("Ctrl-C (or `ufo down`) stops everything.\n");
        fflush (stdout);
    }
    while (!s_stop) {
        int status;
        pid_t pid;
        while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
            for (int i = 0; i < nchild; i++)
                if (children [i].pid == pid) {
                    s_child_t *k = &children [i];
                    k->pid = 0;
                    if (ufo_time_mono_s () - k->started_at > 60)
                        k->restarts = 0;        //  it ran for a while: a fresh crash
                    if (++k->restarts > S_MAX_RESTARTS) {
                        k->gave_up = true;
                        fprintf (stderr, "ufo up: %s keeps exiting; gave up after %d restarts (see %s/%s.log)\n",
                                 k->name, S_MAX_RESTARTS, logdir, k->name);
                        continue;
                    }
                    double delay = 0.5 * (double) (1 << (k->restarts < 7 ? k->restarts - 1 : 6));
                    k->next_start = ufo_time_mono_s () + delay;
                    fprintf (stderr, "ufo up: %s (pid %d) %s %d; restarting in %.1f s\n", k->name, (int) pid,
                             WIFSIGNALED (status) ? "killed by signal" : "exited with",
                             WIFSIGNALED (status) ? WTERMSIG (status) : WEXITSTATUS (status), delay);
                }
        bool changed = false;
        for (int i = 0; i < nchild; i++)
            if (!children [i].pid && !children [i].gave_up && ufo_time_mono_s () >= children [i].next_start) {
                s_spawn (&children [i], devices, logdir);
                changed = true;
            }
        if (changed)
            s_write_state (state_path, run_dir, cmd, bus, data_dir, log_root, devices, ndev, children, nchild);
        usleep (100 * 1000);
    }
    //  stop: the workers first, the broker last
    fprintf (stderr, "ufo up: stopping\n");
    for (int i = nchild - 1; i >= 0; i--)
        if (children [i].pid > 0 && i > 0)
            kill (children [i].pid, SIGTERM);
    double until = ufo_time_mono_s () + S_STOP_GRACE_S;
    for (int phase = 0; phase < 2; phase++) {
        if (phase == 1 && nchild > 0 && children [0].pid > 0) {
            kill (children [0].pid, SIGTERM);
            until = ufo_time_mono_s () + S_STOP_GRACE_S;
        }
        for (;;) {
            bool alive = false;
            for (int i = phase == 0 ? 1 : 0; i < (phase == 0 ? nchild : 1); i++)
                if (children [i].pid > 0) {
                    if (waitpid (children [i].pid, NULL, WNOHANG) == children [i].pid)
                        children [i].pid = 0;
                    else
                        alive = true;
                }
            if (!alive)
                break;
            if (ufo_time_mono_s () > until) {
                for (int i = 0; i < nchild; i++)
                    if (children [i].pid > 0) {
                        fprintf (stderr, "ufo up: %s did not stop; killing it\n", children [i].name);
                        kill (children [i].pid, SIGKILL);
                        waitpid (children [i].pid, NULL, 0);
                        children [i].pid = 0;
                    }
                break;
            }
            usleep (50 * 1000);
        }
    }
    for (int d = 0; d < ndev; d++)
        s_stop_desktop (&devices [d]);
    unlink (state_path);
    for (int i = 0; i < nchild; i++)
        for (int a = 0; a < children [i].argc; a++)
            free (children [i].argv [a]);
    for (int d = 0; d < ndev; d++) {
        for (int k = 0; k < devices [d].nenv; k++)
            free (devices [d].env [k]);
        for (int k = 0; k < devices [d].nunset; k++)
            free (devices [d].unset [k]);
    }
    ufo_value_destroy (&launchers);
    fprintf (stderr, "ufo up: stopped\n");
    return code;
}
