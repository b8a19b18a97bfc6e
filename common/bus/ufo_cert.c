/*  ufo_cert.c - CURVE certificates with roles, over czmq's zcert and zauth. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_cert.h"
#include "ufo_config.h"
#include "ufo_error.h"
#include "ufo_log.h"
#include <czmq.h>
#include <pthread.h>
#include <sodium.h>

struct _ufo_cert_t {
    zcert_t *cert;
    bool secret;
};

struct _ufo_auth_t {
    zactor_t *actor;
    char *dir;
};

bool
ufo_cert_role_valid (const char *role)
{
    return role && (streq (role, "agent") || streq (role, "client") || streq (role, "monitor")
                || streq (role, "broker"));
}

static bool
s_name_valid (const char *name)
{
    if (!name || !*name || strlen (name) > 64)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum ((unsigned char) *p) && *p != '-' && *p != '_' && *p != '.')
            return false;
    return name [0] != '.';
}

int
ufo_cert_generate (const char *dir, const char *name, const char *role, ufo_error_t *err)
{
    if (!s_name_valid (name))
        return ufo_error_set (err, UFO_E_INVALID,
                              "certificate name \"%s\" must be 1-64 letters, digits, '-', '_' or '.'",
                              name ? name : "");
    if (!ufo_cert_role_valid (role))
        return ufo_error_set (err, UFO_E_INVALID,
                              "role \"%s\" is not one of agent, client, monitor, broker", role ? role : "");
    if (!dir || !*dir)
        return ufo_error_set (err, UFO_E_INVALID, "no directory given");
    if (mkdir (dir, 0700) != 0 && errno != EEXIST)
        return ufo_error_set (err, UFO_E_IO, "cannot create %s: %s", dir, strerror (errno));
    char pub [4096], sec [4200];
    snprintf (pub, sizeof (pub), "%s/%s.cert", dir, name);
    snprintf (sec, sizeof (sec), "%s_secret", pub);
    if (access (pub, F_OK) == 0 || access (sec, F_OK) == 0)
        return ufo_error_set (err, UFO_E_CONFLICT, "%s already exists; refusing to overwrite it", pub);
    zcert_t *cert = zcert_new ();
    if (!cert)
        return ufo_error_set (err, UFO_E_INTERNAL, "cannot create a CURVE key pair (libzmq without CURVE?)");
    zcert_set_meta (cert, "name", "%s", name);
    zcert_set_meta (cert, "role", "%s", role);
    //  Both files are born private; only the public one is opened up afterwards.
    mode_t old = umask (077);
    int rc = zcert_save (cert, pub);
    umask (old);
    zcert_destroy (&cert);
    if (rc != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot save %s: %s", pub, strerror (errno));
    if (chmod (pub, 0644) != 0 || chmod (sec, 0600) != 0)
        return ufo_error_set (err, UFO_E_IO, "cannot set the modes of %s: %s", pub, strerror (errno));
    return 0;
}

ufo_cert_t *
ufo_cert_load (const char *path, ufo_error_t *err)
{
    if (!path || !*path) {
        ufo_error_set (err, UFO_E_INVALID, "no certificate path given");
        return NULL;
    }
    struct stat st;
    if (stat (path, &st) != 0) {
        ufo_error_set (err, UFO_E_IO, "cannot read certificate %s: %s", path, strerror (errno));
        return NULL;
    }
    size_t len = strlen (path);
    bool secret = len > 7 && streq (path + len - 7, "_secret");
    if (secret && (st.st_mode & 077)) {
        ufo_error_set (err, UFO_E_DENIED,
                       "refusing private key %s: mode %03o lets group or others read it (chmod 600 %s)",
                       path, (unsigned) (st.st_mode & 0777), path);
        return NULL;
    }
    //  zcert_load reads "<path>_secret" when it exists, else <path>; we name the exact file.
    zcert_t *cert = NULL;
    if (secret) {
        char pub [4096];
        snprintf (pub, sizeof (pub), "%.*s", (int) (len - 7), path);
        cert = zcert_load (pub);
    }
    else {
        //  Load only the public part, even if a secret file sits beside it.
        zconfig_t *root = zconfig_load (path);
        if (root) {
            const char *key = zconfig_get (root, "/curve/public-key", NULL);
            if (key && strlen (key) == 40) {
                uint8_t bin [32];
                if (zmq_z85_decode (bin, key)) {
                    cert = zcert_new_from (bin, bin);   //  secret unused: public only
                    zconfig_t *meta = zconfig_locate (root, "/metadata");
                    for (zconfig_t *item = meta ? zconfig_child (meta) : NULL; item; item = zconfig_next (item))
                        zcert_set_meta (cert, zconfig_name (item), "%s", zconfig_value (item));
                }
            }
            zconfig_destroy (&root);
        }
    }
    if (!cert || (secret && streq (zcert_secret_txt (cert), "0000000000000000000000000000000000000000"))) {
        zcert_destroy (&cert);
        ufo_error_set (err, UFO_E_SYNTAX, "%s is not a CURVE certificate", path);
        return NULL;
    }
    ufo_cert_t *self = (ufo_cert_t *) ufo_calloc (1, sizeof (ufo_cert_t));
    self->cert = cert;
    self->secret = secret;
    return self;
}

void
ufo_cert_destroy (ufo_cert_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    zcert_destroy (&(*self_p)->cert);
    free (*self_p);
    *self_p = NULL;
}

const char *
ufo_cert_public_key (const ufo_cert_t *self)
{
    assert (self);
    return zcert_public_txt (self->cert);
}

const char *
ufo_cert_name (const ufo_cert_t *self)
{
    assert (self);
    const char *name = zcert_meta (self->cert, "name");
    return name ? name : "";
}

const char *
ufo_cert_role (const ufo_cert_t *self)
{
    assert (self);
    const char *role = zcert_meta (self->cert, "role");
    return role ? role : "";
}

bool
ufo_cert_has_secret (const ufo_cert_t *self)
{
    assert (self);
    return self->secret;
}

//  --- Sealed boxes (libsodium crypto_box_seal on the CURVE keys) ------------------------

static int
s_sodium (ufo_error_t *err)
{
    if (sodium_init () < 0)
        return ufo_error_set (err, UFO_E_INTERNAL, "libsodium cannot be initialised");
    return 0;
}

int
ufo_cert_seal (const char *public_key, const void *data, size_t len, ufo_buf_t *out, ufo_error_t *err)
{
    uint8_t pk [32];
    if (s_sodium (err) != 0)
        return -1;
    if (!public_key || strlen (public_key) != 40 || !zmq_z85_decode (pk, public_key))
        return ufo_error_set (err, UFO_E_INVALID, "seal: not a Z85 public key");
    size_t sealed_len = len + crypto_box_SEALBYTES;
    uint8_t *sealed = ufo_malloc (sealed_len);
    crypto_box_seal (sealed, data, len, pk);
    size_t b64_len = sodium_base64_ENCODED_LEN (sealed_len, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = ufo_malloc (b64_len);
    sodium_bin2base64 (b64, b64_len, sealed, sealed_len, sodium_base64_VARIANT_ORIGINAL);
    ufo_buf_append (out, b64, strlen (b64));
    free (b64);
    free (sealed);
    return 0;
}

int
ufo_cert_unseal (const ufo_cert_t *self, const char *text, ufo_buf_t *out, ufo_error_t *err)
{
    assert (self);
    if (s_sodium (err) != 0)
        return -1;
    if (!self->secret)
        return ufo_error_set (err, UFO_E_INVALID, "unseal: the certificate has no secret key");
    size_t text_len = text ? strlen (text) : 0;
    uint8_t *sealed = ufo_malloc (text_len + 1);
    size_t sealed_len = 0;
    int rc = -1;
    if (sodium_base642bin (sealed, text_len + 1, text ? text : "", text_len, NULL, &sealed_len, NULL,
                           sodium_base64_VARIANT_ORIGINAL) != 0 || sealed_len < crypto_box_SEALBYTES)
        ufo_error_set (err, UFO_E_SYNTAX, "unseal: not a sealed box (base64)");
    else {
        size_t plain_len = sealed_len - crypto_box_SEALBYTES;
        uint8_t *plain = ufo_malloc (plain_len + 1);
        if (crypto_box_seal_open (plain, sealed, sealed_len, zcert_public_key (self->cert),
                                  zcert_secret_key (self->cert)) != 0)
            ufo_error_set (err, UFO_E_DENIED, "unseal: not sealed to this certificate, or damaged");
        else {
            ufo_buf_append (out, plain, plain_len);
            rc = 0;
        }
        free (plain);
    }
    free (sealed);
    return rc;
}

int
ufo_cert_apply_client (const ufo_cert_t *self, void *zsock, const char *server_public_key)
{
    assert (self && zsock);
    if (!self->secret || !server_public_key || strlen (server_public_key) != 40)
        return -1;
    zcert_apply (self->cert, zsock);
    zsock_set_curve_serverkey ((zsock_t *) zsock, server_public_key);
    return 0;
}

int
ufo_cert_apply_server (const ufo_cert_t *self, void *zsock)
{
    assert (self && zsock);
    if (!self->secret)
        return -1;
    zcert_apply (self->cert, zsock);
    zsock_set_curve_server ((zsock_t *) zsock, 1);
    return 0;
}

ufo_auth_t *
ufo_auth_new (const char *allowed_dir, ufo_error_t *err)
{
    struct stat st;
    if (!allowed_dir || stat (allowed_dir, &st) != 0 || !S_ISDIR (st.st_mode)) {
        ufo_error_set (err, UFO_E_IO, "allowed certificate directory %s does not exist",
                       allowed_dir ? allowed_dir : "(none)");
        return NULL;
    }
    ufo_auth_t *self = (ufo_auth_t *) ufo_calloc (1, sizeof (ufo_auth_t));
    self->dir = ufo_strdup (allowed_dir);
    self->actor = zactor_new (zauth, NULL);
    if (!self->actor) {
        ufo_error_set (err, UFO_E_INTERNAL, "cannot start the ZAP handler");
        ufo_auth_destroy (&self);
        return NULL;
    }
    if (getenv ("UFO_AUTH_VERBOSE")) {
        zstr_sendx (self->actor, "VERBOSE", NULL);
        zsock_wait (self->actor);
    }
    ufo_auth_reload (self);
    return self;
}

int
ufo_auth_reload (ufo_auth_t *self)
{
    assert (self);
    zstr_sendx (self->actor, "CURVE", self->dir, NULL);
    return zsock_wait (self->actor) == 0 ? 0 : -1;
}

void
ufo_auth_destroy (ufo_auth_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    ufo_auth_t *self = *self_p;
    zactor_destroy (&self->actor);
    free (self->dir);
    free (self);
    *self_p = NULL;
}

const char *
ufo_auth_frame_role (void *zframe)
{
    if (!zframe)
        return NULL;
    return zframe_meta ((zframe_t *) zframe, "role");
}

//  --- Every process: CURVE from the configuration ------------------------------------

static pthread_mutex_t s_default_lock = PTHREAD_MUTEX_INITIALIZER;
static ufo_cert_t *s_default_cert;
static char s_default_key [41];

static int
s_path_join (char *out, size_t size, const char *dir, const char *name, ufo_error_t *err)
{
    if (!dir || !*dir)
        return ufo_error_set (err, UFO_E_INVALID,
                              "security.curve is on but security.cert_dir is not set (nor the file for %s)", name);
    if ((size_t) snprintf (out, size, "%s/%s", dir, name) >= size)
        return ufo_error_set (err, UFO_E_RANGE, "certificate path %s/%s is too long", dir, name);
    return 0;
}

int
ufo_security_client_setup (const ufo_config_t *cfg, const char *default_name, char server_key [41],
                           char cert_path [4096], ufo_error_t *err)
{
    assert (cfg && server_key && cert_path);
    server_key [0] = 0;
    cert_path [0] = 0;
    if (!ufo_config_bool (cfg, "security.curve", false))
        return 0;
    const char *dir = ufo_config_str (cfg, "security.cert_dir", "");
    const char *cert = ufo_config_str (cfg, "security.cert", "");
    const char *broker = ufo_config_str (cfg, "security.broker_cert", "");
    char name [200], broker_path [4096];
    if (*cert) {
        if (strlen (cert) >= 4096)
            return ufo_error_set (err, UFO_E_RANGE, "security.cert is too long");
        snprintf (cert_path, 4096, "%s", cert);
    }
    else {
        snprintf (name, sizeof name, "%s.cert_secret", default_name && *default_name ? default_name : "client");
        if (s_path_join (cert_path, 4096, dir, name, err) != 0)
            return -1;
    }
    if (*broker)
        snprintf (broker_path, sizeof broker_path, "%s", broker);
    else
    if (s_path_join (broker_path, sizeof broker_path, dir, "broker.cert", err) != 0)
        return -1;
    size_t len = strlen (cert_path);
    if (len < 7 || strcmp (cert_path + len - 7, "_secret") != 0)
        return ufo_error_set (err, UFO_E_INVALID,
                              "security.cert must name a private certificate (*.cert_secret), not %s", cert_path);
    ufo_cert_t *mine = ufo_cert_load (cert_path, err);
    if (!mine)
        return -1;
    ufo_cert_destroy (&mine);
    ufo_cert_t *server = ufo_cert_load (broker_path, err);
    if (!server)
        return -1;
    snprintf (server_key, 41, "%s", ufo_cert_public_key (server));
    ufo_cert_destroy (&server);
    return 1;
}

int
ufo_security_set_default (const char *server_key, const char *cert_path, ufo_error_t *err)
{
    ufo_cert_t *cert = NULL;
    if (server_key && *server_key && cert_path && *cert_path) {
        if (strlen (server_key) != 40)
            return ufo_error_set (err, UFO_E_INVALID, "the broker's public key must be 40 Z85 characters");
        cert = ufo_cert_load (cert_path, err);
        if (!cert)
            return -1;
        if (!ufo_cert_has_secret (cert)) {
            ufo_cert_destroy (&cert);
            return ufo_error_set (err, UFO_E_INVALID, "%s holds no secret key", cert_path);
        }
    }
    pthread_mutex_lock (&s_default_lock);
    ufo_cert_destroy (&s_default_cert);
    s_default_cert = cert;
    snprintf (s_default_key, sizeof s_default_key, "%s", cert ? server_key : "");
    pthread_mutex_unlock (&s_default_lock);
    return 0;
}

int
ufo_security_init (const ufo_config_t *cfg, const char *default_name, ufo_error_t *err)
{
    char key [41], path [4096];
    int on = ufo_security_client_setup (cfg, default_name, key, path, err);
    if (on < 0)
        return -1;
    if (ufo_security_set_default (on ? key : NULL, on ? path : NULL, err) != 0)
        return -1;
    if (on)
        ufo_info ("CURVE on: certificate %s, broker key %.8s...", path, key);
    return on;
}

int
ufo_security_apply_client (void *zsock, const char *server_key, const char *cert_path, ufo_error_t *err)
{
    assert (zsock);
    zsock_set_reconnect_ivl ((zsock_t *) zsock, 100);
    zsock_set_reconnect_ivl_max ((zsock_t *) zsock, 5000);
    if ((server_key && !*server_key) || (cert_path && !*cert_path))
        return 0;                           //  explicitly plain
    if (server_key || cert_path) {
        if (!server_key || !cert_path)
            return ufo_error_set (err, UFO_E_INVALID, "CURVE needs both the broker's key and a certificate");
        ufo_cert_t *cert = ufo_cert_load (cert_path, err);
        if (!cert)
            return -1;
        int rc = ufo_cert_apply_client (cert, zsock, server_key);
        ufo_cert_destroy (&cert);
        if (rc != 0)
            return ufo_error_set (err, UFO_E_INVALID, "cannot use %s as a CURVE client certificate "
                                  "(no secret key, or a bad broker key)", cert_path);
        return 0;
    }
    pthread_mutex_lock (&s_default_lock);
    int rc = s_default_cert ? ufo_cert_apply_client (s_default_cert, zsock, s_default_key) : 0;
    pthread_mutex_unlock (&s_default_lock);
    if (rc != 0)
        return ufo_error_set (err, UFO_E_INTERNAL, "cannot apply the process certificate");
    return 0;
}
