/*  ufo_cassette.h - record / replay of LLM exchanges.

    A cassette is a JSON-lines file, one exchange per line:
      {"key": hash of model + messages, "agent", "step", "model", "messages" (images replaced
       by their hash), "content", "usage": {"prompt_tokens", "completion_tokens"}, "latency_s",
       "finish_reason" (only when the API gave one, e.g. "length" for a reply cut at max_tokens)}
    Images take no part in the key (see ufo_cassette_key). Record appends (one write per line, so several agent processes may share a file).
    Replay loads the file and serves by key, each recording once in order (the last one again
    when a prompt repeats more often than recorded). A miss names the agent and step and shows
    where the prompt differs from the closest recording. */
#ifndef UFO_CASSETTE_H_INCLUDED
#define UFO_CASSETTE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_cassette_t ufo_cassette_t;

typedef enum {
    UFO_CASSETTE_RECORD = 1,
    UFO_CASSETTE_REPLAY = 2
} ufo_cassette_mode_t;

//  Parses "record" / "replay" (case-insensitive); returns the mode, or 0 for anything else
//  ("off", "", NULL).
int ufo_cassette_mode_parse (const char *text);

//  Opens a cassette. Record: opens path for appending (created 0600 if absent). Replay: reads
//  every line (a bad line is an error naming its line number). NULL with err on failure.
ufo_cassette_t *ufo_cassette_open (const char *path, ufo_cassette_mode_t mode, ufo_error_t *err);

//  Closes and frees; sets *self_p to NULL. Safe with NULL.
void ufo_cassette_destroy (ufo_cassette_t **self_p);

ufo_cassette_mode_t ufo_cassette_mode (const ufo_cassette_t *self);
const char *ufo_cassette_path (const ufo_cassette_t *self);
size_t ufo_cassette_size (const ufo_cassette_t *self);     //  recordings loaded (replay)

//  The messages as stored: a deep copy where each image data URL is replaced by
//  "image:<hash>:<length>". Caller owns.
ufo_value_t *ufo_cassette_normalize (const ufo_value_t *messages);

//  The lookup key of model + messages: the SHA-256 (64 hex digits) of the compact JSON of
//  [model, messages with every image replaced by "image"]. Images do not take part in
//  matching: screenshots of a real desktop differ from run to run in pixels (clock, cursor),
//  so replay matches on the text and the number and place of the images. Writes 65 bytes.
void ufo_cassette_key (const char *model, const ufo_value_t *messages, char key [65]);

//  Appends one exchange (record mode). finish_reason is the API's choices[0].finish_reason
//  (NULL or "" when none; stored only when given). Returns 0, or -1 with err.
int ufo_cassette_record (ufo_cassette_t *self, const char *agent, int64_t step, const char *model,
                         const ufo_value_t *messages, const char *content, const char *finish_reason,
                         int64_t prompt_tokens, int64_t completion_tokens, double latency_s,
                         ufo_error_t *err);

//  The longest finish_reason a recording keeps (longer ones are dropped as bad input).
#define UFO_CASSETTE_FINISH_MAX 32

//  Looks up an exchange (replay mode). On a hit returns 0 and sets *content_p (caller frees),
//  finish_reason (when not NULL: the recorded finish_reason, "" when none was recorded), the
//  token counts and the recorded latency. On a miss returns -1 and sets *why_p (caller
//  frees) to a multi-line explanation naming agent and step, the closest recording and the
//  first place its messages differ, with short excerpts.
int ufo_cassette_lookup (ufo_cassette_t *self, const char *agent, int64_t step, const char *model,
                         const ufo_value_t *messages, char **content_p,
                         char finish_reason [UFO_CASSETTE_FINISH_MAX],
                         int64_t *prompt_tokens, int64_t *completion_tokens, double *latency_s,
                         char **why_p);

#endif
