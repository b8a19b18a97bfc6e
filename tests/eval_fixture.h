/*  eval_fixture.h - session log directories for the EvaluationAgent tests: a realistic
    response.log (HostAgent and AppAgent records with the fields of docs/LOGS.md),
    request.json, and real PNG screenshots (noise drawn with cairo, so they do not compress
    away and have realistic sizes). */
#ifndef EVAL_FIXTURE_H_INCLUDED
#define EVAL_FIXTURE_H_INCLUDED

typedef struct {
    int rounds;             //  1 or more; round r's request is "<tag> round <r>: ..."
    bool host_only;         //  the HostAgent finishes without any AppAgent step
    bool screenshots;       //  write the PNG files the records name
    int shot_width;         //  pixels (default 160 x 100)
    int shot_height;
    bool no_request_json;   //  requests only in the records' Request fields
} eval_fixture_opts_t;

//  What was written, for assertions.
typedef struct {
    int steps;              //  records in response.log
    int shots;              //  screenshot files written (steps + subtask and round finals)
    int shots_round [4];    //  per round (rounds < 4)
    long shot_bytes;        //  their total size
} eval_fixture_t;

//  Writes root/task/ for a session whose requests carry tag (e.g. "[case:complete]").
//  Returns 0, or -1 on an I/O error.
int eval_fixture_make (const char *root, const char *task, const char *tag,
                       const eval_fixture_opts_t *opts, eval_fixture_t *info);

//  Starts tests/ufo-llm-server (from $UFO_BUILD_DIR) with script text, its request log at
//  dir/requests.jsonl (copied into log_path). Returns the port, or -1; *pid_p gets the child.
int eval_fixture_server_start (const char *dir, const char *script, char *log_path, size_t size,
                               pid_t *pid_p);

//  Stops the server (SIGTERM, wait). Safe with *pid_p <= 0.
void eval_fixture_server_stop (pid_t *pid_p);

#endif
