/*  test_opts.c - the binaries' command-line options (ufo_agent_opts_parse_table, getopt_long):
    the parser in-process, then the real ufo-broker, ufo-host, ufo-app and ufo-eval with good
    and bad arguments (documented flags, --help, --version, the messages for an unknown option
    and a missing value, exit codes), and ufo-app's --desktop-service flag beside the common
    options (ufo_agent_opts_parse_flags). */
#include "ufo_prelude.h"
#include "ufo_agent_opts.h"
#include "ufo_test.h"
#include <sys/wait.h>

static void
s_usage (FILE *out)
{
    fprintf (out, "usage: prog [--alpha A] [--beta B] [--flag]\n");
}

//  Runs the parser on a NULL-terminated argument list with stderr captured into err[size].
static int
s_parse (const char *const *args, const char **alpha, const char **beta, const char **flag, int *exit_code,
         char *err, size_t size)
{
    char *argv [16];
    int argc = 0;
    argv [argc++] = (char *) "prog";
    for (int i = 0; args [i] && argc < 15; i++)
        argv [argc++] = (char *) args [i];
    argv [argc] = NULL;
    *alpha = *beta = *flag = NULL;
    const ufo_agent_opt_t values [] = { { "--alpha", alpha }, { "--beta", beta }, { NULL, NULL } };
    const ufo_agent_opt_t flags [] = { { "--flag", flag }, { NULL, NULL } };
    fflush (stderr);
    int saved = dup (2);
    FILE *tmp = tmpfile ();
    dup2 (fileno (tmp), 2);
    *exit_code = -1;
    int rc = ufo_agent_opts_parse_table ("prog", argc, argv, values, flags, s_usage, exit_code);
    fflush (stderr);
    dup2 (saved, 2);
    close (saved);
    rewind (tmp);
    size_t n = fread (err, 1, size - 1, tmp);
    err [n] = 0;
    fclose (tmp);
    return rc;
}

UFO_TEST (test_parser)
{
    const char *a, *b, *f;
    int code;
    char err [2048];
    CHECK_INT (s_parse ((const char *[]) { "--alpha", "1", "--beta=two", "--flag", NULL }, &a, &b, &f, &code,
                        err, sizeof err), 0);
    CHECK_STR (a, "1");
    CHECK_STR (b, "two");
    CHECK_STR (f, "--flag");
    CHECK_STR (err, "");
    //  a value may start with a dash; an unambiguous prefix names the option
    CHECK_INT (s_parse ((const char *[]) { "--alp", "-x", NULL }, &a, &b, &f, &code, err, sizeof err), 0);
    CHECK_STR (a, "-x");
    CHECK (b == NULL && f == NULL);
    //  the parser can run again in the same process
    CHECK_INT (s_parse ((const char *[]) { "--beta", "3", NULL }, &a, &b, &f, &code, err, sizeof err), 0);
    CHECK (a == NULL);
    CHECK_STR (b, "3");

    struct { const char *args [4]; const char *message; } bad [] = {
        { { "--gamma", NULL }, "prog: unknown option \"--gamma\"\n" },
        { { "--alpha", NULL }, "prog: missing value after \"--alpha\"\n" },
        { { "--flag=1", NULL }, "prog: unknown option \"--flag=1\"\n" },
        { { "-x", NULL }, "prog: unknown option \"-x\"\n" },
        { { "--beta", "1", "stray", NULL }, "prog: unknown option \"stray\"\n" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bad); i++) {
        CHECK_INT (s_parse (bad [i].args, &a, &b, &f, &code, err, sizeof err), -1);
        CHECK_INT (code, 2);
        CHECK (strncmp (err, bad [i].message, strlen (bad [i].message)) == 0);
        CHECK_CONTAINS (err, "usage: prog");                //  the usage follows on stderr
    }
    CHECK_INT (s_parse ((const char *[]) { "--help", NULL }, &a, &b, &f, &code, err, sizeof err), -1);
    CHECK_INT (code, 0);
    CHECK_INT (s_parse ((const char *[]) { "-V", NULL }, &a, &b, &f, &code, err, sizeof err), -1);
    CHECK_INT (code, 0);
}

//  Runs a shell command; returns its exit status, with its stdout+stderr in out[size].
static int
s_run (const char *command, char *out, size_t size)
{
    FILE *p = popen (command, "r");
    if (!p)
        return -1;
    size_t n = fread (out, 1, size - 1, p);
    out [n] = 0;
    int status = pclose (p);
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

UFO_TEST (test_binaries)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    REQUIRE (build);
    //  flag: one documented flag; needed: what the program needs before it reads its configuration
    struct { const char *path; const char *program; const char *flag; const char *needed; } bins [] = {
        { "blackboard_broker/ufo-broker", "ufo-broker", "--data-dir", "" },
        { "host_agent/ufo-host", "ufo-host", "--broker", "" },
        { "app_agent/ufo-app", "ufo-app", "--subtask", "--app mousepad --device=test" },
        { "eval_agent/ufo-eval", "ufo-eval", "--capacity", "" },
    };
    char command [1400], out [16384], expected [200];
    for (size_t i = 0; i < UFO_ARRAY_SIZE (bins); i++) {
        const char *bin = bins [i].path;
        snprintf (command, sizeof command, "timeout 20 %s/%s --help 2>&1", build, bin);
        CHECK_INT (s_run (command, out, sizeof out), 0);
        CHECK_CONTAINS (out, bins [i].flag);                //  the documented flags are listed
        snprintf (command, sizeof command, "timeout 20 %s/%s --version 2>&1", build, bin);
        CHECK_INT (s_run (command, out, sizeof out), 0);
        snprintf (expected, sizeof expected, "%s (ufobus) ", bins [i].program);
        CHECK_CONTAINS (out, expected);
        snprintf (command, sizeof command, "timeout 20 %s/%s --no-such-flag 2>&1 >/dev/null", build, bin);
        CHECK_INT (s_run (command, out, sizeof out), 2);
        snprintf (expected, sizeof expected, "%s: unknown option \"--no-such-flag\"", bins [i].program);
        CHECK_CONTAINS (out, expected);
        CHECK_CONTAINS (out, "usage:");
        snprintf (command, sizeof command, "timeout 20 %s/%s --config 2>&1 >/dev/null", build, bin);
        CHECK_INT (s_run (command, out, sizeof out), 2);
        snprintf (expected, sizeof expected, "%s: missing value after \"--config\"", bins [i].program);
        CHECK_CONTAINS (out, expected);
        //  a value in the --opt=VALUE form reaches the program: a missing file is reported by name
        snprintf (command, sizeof command, "timeout 20 %s/%s %s --config=/nonexistent/ufo-opts.json 2>&1 >/dev/null",
                  build, bin, bins [i].needed);
        CHECK (s_run (command, out, sizeof out) != 0);
        CHECK_CONTAINS (out, "/nonexistent/ufo-opts.json");
    }
}

//  ufo-app --desktop-service: a flag among the common options; what it cannot be combined
//  with and what it needs are refused before anything starts.
UFO_TEST (test_desktop_service_flag)
{
    const char *build = getenv ("UFO_BUILD_DIR");
    REQUIRE (build);
    char command [1400], out [16384];
    struct { const char *args; int code; const char *message; } cases [] = {
        { "--desktop-service", 2, "ufo-app: --desktop-service needs --device ID" },
        { "--desktop-service --device= ", 2, "ufo-app: --desktop-service needs --device ID" },
        { "--desktop-service --device d --app mousepad", 2, "no --app, --subtask, --log-root or --llm-* with it" },
        { "--device d --desktop-service --subtask x.json", 2, "no --app, --subtask, --log-root or --llm-* with it" },
        { "--desktop-service --device d --llm-mode replay", 2, "no --app, --subtask, --log-root or --llm-* with it" },
        { "--desktop-service=yes --device d", 2, "ufo-app: unknown option \"--desktop-service=yes\"" },
        //  accepted: it goes on to the configuration, whose missing file is reported by name
        { "--desk --device=d --config=/nonexistent/ufo-desk.json", 2, "/nonexistent/ufo-desk.json" },
    };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (cases); i++) {
        snprintf (command, sizeof command, "timeout 20 %s/app_agent/ufo-app %s 2>&1 >/dev/null", build, cases [i].args);
        CHECK_INT (s_run (command, out, sizeof out), cases [i].code);
        CHECK_CONTAINS (out, cases [i].message);
    }
    snprintf (command, sizeof command, "timeout 20 %s/app_agent/ufo-app --help 2>&1", build);
    CHECK_INT (s_run (command, out, sizeof out), 0);
    CHECK_CONTAINS (out, "ufo-app --desktop-service --device ID");
}

int
main (void)
{
    UFO_RUN (test_parser);
    UFO_RUN (test_binaries);
    UFO_RUN (test_desktop_service_flag);
    return UFO_TEST_END ();
}
