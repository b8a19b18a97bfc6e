/*  bb_security.c - the broker's CURVE side; see bb_security.h. */
#include "ufo_prelude.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include "bb_roles.h"
#include "bb_security.h"
#include <dirent.h>
#include <signal.h>
#include <sys/signalfd.h>

struct _bb_security_t {
    ufo_cert_t *cert;
    ufo_auth_t *auth;
    bb_roles_t *roles;
    char allowed [PATH_MAX];
    int sigfd;
    size_t max_bytes;
};

//  Counts the certificates in the allowed directory (for the log).
static int
s_count (const char *dir)
{
    DIR *d = opendir (dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir (d)))
        if (e->d_name [0] != '.')
            n++;
    closedir (d);
    return n;
}

bb_security_t *
bb_security_new (const ufo_config_t *cfg, size_t max_bytes, ufo_error_t *err)
{
    ufo_error_clear (err);
    if (!ufo_config_bool (cfg, "security.curve", false))
        return NULL;
    const char *dir = ufo_config_str (cfg, "security.cert_dir", "");
    const char *cert = ufo_config_str (cfg, "security.cert", "");
    const char *allowed = ufo_config_str (cfg, "security.allowed_dir", "");
    if ((!*cert || !*allowed) && !*dir) {
        ufo_error_set (err, UFO_E_INVALID, "security.curve is on but security.cert_dir is not set");
        return NULL;
    }
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, SIGHUP);
    pthread_sigmask (SIG_BLOCK, &set, NULL);
    bb_security_t *self = ufo_calloc (1, sizeof *self);
    self->max_bytes = max_bytes;
    self->sigfd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    char path [PATH_MAX];
    if (*cert)
        snprintf (path, sizeof path, "%s", cert);
    else
        snprintf (path, sizeof path, "%s/broker.cert_secret", dir);
    if (*allowed)
        snprintf (self->allowed, sizeof self->allowed, "%s", allowed);
    else
        snprintf (self->allowed, sizeof self->allowed, "%s/allowed", dir);
    size_t len = strlen (path);
    if (len < 7 || strcmp (path + len - 7, "_secret") != 0) {
        ufo_error_set (err, UFO_E_INVALID, "the broker's certificate must be a private one (*.cert_secret), not %s", path);
        bb_security_destroy (&self);
        return NULL;
    }
    if (self->sigfd < 0) {
        ufo_error_set (err, UFO_E_IO, "signalfd: %s", strerror (errno));
        bb_security_destroy (&self);
        return NULL;
    }
    self->cert = ufo_cert_load (path, err);
    if (!self->cert) {
        bb_security_destroy (&self);
        return NULL;
    }
    self->auth = ufo_auth_new (self->allowed, err);
    if (!self->auth) {
        bb_security_destroy (&self);
        return NULL;
    }
    ufo_info ("CURVE on: key pair %s, %d allowed certificate(s) in %s (SIGHUP re-reads it)", path,
              s_count (self->allowed), self->allowed);
    return self;
}

void
bb_security_destroy (bb_security_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    bb_security_t *self = *self_p;
    ufo_auth_destroy (&self->auth);
    ufo_cert_destroy (&self->cert);
    bb_roles_destroy (&self->roles);
    if (self->sigfd >= 0)
        close (self->sigfd);
    free (self);
    *self_p = NULL;
}

int
bb_security_open (bb_security_t *self, const char *data_dir, ufo_error_t *err)
{
    assert (self);
    char path [PATH_MAX];
    snprintf (path, sizeof path, "%s/owners", data_dir);
    bb_roles_destroy (&self->roles);
    self->roles = bb_roles_new (path, self->max_bytes, err);
    return self->roles ? 0 : -1;
}

int
bb_security_apply_server (bb_security_t *self, void *zsock, ufo_error_t *err)
{
    assert (self && zsock);
    if (ufo_cert_apply_server (self->cert, zsock) != 0)
        return ufo_error_set (err, UFO_E_INTERNAL, "cannot make the socket a CURVE server");
    return 0;
}

int
bb_security_fd (bb_security_t *self)
{
    assert (self);
    return self->sigfd;
}

void
bb_security_on_signal (bb_security_t *self)
{
    assert (self);
    struct signalfd_siginfo info;
    bool hup = false;
    while (read (self->sigfd, &info, sizeof info) == (ssize_t) sizeof info)
        hup = hup || info.ssi_signo == SIGHUP;
    if (!hup)
        return;
    if (ufo_auth_reload (self->auth) == 0)
        ufo_info ("SIGHUP: re-read %d allowed certificate(s) in %s", s_count (self->allowed), self->allowed);
    else
        ufo_warn ("SIGHUP: could not re-read %s; the previous list stays", self->allowed);
}

bool
bb_security_allow (bb_security_t *self, const char *role, const char *key, const void *frame, size_t len,
                   char type_out [65], char id_out [65], char *why, size_t why_size)
{
    assert (self);
    if (!self->roles) {
        ufo_error_t err;
        self->roles = bb_roles_new (NULL, self->max_bytes, &err);
    }
    return bb_roles_allow (self->roles, role, key, frame, len, type_out, id_out, why, why_size);
}
