/*  ufo_loop.h - the one event loop of an agent process (issue 17, part 1).

    A loop polls ZeroMQ sockets (czmq zsock_t * or libzmq handles) and plain file
    descriptors together (zmq_poll, which also handles the edge-triggered ZMQ_FD), runs
    timers, and serves "sources": components whose descriptors and deadlines change from
    turn to turn (the LLM client, an HTTP client, a broker link). The poll timeout is the
    nearest timer or source deadline, never a fixed cap, so an idle process sleeps until
    something is due (as libuv does).

    One turn (ufo_loop_run_once):
      1. every source's `service` runs (it does due work and may deliver events);
      2. every source adds its poll items and its deadline (`items`), readers add theirs;
      3. zmq_poll waits until an item is ready, the nearest deadline, or a signal;
      4. ready readers' callbacks run, every source's `dispatch` gets its items back,
         due timers run.
    Callbacks may add and remove readers, timers and sources, and may call ufo_loop_stop.
    One owner thread; nothing here is thread-safe. Implementation: common/bus/ufo_loop.c. */
#ifndef UFO_LOOP_H_INCLUDED
#define UFO_LOOP_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ufo_llm.h"
#include "ufo_http.h"           //  ufo_http_t, ufo_http_fd_t

typedef struct _ufo_loop_t ufo_loop_t;

#define UFO_LOOP_IN   1
#define UFO_LOOP_OUT  2
#define UFO_LOOP_ERR  4

//  One thing to poll: a socket (czmq zsock_t * or a libzmq handle; fd ignored) or, when
//  socket is NULL, a file descriptor. events / revents: UFO_LOOP_IN | UFO_LOOP_OUT (| ERR).
typedef struct {
    void *socket;
    int fd;
    int events;
    int revents;
} ufo_loop_item_t;

//  A source. All three callbacks are optional.
typedef struct {
    //  Due work (timers, events to hand on); runs first in every turn.
    void (*service) (void *arg);
    //  Adds up to max items; returns how many. *timeout_ms comes in as -1 (no deadline) and
    //  is set to the ms until the source needs a turn without I/O (0 = at once).
    size_t (*items) (void *arg, ufo_loop_item_t *items, size_t max, int *timeout_ms);
    //  After the poll: the same items with revents filled in (n may be 0).
    void (*dispatch) (void *arg, ufo_loop_item_t *items, size_t n);
} ufo_loop_source_t;

typedef void (ufo_loop_fn) (ufo_loop_t *loop, void *arg);

//  A new, empty loop.
ufo_loop_t *ufo_loop_new (void);

//  Frees the loop (readers, timers and sources are forgotten, not called). Safe with NULL.
void ufo_loop_destroy (ufo_loop_t **self_p);

//  Calls fn whenever socket (or, socket NULL, fd) is readable. Returns an id > 0.
int ufo_loop_reader_add (ufo_loop_t *self, void *socket, int fd, ufo_loop_fn *fn, void *arg);

//  Calls fn once after delay_ms, then every interval_ms if interval_ms > 0 (else once).
//  Returns an id > 0.
int ufo_loop_timer_add (ufo_loop_t *self, int delay_ms, int interval_ms, ufo_loop_fn *fn, void *arg);

//  Adds a source (the struct is copied). Returns an id > 0.
int ufo_loop_source_add (ufo_loop_t *self, const ufo_loop_source_t *source, void *arg);

//  Removes a reader, timer or source by id (0 and unknown ids are ignored). Takes effect
//  at once: a removed callback is not called again, not even later in the same turn.
void ufo_loop_remove (ufo_loop_t *self, int id);

//  One turn, sleeping at most max_wait_ms (-1: as long as nothing is due). Returns 0, or
//  -1 when the ZeroMQ context was terminated.
int ufo_loop_run_once (ufo_loop_t *self, int max_wait_ms);

//  Runs turns until ufo_loop_stop (or a caught signal). Returns 0, or -1 as run_once.
int ufo_loop_run (ufo_loop_t *self);

//  Makes ufo_loop_run return after the current turn.
void ufo_loop_stop (ufo_loop_t *self);
bool ufo_loop_stopped (ufo_loop_t *self);

//  Stops the loop when fd (the read end of a signal self-pipe, ufo_agent_signal_fd) becomes
//  readable; the pipe is drained. Returns the reader id.
int ufo_loop_stop_on (ufo_loop_t *self, int fd);

//  Turns run so far (each is one wake-up: a measure for idle cost in tests and benches).
uint64_t ufo_loop_turns (ufo_loop_t *self);

//  Serves an LLM client (ufo_llm_fds / ufo_llm_timeout / ufo_llm_process) as a source: its
//  completion callbacks run from the loop. llm must outlive the source. Returns the id.
typedef struct _ufo_llm_t ufo_llm_t;
int ufo_loop_add_llm (ufo_loop_t *self, ufo_llm_t *llm);

//  The same for an HTTP client (ufo_http_fds / ufo_http_timeout / ufo_http_process).
int ufo_loop_add_http (ufo_loop_t *self, ufo_http_t *http);

//  For a source of its own whose descriptors are ufo_http_fd_t (e.g. the MCP servers of
//  ufo_mcp_hub): copies n of them (at most 64 and max) into items and returns how many;
//  and back, revents included, returning how many (at most 64).
size_t ufo_loop_items_from_http (ufo_loop_item_t *items, size_t max, const ufo_http_fd_t *fds, size_t n);
size_t ufo_loop_items_to_http (ufo_http_fd_t *fds, const ufo_loop_item_t *items, size_t n);

#endif
