/*  app_writer.h - one background thread that does the AppAgent's slow file work (PNG
    encoding and writing of the step's screenshots) off the event loop, in submission order.

    A job is a function and its argument; the writer owns the argument from submission on and
    frees it with the job's free function after running it. The loop thread never waits,
    except in app_writer_flush (called where a file must exist: before a screenshot is read
    back for the blackboard, and when a subtask ends, so everything it logged is on disk
    when its result is sent). */
#ifndef APP_WRITER_H_INCLUDED
#define APP_WRITER_H_INCLUDED

typedef struct _app_writer_t app_writer_t;
typedef void (app_writer_fn) (void *arg);

//  Starts the thread. Returns NULL (logged) when no thread can be started: then
//  app_writer_submit runs jobs at once in the caller.
app_writer_t *app_writer_new (void);

//  Runs every job still queued, stops the thread and frees the writer. Sets *self_p to
//  NULL. Safe with NULL.
void app_writer_destroy (app_writer_t **self_p);

//  Queues fn (arg), then free_fn (arg) (free_fn may be NULL). With self NULL both run at
//  once. Never fails.
void app_writer_submit (app_writer_t *self, app_writer_fn *fn, app_writer_fn *free_fn, void *arg);

//  Returns when every job submitted before the call has run. Safe with NULL.
void app_writer_flush (app_writer_t *self);

//  Jobs run so far (for tests and statistics).
unsigned long app_writer_done (app_writer_t *self);

#endif
