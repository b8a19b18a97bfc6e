/*  bb_test_util.h - helpers for the blackboard broker's system tests: a temporary
    directory, starting / stopping / killing a real ufo-broker child process, a client
    connected once the broker answers, numbered test items. */
#ifndef BB_TEST_UTIL_H_INCLUDED
#define BB_TEST_UTIL_H_INCLUDED

#include "ufo_prelude.h"
#include "ufo_bb_client.h"
#include "ufo_cert.h"
#include "ufo_error.h"
#include "ufo_json.h"
#include "ufo_tasks.h"
#include "ufo_value.h"
#include "ufo_wait.h"
#include <sys/wait.h>
#include <ftw.h>
#include <dirent.h>

typedef struct {
    char dir [256];             //  temporary directory of the test
    char data_dir [300];
    char cmd [320];
    char bus [320];
    pid_t pid;
} bb_test_broker_t;

static inline int
s_bb_rm_entry (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void) st; (void) flag; (void) ftw;
    return remove (path);
}

static inline void
bb_test_rmtree (const char *dir)
{
    nftw (dir, s_bb_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

//  A new temporary directory base/ufo-NAME-XXXXXX for a broker, its data directory and
//  ipc endpoints named inside it (the broker is not started). Exits when mkdtemp fails.
static inline void
bb_test_init_in (bb_test_broker_t *b, const char *base, const char *name)
{
    memset (b, 0, sizeof *b);
    snprintf (b->dir, sizeof b->dir, "%s/ufo-%s-XXXXXX", base, name);
    if (!mkdtemp (b->dir)) {
        perror ("mkdtemp");
        exit (1);
    }
    snprintf (b->data_dir, sizeof b->data_dir, "%s/data", b->dir);
    snprintf (b->cmd, sizeof b->cmd, "ipc://%s/cmd", b->dir);
    snprintf (b->bus, sizeof b->bus, "ipc://%s/bus", b->dir);
}

//  bb_test_init_in under /tmp.
static inline void
bb_test_init (bb_test_broker_t *b, const char *name)
{
    bb_test_init_in (b, "/tmp", name);
}

static inline const char *
bb_test_binary (void)
{
    static char path [1024];
    const char *build = getenv ("UFO_BUILD_DIR");
    snprintf (path, sizeof path, "%s/blackboard_broker/ufo-broker", build ? build : ".");
    return path;
}

//  Starts the broker with extra arguments (NULL-terminated list); waits until it answers
//  on its command socket (the caller passes a ping function) is left to the caller.
static inline pid_t
bb_test_start (bb_test_broker_t *b, const char *const *extra)
{
    const char *argv [32];
    int n = 0;
    argv [n++] = bb_test_binary ();
    argv [n++] = "--data-dir"; argv [n++] = b->data_dir;
    argv [n++] = "--cmd"; argv [n++] = b->cmd;
    argv [n++] = "--bus"; argv [n++] = b->bus;
    for (int i = 0; extra && extra [i] && n < 30; i++)
        argv [n++] = extra [i];
    argv [n] = NULL;
    pid_t pid = fork ();
    if (pid == 0) {
        if (!getenv ("BB_TEST_VERBOSE")) {
            int fd = open ("/dev/null", O_WRONLY);
            char log [400];
            snprintf (log, sizeof log, "%s/broker.log", b->dir);
            int lfd = open (log, O_WRONLY | O_CREAT | O_APPEND, 0644);
            dup2 (lfd >= 0 ? lfd : fd, 2);
        }
        execv (argv [0], (char *const *) argv);
        perror ("execv ufo-broker");
        _exit (127);
    }
    b->pid = pid;
    return pid;
}

//  Sends sig and waits (bounded, 20 s) for the broker to exit. Returns its exit status
//  (WEXITSTATUS), 128+signal if killed, -1 on timeout (then it is SIGKILLed).
static inline int
bb_test_stop (bb_test_broker_t *b, int sig)
{
    if (b->pid <= 0)
        return -1;
    kill (b->pid, sig);
    for (int i = 0; i < 2000; i++) {
        int status;
        pid_t rc = waitpid (b->pid, &status, WNOHANG);
        if (rc == b->pid) {
            b->pid = 0;
            return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
        }
        usleep (10000);
    }
    kill (b->pid, SIGKILL);
    waitpid (b->pid, NULL, 0);
    b->pid = 0;
    return -1;
}

//  Waits (bounded) for a started broker to exit on its own; returns its status as above.
static inline int
bb_test_wait_exit (bb_test_broker_t *b, int timeout_ms)
{
    for (int i = 0; i < timeout_ms / 10; i++) {
        int status;
        if (waitpid (b->pid, &status, WNOHANG) == b->pid) {
            b->pid = 0;
            return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
        }
        usleep (10000);
    }
    return bb_test_stop (b, SIGKILL) < 0 ? -1 : -2;
}

//  Lines of the broker's log (DIR/broker.log) that contain needle, counted now.
static inline int
bb_test_log_count (const bb_test_broker_t *b, const char *needle)
{
    char path [400], line [4096];
    snprintf (path, sizeof path, "%s/broker.log", b->dir);
    FILE *f = fopen (path, "r");
    int n = 0;
    while (f && fgets (line, sizeof line, f))
        n += strstr (line, needle) != NULL;
    if (f)
        fclose (f);
    return n;
}

static inline void
bb_test_cleanup (bb_test_broker_t *b)
{
    if (b->pid > 0)
        bb_test_stop (b, SIGKILL);
    if (!getenv ("BB_TEST_KEEP"))
        bb_test_rmtree (b->dir);
}

//  True when a line of the broker's log (DIR/broker.log) contains needle.
static inline bool
bb_test_log_has (const bb_test_broker_t *b, const char *needle)
{
    char path [400];
    snprintf (path, sizeof path, "%s/broker.log", b->dir);
    FILE *f = fopen (path, "r");
    char line [2048];
    bool found = false;
    while (f && !found && fgets (line, sizeof line, f))
        found = strstr (line, needle) != NULL;
    if (f)
        fclose (f);
    return found;
}

//  Waits (bounded) until the broker's log contains needle; false if it did not in time.
static inline bool
bb_test_log_contains (const bb_test_broker_t *b, const char *needle, int timeout_ms)
{
    WAIT_UNTIL (bb_test_log_has (b, needle), timeout_ms);
    return bb_test_log_has (b, needle);
}

//  A client of the broker's command endpoint (and bus, when not NULL), returned once the
//  broker answers a ping (bounded: wait_ms); its calls then time out after timeout_ms.
//  NULL when the broker did not answer in time.
static inline ufo_bb_client_t *
bb_test_connect (const bb_test_broker_t *b, const char *bus, int wait_ms, int timeout_ms)
{
    ufo_error_t err;
    ufo_bb_client_t *c = ufo_bb_client_new (b->cmd, bus, &err);
    if (!c)
        return NULL;
    ufo_bb_client_set_timeout (c, 250);
    bool up = false;
    for (int64_t until = ufo_time_mono_ms () + wait_ms; !up && ufo_time_mono_ms () < until;) {
        ufo_value_t *r = ufo_bb_client_call (c, "ping", NULL, NULL, 0, NULL, NULL, &err);
        up = r != NULL;
        ufo_value_destroy (&r);
    }
    if (!up)
        ufo_bb_client_destroy (&c);
    else
        ufo_bb_client_set_timeout (c, timeout_ms);
    return c;
}

//  Sends type with a JSON body (json: NULL for none). Returns 0 for an ok reply (*reply_p,
//  when given, receives its body; caller owns), else the error code; message[200], when
//  given, receives the error message ("" on success).
static inline int
bb_test_call (ufo_bb_client_t *c, const char *type, const char *json, ufo_value_t **reply_p, char *message)
{
    ufo_error_t err;
    ufo_value_t *body = json ? ufo_json_parse_str (json, &err) : NULL;
    ufo_value_t *reply = ufo_bb_client_call (c, type, &body, NULL, 0, NULL, NULL, &err);
    if (message)
        snprintf (message, 200, "%.190s", reply ? "" : err.message);
    if (!reply)
        return err.code;
    if (reply_p)
        *reply_p = reply;
    else
        ufo_value_destroy (&reply);
    return 0;
}

//  Starts the broker (extra: as bb_test_start) and waits (bounded, 10 s) until it answers.
static inline bool
bb_test_start_answering (bb_test_broker_t *b, const char *const *extra)
{
    bb_test_start (b, extra);
    ufo_bb_client_t *c = bb_test_connect (b, NULL, 10000, 1000);
    bool up = c != NULL;
    ufo_bb_client_destroy (&c);
    return up;
}

//  The public key of the certificate keys_dir/broker.cert into key[41] (what a CURVE client
//  of the test's broker needs). False, with the reason on stderr, when it cannot be loaded.
static inline bool
bb_test_broker_key (const char *keys_dir, char key [41])
{
    ufo_error_t err;
    char path [600];
    snprintf (path, sizeof path, "%s/broker.cert", keys_dir);
    ufo_cert_t *broker = ufo_cert_load (path, &err);
    if (!broker) {
        fprintf (stderr, "%s\n", err.message);
        return false;
    }
    snprintf (key, 41, "%s", ufo_cert_public_key (broker));
    ufo_cert_destroy (&broker);
    return true;
}

//  Submits a task (takes *spec_p; its id into task[33]) and waits (bounded, 10 s) until the
//  broker has accepted it, that is, made it durable. Other events meanwhile are dropped.
//  Returns true once accepted.
static inline bool
bb_test_submit_accepted (ufo_tasks_t *tasks, ufo_value_t **spec_p, char task [33])
{
    ufo_error_t err;
    if (ufo_tasks_submit (tasks, spec_p, task, &err) != 0)
        return false;
    bool accepted = false;
    for (int64_t until = ufo_time_mono_ms () + 10000; !accepted && ufo_time_mono_ms () < until;) {
        ufo_value_t *ev = ufo_tasks_next (tasks, 100);
        accepted = ev && strcmp (ufo_value_map_str (ev, "kind", ""), "accepted") == 0;
        ufo_value_destroy (&ev);
    }
    return accepted;
}

//  Adds item {"n": n, "text": text} to board/memory. Returns 0 when it was acknowledged,
//  else the error code; message[200] receives the error message ("" on success).
static inline int
bb_test_add_n (ufo_bb_client_t *c, const char *board, const char *memory, int n, const char *text,
               char *message)
{
    ufo_value_t *body = ufo_value_new_map ();
    ufo_value_map_set_str (body, "board", board);
    ufo_value_map_set_str (body, "memory", memory);
    ufo_value_t *item = ufo_value_new_map ();
    ufo_value_map_set_int (item, "n", n);
    ufo_value_map_set_str (item, "text", text);
    ufo_value_map_set (body, "item", &item);
    ufo_error_t err;
    ufo_value_t *reply = ufo_bb_client_call (c, "bb.add", &body, NULL, 0, NULL, NULL, &err);
    snprintf (message, 200, "%.190s", reply ? "" : err.message);
    int rc = reply ? 0 : err.code;
    ufo_value_destroy (&reply);
    return rc;
}

//  Counts the items of board/memory by their "n": counts[n] for n < cap. Returns the
//  number of items, or -1 when the snapshot failed.
static inline int
bb_test_count_n (ufo_bb_client_t *c, const char *board, const char *memory, int *counts, int cap)
{
    ufo_error_t err;
    ufo_value_t *snap = ufo_bb_client_snapshot (c, board, memory, 0, &err);
    if (!snap)
        return -1;
    const ufo_value_t *items = ufo_value_map_get (ufo_value_map_get (snap, "board"), memory);
    memset (counts, 0, (size_t) cap * sizeof *counts);
    int n = (int) ufo_value_size (items);
    for (int i = 0; i < n; i++) {
        int64_t k = ufo_value_map_int (ufo_value_list_at (items, (size_t) i), "n", -1);
        if (k >= 0 && k < cap)
            counts [k]++;
    }
    ufo_value_destroy (&snap);
    return n;
}

#endif
