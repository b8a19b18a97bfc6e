/*  ufo_tasklog.h - the files of one session's log directory, logs/<task>/ (docs/LOGS.md).

    Several processes (HostAgent, AppAgents, EvaluationAgent) may write the same task's
    logs at once: JSON-lines files are appended with O_APPEND and one write() per record,
    so lines never interleave; whole-file JSON documents are replaced atomically
    (temporary file + rename). Secrets registered with ufo_tasklog_add_secret, and the
    values of keys that name credentials (api_key, authorization, ...), are written as
    "***" in every record. */
#ifndef UFO_TASKLOG_H_INCLUDED
#define UFO_TASKLOG_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_tasklog_t ufo_tasklog_t;

//  Opens (creating as needed, like mkdir -p) the directory root/task. task must be a
//  single path component (no '/', not "." or ".."). Returns NULL with err on failure.
ufo_tasklog_t *ufo_tasklog_open (const char *root, const char *task, ufo_error_t *err);

//  Closes the log; sets *self_p to NULL. Safe with NULL.
void ufo_tasklog_destroy (ufo_tasklog_t **self_p);

//  The directory (borrowed).
const char *ufo_tasklog_dir (const ufo_tasklog_t *self);

//  Writes the full path of a file in the directory into out[size]; returns out.
//  The name may contain one subdirectory level ("ui_trees/ui_tree_step3.json"),
//  which is created when needed.
char *ufo_tasklog_path (ufo_tasklog_t *self, const char *name, char *out, size_t size);

//  Registers a secret (e.g. an API key) that must never appear in any record. Copies it.
//  Empty or very short strings (< 4 bytes) are ignored, as they would redact ordinary text.
void ufo_tasklog_add_secret (ufo_tasklog_t *self, const char *secret);

//  Appends record (any value, usually a map) as one JSON line to the named JSON-lines
//  file ("response.log", "request.log", "evaluation.log"), after redaction. The caller
//  keeps record. Returns 0, or -1 with err.
int ufo_tasklog_append (ufo_tasklog_t *self, const char *name, const ufo_value_t *record,
                        ufo_error_t *err);

//  Replaces the named file with the pretty JSON of value, atomically. Returns 0 or -1.
int ufo_tasklog_write_json (ufo_tasklog_t *self, const char *name, const ufo_value_t *value,
                            ufo_error_t *err);

//  Replaces the named file with bytes[0..len), atomically. Returns 0 or -1.
int ufo_tasklog_write_file (ufo_tasklog_t *self, const char *name, const void *bytes,
                            size_t len, ufo_error_t *err);

//  Reads a JSON-lines file of the directory into a list of values (bad lines skipped
//  with a warning naming file and line). A missing file gives an empty list. Caller owns.
ufo_value_t *ufo_tasklog_read_lines (ufo_tasklog_t *self, const char *name);

//  True when root may be used as a log root taken from a task body: a non-empty path of at
//  most 1024 bytes without a ".." component (so logs/<task>/ cannot climb out of it).
bool ufo_tasklog_root_safe (const char *root);

//  Returns a deep copy of value with secrets and credential-named keys redacted.
ufo_value_t *ufo_tasklog_redact (const ufo_tasklog_t *self, const ufo_value_t *value);

#endif
