/*  ufo_http.h - asynchronous HTTP POST over libcurl's multi interface, driven by the
    caller's event loop. The only module that includes curl headers.

    The caller asks for the sockets to watch (ufo_http_fds) and the longest time it may
    sleep (ufo_http_timeout), polls them in its own loop together with its other sockets,
    and hands the ready ones back (ufo_http_process). Nothing here ever blocks: completed
    transfers are reported through a callback from inside ufo_http_process. */
#ifndef UFO_HTTP_H_INCLUDED
#define UFO_HTTP_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_error.h"

typedef struct _ufo_http_t ufo_http_t;

//  Event bits for ufo_http_fd_t.events / revents (same meaning as POLLIN / POLLOUT / POLLERR).
#define UFO_HTTP_IN   1
#define UFO_HTTP_OUT  2
#define UFO_HTTP_ERR  4

typedef struct {
    int fd;                 //  a socket to watch
    int events;             //  UFO_HTTP_IN | UFO_HTTP_OUT wanted
    int revents;            //  filled in by the caller's poll before ufo_http_process
} ufo_http_fd_t;

typedef struct {
    int64_t id;             //  the id ufo_http_post returned
    int transport;          //  0 = a complete HTTP response arrived; else a transport failure
    bool timed_out;         //  the transfer hit its timeout
    char error [256];       //  transport failure text ("connection refused", ...)
    long status;            //  HTTP status, 0 when no response line arrived
    const char *body;       //  response body (NUL-terminated), borrowed for the callback
    size_t body_len;
    bool body_overflow;     //  the body exceeded max_body and was cut
    double retry_after_s;   //  Retry-After header in seconds, -1 when absent or unparsable
    double elapsed_s;       //  wall time of the transfer
    const char *headers;    //  the response's header lines (raw, NUL-terminated, <= 64 KiB)
} ufo_http_result_t;

//  Copies the value of response header `name` (any case) of result into out[size].
//  Returns its length, or -1 when absent or longer than size - 1 (out is then "").
int ufo_http_header (const ufo_http_result_t *result, const char *name, char *out, size_t size);

//  Called once per transfer from inside ufo_http_process (never for cancelled transfers).
//  The result and its body are only valid during the call. The callback may post or cancel.
typedef void (ufo_http_done_fn) (const ufo_http_result_t *result, void *arg);

//  Creates a client with its own curl multi handle. Returns NULL if curl cannot start.
ufo_http_t *ufo_http_new (void);

//  Aborts every transfer (no callbacks), frees everything, sets *self_p to NULL. Safe twice.
void ufo_http_destroy (ufo_http_t **self_p);

//  Starts a POST of body[0..len) to url with extra header lines ("Name: value", a NULL-ended
//  array, may be NULL). timeout_ms bounds the whole transfer (0 = none); max_body bounds the
//  response (0 = 16 MiB). The header values are copied and never logged.
//  Returns a positive id, or -1 with err filled in.
int64_t ufo_http_post (ufo_http_t *self, const char *url, const char *const *headers,
                       const char *body, size_t len, long timeout_ms, size_t max_body,
                       ufo_http_done_fn *done, void *arg, ufo_error_t *err);

//  Starts a GET of url; otherwise as ufo_http_post. Returns a positive id, or -1 with err.
int64_t ufo_http_get (ufo_http_t *self, const char *url, const char *const *headers, long timeout_ms,
                      size_t max_body, ufo_http_done_fn *done, void *arg, ufo_error_t *err);

//  Aborts a transfer; its callback is not called. Returns 0, or -1 if id is unknown.
int ufo_http_cancel (ufo_http_t *self, int64_t id);

//  Number of transfers in flight.
size_t ufo_http_active (const ufo_http_t *self);

//  Copies up to max sockets to watch into fds; returns how many there are (may exceed max).
size_t ufo_http_fds (const ufo_http_t *self, ufo_http_fd_t *fds, size_t max);

//  Milliseconds until ufo_http_process must be called even if no socket is ready;
//  -1 when curl has no timer pending.
int ufo_http_timeout (const ufo_http_t *self);

//  Drives curl: hands it the sockets with revents set (fds may be NULL with n = 0), fires due
//  timers and calls the completion callbacks. Returns the number of transfers completed.
int ufo_http_process (ufo_http_t *self, const ufo_http_fd_t *fds, size_t n);

//  Whether a connection to url's host and port (TLS included for https) can be made within
//  timeout_ms, name resolution included. BLOCKS the caller: for command-line checks
//  (`ufo doctor`, `ufo up` at start), never in an event loop. Returns 0, or -1 with why.
int ufo_http_probe (const char *url, long timeout_ms, char *why, size_t size);

//  For a caller without an event loop of its own (a command-line tool, a test): polls and
//  processes until *done becomes true or timeout_ms passed. Returns 0, or -1 on timeout.
int ufo_http_wait (ufo_http_t *self, const bool *done, int timeout_ms);


#endif
