/*  app_writer.c - the AppAgent's background file writer (see app_writer.h). */
#include "ufo_prelude.h"
#include "ufo_log.h"
#include "app_writer.h"
#include <pthread.h>

typedef struct s_job_t {
    app_writer_fn *fn, *free_fn;
    void *arg;
    struct s_job_t *next;
} s_job_t;

struct _app_writer_t {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;            //  a job was queued, or stop
    pthread_cond_t idle;            //  a job finished
    s_job_t *head, *tail;
    unsigned long submitted, done;
    bool stop;
};

static void
s_run (s_job_t *job)
{
    job->fn (job->arg);
    if (job->free_fn)
        job->free_fn (job->arg);
    free (job);
}

static void *
s_thread (void *data)
{
    app_writer_t *self = data;
    pthread_mutex_lock (&self->lock);
    for (;;) {
        while (!self->head && !self->stop)
            pthread_cond_wait (&self->wake, &self->lock);
        if (!self->head)
            break;              //  stop, and nothing left
        s_job_t *job = self->head;
        self->head = job->next;
        if (!self->head)
            self->tail = NULL;
        pthread_mutex_unlock (&self->lock);
        s_run (job);
        pthread_mutex_lock (&self->lock);
        self->done++;
        pthread_cond_broadcast (&self->idle);
    }
    pthread_mutex_unlock (&self->lock);
    return NULL;
}

app_writer_t *
app_writer_new (void)
{
    app_writer_t *self = ufo_malloc (sizeof *self);
    memset (self, 0, sizeof *self);
    pthread_mutex_init (&self->lock, NULL);
    pthread_cond_init (&self->wake, NULL);
    pthread_cond_init (&self->idle, NULL);
    int rc = pthread_create (&self->thread, NULL, s_thread, self);
    if (rc != 0) {
        ufo_warn ("app: no writer thread (%s): screenshots are written in the loop", strerror (rc));
        pthread_cond_destroy (&self->idle);
        pthread_cond_destroy (&self->wake);
        pthread_mutex_destroy (&self->lock);
        free (self);
        return NULL;
    }
    return self;
}

void
app_writer_destroy (app_writer_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    app_writer_t *self = *self_p;
    pthread_mutex_lock (&self->lock);
    self->stop = true;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->lock);
    pthread_join (self->thread, NULL);      //  the thread runs what is queued first
    pthread_cond_destroy (&self->idle);
    pthread_cond_destroy (&self->wake);
    pthread_mutex_destroy (&self->lock);
    free (self);
    *self_p = NULL;
}

void
app_writer_submit (app_writer_t *self, app_writer_fn *fn, app_writer_fn *free_fn, void *arg)
{
    assert (fn);
    s_job_t *job = ufo_malloc (sizeof *job);
    job->fn = fn;
    job->free_fn = free_fn;
    job->arg = arg;
    job->next = NULL;
    if (!self) {
        s_run (job);
        return;
    }
    pthread_mutex_lock (&self->lock);
    if (self->tail)
        self->tail->next = job;
    else
        self->head = job;
    self->tail = job;
    self->submitted++;
    pthread_cond_signal (&self->wake);
    pthread_mutex_unlock (&self->lock);
}

void
app_writer_flush (app_writer_t *self)
{
    if (!self)
        return;
    pthread_mutex_lock (&self->lock);
    unsigned long target = self->submitted;
    while (self->done < target)
        pthread_cond_wait (&self->idle, &self->lock);
    pthread_mutex_unlock (&self->lock);
}

unsigned long
app_writer_done (app_writer_t *self)
{
    if (!self)
        return 0;
    pthread_mutex_lock (&self->lock);
    unsigned long n = self->done;
    pthread_mutex_unlock (&self->lock);
    return n;
}
