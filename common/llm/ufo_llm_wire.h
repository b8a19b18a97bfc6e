/*  ufo_llm_wire.h - what goes on the wire for each API_TYPE: the request body, the headers,
    the reply fields, and an HTTP error explained with the setting to change. Private to the
    LLM client (ufo_llm.c) and `ufo doctor`; docs/LLM.md describes each API's shape.

    openai, aoai, azure_ad, ollama, gemini and any OpenAI-compatible server: the chat
    completions shape. claude: Anthropic's Messages API (top-level "system", image blocks
    with a base64 source, x-api-key and anthropic-version headers, usage input_tokens /
    output_tokens). REASONING_MODEL sends max_completion_tokens and no temperature / top_p. */
#ifndef UFO_LLM_WIRE_H_INCLUDED
#define UFO_LLM_WIRE_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_value.h"
#include "ufo_llm.h"

//  The anthropic-version header sent with API_TYPE claude.
#define UFO_LLM_ANTHROPIC_VERSION "2023-06-01"

//  True for API_TYPE claude (Anthropic Messages API).
bool ufo_llm_wire_is_claude (const ufo_llm_config_t *cfg);

//  The request body for messages (chat-completions form, as the agents build them) in the
//  shape cfg's API expects; json asks for a JSON object reply where the API can. Returns the
//  compact JSON text (caller frees) with its length in *len_p.
char *ufo_llm_wire_body (const ufo_llm_config_t *cfg, const ufo_value_t *messages, bool json,
                         size_t *len_p);

//  Header lines of one request. Holds the key: wipe it (ufo_llm_wire_headers_wipe) after use.
typedef struct {
    char lines [5][640];
    const char *list [6];       //  NULL-terminated, for ufo_http_post
} ufo_llm_headers_t;

//  Fills h for cfg (content type, the key in the API's header, anthropic-version, and
//  X-UFO-Agent when agent is not empty).
void ufo_llm_wire_headers (const ufo_llm_config_t *cfg, const char *agent, ufo_llm_headers_t *h);

//  Overwrites the header texts (they hold the key).
void ufo_llm_wire_headers_wipe (ufo_llm_headers_t *h);

//  Reads a 2xx reply body: *content_p (caller frees), prompt / completion tokens and the
//  finish reason ("length" when the reply hit the token limit, in both shapes). Returns 0,
//  or -1 with why ("no choices[0].message.content", ...) when the body is not a reply.
int ufo_llm_wire_reply (const ufo_llm_config_t *cfg, const ufo_value_t *body, char **content_p,
                        int64_t *prompt_tokens, int64_t *completion_tokens, char *finish,
                        size_t finish_size, char *why, size_t why_size);

//  The API's own message of an error body (error.message, error, message, or the start of
//  the body) into out, followed, when it names a parameter or feature the model does not
//  support (max_tokens, temperature, top_p, max_completion_tokens, reasoning_effort,
//  response_format, images), by " - " and the setting of cfg's block that fixes it.
void ufo_llm_wire_explain (const ufo_llm_config_t *cfg, long status, const char *body, size_t len,
                           char *out, size_t size);

#endif
