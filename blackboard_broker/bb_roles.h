/*  bb_roles.h - which requests each CURVE role may send (docs/DEPLOYMENT.md, "Keys and roles").

    With security.curve on, the broker knows every peer by the certificate ZAP accepted: its
    role (the certificate's "role" metadata, from the broker's own copy in the allowed
    directory) and its public key. Message fields (sender, client, worker) are never trusted
    for a decision. The table:

      request                          agent  client            monitor
      bb.add bb.clear bb.delete          yes    no                no
      blob.put (ttl_ms too)              yes    no                no
      bb.snapshot bb.list blob.get       yes    yes               yes
      stats ping dispatch.state          yes    yes               yes
      worker.* task.progress/complete    yes    no                no
      client.hello client.heartbeat      yes    own client id     no
      task.submit                        yes    service "host",   no
                                                own client id,
                                                a task id not owned by another key
      task.input task.cancel task.fetch  yes    own tasks         no
      anything else / no role            no     no                no

    "Own": the first key that uses a client id or submits a task id owns it. Owners are kept
    in memory (the newest BB_ROLES_MAX_OWNERS) and appended to a file in the data directory,
    so they survive a broker restart. */
#ifndef BB_ROLES_H_INCLUDED
#define BB_ROLES_H_INCLUDED

#include "ufo_error.h"

#define BB_ROLES_MAX_OWNERS 65536

typedef struct _bb_roles_t bb_roles_t;

//  Creates the table. owners_path: the file where ownership is kept (loaded now, appended
//  to later; NULL: memory only). max_bytes: largest request frame decoded. NULL with err
//  when the file exists but cannot be read or written.
bb_roles_t *bb_roles_new (const char *owners_path, size_t max_bytes, ufo_error_t *err);

//  Destroys; sets *self_p to NULL. Safe with NULL.
void bb_roles_destroy (bb_roles_t **self_p);

//  Decides whether a peer may send the request in frame (the envelope frame; len bytes).
//  role: the certificate's role, NULL when the connection carries none; key: its public
//  key (Z85), NULL when unknown. type_out[65] and id_out[65] receive the envelope's type and
//  id as far as they could be read ("" otherwise), for the reply and the log line. Returns
//  true if allowed (a client's submit then owns its task id), else false with why filled.
bool bb_roles_allow (bb_roles_t *self, const char *role, const char *key, const void *frame, size_t len,
                     char type_out [65], char id_out [65], char *why, size_t why_size);

#endif
