/*  ufo_http.c - asynchronous HTTP POST over curl's multi socket interface.
    curl tells us which sockets to watch (socket callback) and when to wake up (timer
    callback); the caller's loop polls them and gives them back to ufo_http_process. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_clock.h"
#include "ufo_error.h"
#include <poll.h>
#include "ufo_http.h"
#include <curl/curl.h>
#include <pthread.h>

#define S_DEFAULT_MAX_BODY (16u * 1024 * 1024)

typedef struct _s_xfer_t s_xfer_t;
struct _s_xfer_t {
    int64_t id;
    CURL *easy;
    struct curl_slist *headers;
    char *body;                 //  request body (curl does not copy it)
    ufo_buf_t response;
    ufo_buf_t resp_headers;     //  header lines of the last response
    size_t max_body;
    bool overflow;
    double retry_after_s;
    int64_t started_ms;
    char errbuf [CURL_ERROR_SIZE];
    ufo_http_done_fn *done;
    void *arg;
    s_xfer_t *next;
};

struct _ufo_http_t {
    CURLM *multi;
    s_xfer_t *xfers;            //  in flight
    int64_t next_id;
    ufo_http_fd_t *fds;         //  sockets curl wants watched
    size_t nfds, capfds;
    int64_t deadline_ms;        //  curl timer, -1 when none
    int processing;             //  re-entrancy depth of process
};

static pthread_once_t s_curl_once = PTHREAD_ONCE_INIT;
static bool s_curl_ok = false;

static void
s_curl_init (void)
{
    s_curl_ok = curl_global_init (CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static int
s_socket_cb (CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
    UFO_UNUSED (easy);
    UFO_UNUSED (socketp);
    ufo_http_t *self = (ufo_http_t *) userp;
    size_t i;
    for (i = 0; i < self->nfds; i++)
        if (self->fds [i].fd == (int) s)
            break;
    if (what == CURL_POLL_REMOVE) {
        if (i < self->nfds) {
            self->fds [i] = self->fds [self->nfds - 1];
            self->nfds--;
        }
        return 0;
    }
    if (i == self->nfds) {
        if (self->nfds == self->capfds) {
            self->capfds = self->capfds ? self->capfds * 2 : 8;
            self->fds = ufo_realloc (self->fds, self->capfds * sizeof (ufo_http_fd_t));
        }
        self->nfds++;
    }
    self->fds [i].fd = (int) s;
    self->fds [i].events = ((what & CURL_POLL_IN) ? UFO_HTTP_IN : 0)
                         | ((what & CURL_POLL_OUT) ? UFO_HTTP_OUT : 0);
    self->fds [i].revents = 0;
    return 0;
}

static int
s_timer_cb (CURLM *multi, long timeout_ms, void *userp)
{
    UFO_UNUSED (multi);
    ufo_http_t *self = (ufo_http_t *) userp;
    self->deadline_ms = timeout_ms < 0 ? -1 : ufo_time_mono_ms () + timeout_ms;
    return 0;
}

static size_t
s_write_cb (char *data, size_t size, size_t nmemb, void *userp)
{
    s_xfer_t *x = (s_xfer_t *) userp;
    size_t n = size * nmemb;
    if (x->response.len + n > x->max_body) {
        x->overflow = true;
        return 0;               //  aborts the transfer (CURLE_WRITE_ERROR)
    }
    ufo_buf_append (&x->response, data, n);
    return n;
}

static size_t
s_header_cb (char *data, size_t size, size_t nmemb, void *userp)
{
    s_xfer_t *x = (s_xfer_t *) userp;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp (data, "HTTP/", 5) == 0)
        ufo_buf_reset (&x->resp_headers);       //  a new response: keep only its headers
    if (x->resp_headers.len + n <= 64 * 1024)
        ufo_buf_append (&x->resp_headers, data, n);
    static const char name [] = "retry-after:";
    if (n > sizeof (name) - 1 && strncasecmp (data, name, sizeof (name) - 1) == 0) {
        char value [64];
        size_t vlen = n - (sizeof (name) - 1);
        if (vlen >= sizeof (value))
            vlen = sizeof (value) - 1;
        memcpy (value, data + sizeof (name) - 1, vlen);
        value [vlen] = 0;
        char *end = NULL;
        errno = 0;
        double secs = strtod (value, &end);
        while (end && (*end == ' ' || *end == '\r' || *end == '\n' || *end == '\t'))
            end++;
        //  Only delta-seconds are honoured; an HTTP date is ignored (normal backoff then).
        if (errno == 0 && end && *end == 0 && end != value && isfinite (secs) && secs >= 0)
            x->retry_after_s = secs;
    }
    else
    if (n >= 5 && strncmp (data, "HTTP/", 5) == 0)
        x->retry_after_s = -1;  //  new response (after a 100 Continue): forget older headers
    return n;
}

static void
s_xfer_free (s_xfer_t *x)
{
    if (x->easy)
        curl_easy_cleanup (x->easy);
    curl_slist_free_all (x->headers);
    free (x->body);
    ufo_buf_free (&x->response);
    ufo_buf_free (&x->resp_headers);
    free (x);
}

ufo_http_t *
ufo_http_new (void)
{
    pthread_once (&s_curl_once, s_curl_init);
    if (!s_curl_ok)
        return NULL;
    ufo_http_t *self = ufo_calloc (1, sizeof (ufo_http_t));
    self->multi = curl_multi_init ();
    if (!self->multi) {
        free (self);
        return NULL;
    }
    self->next_id = 1;
    self->deadline_ms = -1;
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_socket_cb);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_timer_cb);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    return self;
}

void
ufo_http_destroy (ufo_http_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_http_t *self = *self_p;
    while (self->xfers) {
        s_xfer_t *x = self->xfers;
        self->xfers = x->next;
        curl_multi_remove_handle (self->multi, x->easy);
        s_xfer_free (x);
    }
    curl_multi_cleanup (self->multi);
    free (self->fds);
    free (self);
    *self_p = NULL;
}

static int64_t s_start (ufo_http_t *self, bool post, const char *url, const char *const *headers,
                        const char *body, size_t len, long timeout_ms, size_t max_body,
                        ufo_http_done_fn *done, void *arg, ufo_error_t *err);

int64_t
ufo_http_post (ufo_http_t *self, const char *url, const char *const *headers,
               const char *body, size_t len, long timeout_ms, size_t max_body,
               ufo_http_done_fn *done, void *arg, ufo_error_t *err)
{
    return s_start (self, true, url, headers, body, len, timeout_ms, max_body, done, arg, err);
}

int64_t
ufo_http_get (ufo_http_t *self, const char *url, const char *const *headers, long timeout_ms,
              size_t max_body, ufo_http_done_fn *done, void *arg, ufo_error_t *err)
{
    return s_start (self, false, url, headers, NULL, 0, timeout_ms, max_body, done, arg, err);
}

static int64_t
s_start (ufo_http_t *self, bool post, const char *url, const char *const *headers,
         const char *body, size_t len, long timeout_ms, size_t max_body,
         ufo_http_done_fn *done, void *arg, ufo_error_t *err)
{
    assert (self && url && done);
    s_xfer_t *x = ufo_calloc (1, sizeof (s_xfer_t));
    x->easy = curl_easy_init ();
    if (!x->easy) {
        free (x);
        return ufo_error_set (err, UFO_E_INTERNAL, "curl_easy_init failed");
    }
    x->id = self->next_id++;
    x->max_body = max_body ? max_body : S_DEFAULT_MAX_BODY;
    x->retry_after_s = -1;
    x->done = done;
    x->arg = arg;
    x->body = ufo_malloc (len + 1);
    if (len)
        memcpy (x->body, body, len);
    x->body [len] = 0;
    for (size_t i = 0; headers && headers [i]; i++)
        x->headers = curl_slist_append (x->headers, headers [i]);
    //  curl adds "Expect: 100-continue" for large bodies; servers differ in handling it.
    x->headers = curl_slist_append (x->headers, "Expect:");
    CURL *e = x->easy;
    curl_easy_setopt (e, CURLOPT_URL, url);
    if (post) {
        curl_easy_setopt (e, CURLOPT_POST, 1L);
        curl_easy_setopt (e, CURLOPT_POSTFIELDS, x->body);
        curl_easy_setopt (e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) len);
    }
    else
        curl_easy_setopt (e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt (e, CURLOPT_HTTPHEADER, x->headers);
    curl_easy_setopt (e, CURLOPT_WRITEFUNCTION, s_write_cb);
    curl_easy_setopt (e, CURLOPT_WRITEDATA, x);
    curl_easy_setopt (e, CURLOPT_HEADERFUNCTION, s_header_cb);
    curl_easy_setopt (e, CURLOPT_HEADERDATA, x);
    curl_easy_setopt (e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt (e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (e, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 && timeout_ms < 30000 ? timeout_ms : 30000L);
    if (timeout_ms > 0)
        curl_easy_setopt (e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt (e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt (e, CURLOPT_PRIVATE, x);
    x->started_ms = ufo_time_mono_ms ();
    if (curl_multi_add_handle (self->multi, e) != CURLM_OK) {
        s_xfer_free (x);
        return ufo_error_set (err, UFO_E_INTERNAL, "curl_multi_add_handle failed");
    }
    x->next = self->xfers;
    self->xfers = x;
    return x->id;
}

//  Unlinks x from the list; returns true if it was there.
static bool
s_unlink (ufo_http_t *self, s_xfer_t *x)
{
    for (s_xfer_t **pp = &self->xfers; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return true;
        }
    return false;
}

int
ufo_http_cancel (ufo_http_t *self, int64_t id)
{
    assert (self);
    for (s_xfer_t *x = self->xfers; x; x = x->next)
        if (x->id == id) {
            s_unlink (self, x);
            curl_multi_remove_handle (self->multi, x->easy);
            s_xfer_free (x);
            return 0;
        }
    return -1;
}

size_t
ufo_http_active (const ufo_http_t *self)
{
    size_t n = 0;
    for (s_xfer_t *x = self->xfers; x; x = x->next)
        n++;
    return n;
}

size_t
ufo_http_fds (const ufo_http_t *self, ufo_http_fd_t *fds, size_t max)
{
    for (size_t i = 0; i < self->nfds && i < max; i++) {
        fds [i] = self->fds [i];
        fds [i].revents = 0;
    }
    return self->nfds;
}

int
ufo_http_timeout (const ufo_http_t *self)
{
    if (self->deadline_ms < 0)
        return -1;
    int64_t left = self->deadline_ms - ufo_time_mono_ms ();
    if (left < 0)
        return 0;
    return left > INT_MAX ? INT_MAX : (int) left;
}

static void
s_finish (ufo_http_t *self, s_xfer_t *x, CURLcode code)
{
    ufo_http_result_t r;
    memset (&r, 0, sizeof r);
    r.id = x->id;
    r.retry_after_s = x->retry_after_s;
    curl_easy_getinfo (x->easy, CURLINFO_RESPONSE_CODE, &r.status);
    r.body_overflow = x->overflow;
    if (code != CURLE_OK && !(x->overflow && code == CURLE_WRITE_ERROR)) {
        r.transport = (int) code;
        r.timed_out = code == CURLE_OPERATION_TIMEDOUT;
        snprintf (r.error, sizeof r.error, "%s", x->errbuf [0] ? x->errbuf : curl_easy_strerror (code));
    }
    else
    if (x->overflow) {
        r.transport = (int) code;
        snprintf (r.error, sizeof r.error, "response larger than %zu bytes", x->max_body);
    }
    ufo_buf_putc (&x->response, 0);     //  make sure data is allocated and NUL-terminated
    x->response.len--;
    r.body = x->response.data;
    r.body_len = x->response.len;
    ufo_buf_putc (&x->resp_headers, 0);
    x->resp_headers.len--;
    r.headers = x->resp_headers.data;
    r.elapsed_s = (double) (ufo_time_mono_ms () - x->started_ms) / 1000.0;
    x->done (&r, x->arg);
    UFO_UNUSED (self);
}

int
ufo_http_process (ufo_http_t *self, const ufo_http_fd_t *fds, size_t n)
{
    assert (self);
    int running = 0;
    for (size_t i = 0; i < n; i++) {
        if (!fds [i].revents)
            continue;
        int mask = ((fds [i].revents & UFO_HTTP_IN) ? CURL_CSELECT_IN : 0)
                 | ((fds [i].revents & UFO_HTTP_OUT) ? CURL_CSELECT_OUT : 0)
                 | ((fds [i].revents & UFO_HTTP_ERR) ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action (self->multi, fds [i].fd, mask, &running);
    }
    if (self->deadline_ms >= 0 && ufo_time_mono_ms () >= self->deadline_ms) {
        self->deadline_ms = -1;
        curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    int completed = 0;
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read (self->multi, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        s_xfer_t *x = NULL;
        curl_easy_getinfo (msg->easy_handle, CURLINFO_PRIVATE, (char **) &x);
        CURLcode code = msg->data.result;
        if (!x || !s_unlink (self, x))
            continue;
        curl_multi_remove_handle (self->multi, x->easy);
        s_finish (self, x, code);
        s_xfer_free (x);
        completed++;
    }
    return completed;
}

int
ufo_http_probe (const char *url, long timeout_ms, char *why, size_t size)
{
    pthread_once (&s_curl_once, s_curl_init);
    if (!s_curl_ok) {
        snprintf (why, size, "curl did not start");
        return -1;
    }
    CURL *easy = curl_easy_init ();
    if (!easy) {
        snprintf (why, size, "curl did not start");
        return -1;
    }
    char errbuf [CURL_ERROR_SIZE] = "";
    curl_easy_setopt (easy, CURLOPT_URL, url);
    curl_easy_setopt (easy, CURLOPT_CONNECT_ONLY, 1L);
    curl_easy_setopt (easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
    curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 1L);
    curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, errbuf);
    CURLcode rc = curl_easy_perform (easy);
    if (rc != CURLE_OK)
        snprintf (why, size, "%s", *errbuf ? errbuf : curl_easy_strerror (rc));
    curl_easy_cleanup (easy);
    return rc == CURLE_OK ? 0 : -1;
}

int
ufo_http_header (const ufo_http_result_t *result, const char *name, char *out, size_t size)
{
    assert (result && name && out && size > 0);
    out [0] = 0;
    size_t nlen = strlen (name);
    for (const char *line = result->headers; line && *line; ) {
        const char *end = strchr (line, '\n');
        size_t len = end ? (size_t) (end - line) : strlen (line);
        if (len > nlen && line [nlen] == ':' && strncasecmp (line, name, nlen) == 0) {
            const char *v = line + nlen + 1;
            const char *stop = line + len;
            while (v < stop && (*v == ' ' || *v == '\t'))
                v++;
            while (stop > v && (stop [-1] == '\r' || stop [-1] == ' ' || stop [-1] == '\t'))
                stop--;
            size_t vlen = (size_t) (stop - v);
            if (vlen >= size)
                return -1;
            memcpy (out, v, vlen);
            out [vlen] = 0;
            return (int) vlen;
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

int
ufo_http_wait (ufo_http_t *self, const bool *done, int timeout_ms)
{
    int64_t end = ufo_time_mono_ms () + timeout_ms;
    while (!*done) {
        int64_t left = end - ufo_time_mono_ms ();
        if (left <= 0)
            return -1;
        ufo_http_fd_t hfds [16];
        struct pollfd fds [16];
        size_t n = ufo_http_fds (self, hfds, 16);
        if (n > 16)
            n = 16;
        for (size_t i = 0; i < n; i++)
            fds [i] = (struct pollfd) { .fd = hfds [i].fd,
                .events = (short) ((hfds [i].events & UFO_HTTP_IN ? POLLIN : 0)
                                 | (hfds [i].events & UFO_HTTP_OUT ? POLLOUT : 0)) };
        int t = ufo_http_timeout (self);
        if (t < 0 || t > 100)
            t = 100;
        if (t > left)
            t = (int) left;
        poll (fds, n, t);
        for (size_t i = 0; i < n; i++)
            hfds [i].revents = (fds [i].revents & POLLIN ? UFO_HTTP_IN : 0)
                             | (fds [i].revents & POLLOUT ? UFO_HTTP_OUT : 0)
                             | (fds [i].revents & (POLLERR | POLLHUP) ? UFO_HTTP_ERR : 0);
        ufo_http_process (self, hfds, n);
    }
    return 0;
}
