/*  fuzz_roles.c - libFuzzer target for the broker's role check (blackboard_broker/bb_roles.c),
    which reads the head of every request a CURVE peer sends before anything else does.
    Input: one byte choosing the role and the key, then one envelope frame. Any input: no
    crash, no leak; type and id come back NUL-terminated; a denial always has a reason; no
    role never passes; a monitor passes only reads; a client passes only reads and its own
    dispatch requests; an agent always passes. The table keeps its owners across inputs. */
#include "ufo_prelude.h"
#include "ufo_error.h"
#include "bb_roles.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define FUZZ_REQUIRE(cond) do { if (!(cond)) { \
    fprintf (stderr, "fuzz_roles: %s failed at line %d\n", #cond, __LINE__); abort (); } } while (0)

static bb_roles_t *s_roles;

static bool
s_read (const char *type)
{
    static const char *const reads [] = { "bb.snapshot", "bb.list", "blob.get", "stats", "ping",
                                          "dispatch.state" };
    for (size_t i = 0; i < UFO_ARRAY_SIZE (reads); i++)
        if (strcmp (type, reads [i]) == 0)
            return true;
    return false;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    if (!s_roles) {
        ufo_error_t err;
        s_roles = bb_roles_new (NULL, 1 << 20, &err);
    }
    if (size < 1)
        return 0;
    static const char *const roles [] = { "agent", "client", "monitor", NULL, "", "broker", "root", "client" };
    static const char *const keys [] = { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                         "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", NULL, "short" };
    const char *role = roles [data [0] & 7];
    const char *key = keys [(data [0] >> 3) & 3];
    char type [65], id [65], why [256];
    memset (type, 'x', sizeof type);
    memset (id, 'x', sizeof id);
    why [0] = 0;
    bool ok = bb_roles_allow (s_roles, role, key, data + 1, size - 1, type, id, why, sizeof why);
    FUZZ_REQUIRE (memchr (type, 0, sizeof type) && memchr (id, 0, sizeof id));
    if (!ok)
        FUZZ_REQUIRE (why [0] != 0);
    if (!role || !*role || strcmp (role, "broker") == 0 || strcmp (role, "root") == 0)
        FUZZ_REQUIRE (!ok);
    else
    if (strcmp (role, "agent") == 0)
        FUZZ_REQUIRE (ok);
    else
    if (strcmp (role, "monitor") == 0 && ok)
        FUZZ_REQUIRE (s_read (type));
    else
    if (strcmp (role, "client") == 0 && ok) {
        FUZZ_REQUIRE (s_read (type) || strncmp (type, "task.", 5) == 0 || strncmp (type, "client.", 7) == 0);
        if (!s_read (type))
            FUZZ_REQUIRE (key && strlen (key) == 40);
        if (strcmp (type, "task.submit") == 0)
            FUZZ_REQUIRE (!s_read (type));
    }
    return 0;
}
