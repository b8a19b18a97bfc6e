/*  ufo_cert.h - CURVE certificates with a role, and ZAP authentication for the broker.

    A certificate is a CURVE key pair saved as two files by `ufo keygen NAME --role ROLE`:
      DIR/NAME.cert         public key + metadata (name, role); safe to copy to the broker
      DIR/NAME.cert_secret  public + secret key; created mode 0600, refused if group or
                            others can read it
    The broker trusts the public certificates in its allowed directory. Roles come from the
    broker's copy of the client's certificate (ZAP metadata), never from message fields:
      agent    everything an agent needs (boards, blobs, tasks as worker and submitter)
      client   submit sessions, answer questions and confirmations, read
      monitor  read only: subscribe to the bus, snapshots, status
      broker   the broker's own key pair
    czmq and libzmq stay behind this interface: sockets are passed as `void *` (zsock_t). */
#ifndef UFO_CERT_H_INCLUDED
#define UFO_CERT_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include "ufo_buf.h"
#include "ufo_config.h"
#include "ufo_error.h"

typedef struct _ufo_cert_t ufo_cert_t;

//  True for "agent", "client", "monitor", "broker".
bool ufo_cert_role_valid (const char *role);

//  Creates a key pair for name with role and saves it in dir (created if needed, mode 0700).
//  Refuses to overwrite existing files. Returns 0, or -1 with err.
int ufo_cert_generate (const char *dir, const char *name, const char *role, ufo_error_t *err);

//  Loads a certificate. With a path ending in "_secret" the secret key is loaded too, after
//  checking that the file is not readable by group or others (else UFO_E_DENIED naming the
//  file and its mode). Returns NULL with err on failure.
ufo_cert_t *ufo_cert_load (const char *path, ufo_error_t *err);

//  Destroys; sets *self_p to NULL. Safe with NULL.
void ufo_cert_destroy (ufo_cert_t **self_p);

//  The public key in Z85 text (40 characters), the name and role metadata ("" if absent),
//  and whether the secret key is present. Borrowed.
const char *ufo_cert_public_key (const ufo_cert_t *self);
const char *ufo_cert_name (const ufo_cert_t *self);
const char *ufo_cert_role (const ufo_cert_t *self);
bool ufo_cert_has_secret (const ufo_cert_t *self);

//  Seals data[0..len) to the holder of the certificate whose public key (Z85) is given
//  (libsodium's crypto_box_seal: only that secret key opens it) and appends it to out as
//  base64 text (original alphabet, padded). Returns 0, or -1 with err for a bad key.
int ufo_cert_seal (const char *public_key, const void *data, size_t len, ufo_buf_t *out, ufo_error_t *err);

//  Opens text made by ufo_cert_seal with this certificate's secret key and appends the bytes
//  to out. Returns 0, or -1 with err: UFO_E_DENIED when it was sealed to another key (or is
//  damaged), UFO_E_SYNTAX when it is not base64, UFO_E_INVALID without a secret key.
int ufo_cert_unseal (const ufo_cert_t *self, const char *text, ufo_buf_t *out, ufo_error_t *err);

//  Makes a czmq socket (zsock_t *) a CURVE client of the server with the given public key
//  (Z85), using this certificate's key pair. Call before connecting. Returns 0 or -1.
int ufo_cert_apply_client (const ufo_cert_t *self, void *zsock, const char *server_public_key);

//  Makes a czmq socket a CURVE server with this key pair. Call before binding. Returns 0 or -1.
int ufo_cert_apply_server (const ufo_cert_t *self, void *zsock);

//  --- Broker side: ZAP through czmq's zauth ------------------------------------------

typedef struct _ufo_auth_t ufo_auth_t;

//  Starts the ZAP handler: CURVE clients are allowed only if their public certificate is in
//  allowed_dir. Must be created before the server sockets bind. NULL with err on failure.
ufo_auth_t *ufo_auth_new (const char *allowed_dir, ufo_error_t *err);

//  Re-reads the allowed directory (call on SIGHUP). Returns 0 or -1.
int ufo_auth_reload (ufo_auth_t *self);

//  Stops the handler; sets *self_p to NULL. Safe with NULL.
void ufo_auth_destroy (ufo_auth_t **self_p);

//  The role of the peer that sent a received frame (zframe_t *): the "role" metadata of its
//  certificate as delivered by ZAP, or NULL when the connection carries none (no CURVE).
//  Returned string is valid while the frame lives.
const char *ufo_auth_frame_role (void *zframe);

//  --- Every process: CURVE from the configuration --------------------------------------
//
//  Keys (config block "security", env UFO_SECURITY__*):
//    curve        on/off
//    cert_dir     directory of certificates
//    cert         this process's private certificate; "" = CERT_DIR/<default_name>.cert_secret
//    broker_cert  the broker's public certificate; "" = CERT_DIR/broker.cert
//    allowed_dir  (broker) the allowed public certificates; "" = CERT_DIR/allowed

//  Reads the configuration. With security.curve off: returns 0, server_key and cert_path "".
//  On: checks both files (the private key must load and be mode 0600 or stricter), fills
//  server_key with the broker's public key (Z85) and cert_path with this process's private
//  certificate, returns 1. default_name names the certificate when security.cert is empty
//  ("agent", "client", "monitor", "broker"). -1 with err naming the file on any problem.
int ufo_security_client_setup (const ufo_config_t *cfg, const char *default_name, char server_key [41],
                               char cert_path [4096], ufo_error_t *err);

//  ufo_security_client_setup, then makes the result the process default: every socket that
//  ufo_bb_client, ufo_tasks and ufo_worker create without explicit keys uses it. Call once at
//  start-up, before creating clients. Returns 0 (off), 1 (on) or -1 with err.
int ufo_security_init (const ufo_config_t *cfg, const char *default_name, ufo_error_t *err);

//  Sets (or with NULLs clears) the process default directly. Returns 0, or -1 with err when
//  the certificate cannot be used.
int ufo_security_set_default (const char *server_key, const char *cert_path, ufo_error_t *err);

//  Prepares a czmq client socket (zsock_t *) before it connects: reconnect with exponential
//  backoff (100 ms doubling up to 5 s), and CURVE when keys are given: server_key and
//  cert_path explicit, or NULL for the process default; "" means no CURVE for this socket.
//  Returns 0, or -1 with err when the certificate cannot be used (the socket is unchanged).
int ufo_security_apply_client (void *zsock, const char *server_key, const char *cert_path, ufo_error_t *err);

#endif
