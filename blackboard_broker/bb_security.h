/*  bb_security.h - the broker's CURVE side: its key pair, ZAP over the allowed directory
    (re-read on SIGHUP), and the role of every request (bb_roles.h).

    Configuration (ufo_cert.h): security.curve, security.cert_dir, security.cert (the
    broker's private certificate, default CERT_DIR/broker.cert_secret), security.allowed_dir
    (default CERT_DIR/allowed). */
#ifndef BB_SECURITY_H_INCLUDED
#define BB_SECURITY_H_INCLUDED

#include "ufo_config.h"
#include "ufo_error.h"

typedef struct _bb_security_t bb_security_t;

//  With security.curve off returns NULL and leaves err->code 0. On: blocks SIGHUP in the
//  calling thread (call it before any other thread starts: they inherit the mask, and the
//  signal is then read from a descriptor, bb_security_fd), loads the broker's private
//  certificate (refused when group or others can read it), starts the ZAP handler on the
//  allowed directory. NULL with err (code != 0) naming the file on failure.
bb_security_t *bb_security_new (const ufo_config_t *cfg, size_t max_bytes, ufo_error_t *err);

//  Destroys; sets *self_p to NULL. Safe with NULL.
void bb_security_destroy (bb_security_t **self_p);

//  Opens the owners file of bb_roles in data_dir (call once the data directory is locked).
int bb_security_open (bb_security_t *self, const char *data_dir, ufo_error_t *err);

//  Makes a czmq socket (zsock_t *) a CURVE server with the broker's key pair; before bind.
int bb_security_apply_server (bb_security_t *self, void *zsock, ufo_error_t *err);

//  A descriptor that becomes readable on SIGHUP; then call bb_security_on_signal, which
//  re-reads the allowed directory (and logs what it did).
int bb_security_fd (bb_security_t *self);
void bb_security_on_signal (bb_security_t *self);

//  bb_roles_allow on the broker's table (see bb_roles.h).
bool bb_security_allow (bb_security_t *self, const char *role, const char *key, const void *frame, size_t len,
                        char type_out [65], char id_out [65], char *why, size_t why_size);

#endif
