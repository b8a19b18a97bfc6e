/*  ufo_cmd_keygen.c - `ufo keygen NAME --role ROLE [--dir DIR]`: writes a CURVE certificate
    pair for a process or person (see docs/DEPLOYMENT.md, "Keys and roles"). */
#include "ufo_prelude.h"
#include "ufo_cert.h"
#include "ufo_error.h"
#include "ufo_cli.h"

int
ufo_cmd_keygen (int argc, char **argv)
{
    const char *name = NULL, *role = NULL, *dir = "keys";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv [i];
        if ((strcmp (arg, "--help") == 0) || (strcmp (arg, "-h") == 0)) {
            ufo_cli_usage (stdout, "keygen");
            printf ("\nWrites DIR/NAME.cert (public: copy it into the broker's allowed directory)\n"
                    "and DIR/NAME.cert_secret (private, mode 0600: keep it on the host that uses it).\n\n"
                    "Options:\n"
                    "  --role ROLE   agent | client | monitor | broker (required)\n"
                    "  --dir DIR     where to write (default ./keys, created mode 0700)\n");
            return UFO_CLI_OK;
        }
        if (((strcmp (arg, "--role") == 0) || (strcmp (arg, "--dir") == 0)) && i + 1 < argc) {
            if ((strcmp (arg, "--role") == 0))
                role = argv [++i];
            else
                dir = argv [++i];
        }
        else
        if (strncmp (arg, "--role=", 7) == 0)
            role = arg + 7;
        else
        if (strncmp (arg, "--dir=", 6) == 0)
            dir = arg + 6;
        else
        if (arg [0] == '-') {
            fprintf (stderr, "ufo keygen: unknown or incomplete option %s\n", arg);
            ufo_cli_usage (stderr, "keygen");
            return UFO_CLI_USAGE;
        }
        else
        if (!name)
            name = arg;
        else {
            fprintf (stderr, "ufo keygen: one NAME only (got \"%s\" and \"%s\")\n", name, arg);
            return UFO_CLI_USAGE;
        }
    }
    if (!name || !role) {
        fprintf (stderr, "ufo keygen: %s is required\n", !name ? "NAME" : "--role");
        ufo_cli_usage (stderr, "keygen");
        return UFO_CLI_USAGE;
    }
    ufo_error_t err;
    if (ufo_cert_generate (dir, name, role, &err)) {
        fprintf (stderr, "ufo keygen: %s\n", err.message);
        return err.code == UFO_E_INVALID ? UFO_CLI_USAGE : UFO_CLI_FAIL;
    }
    printf ("%s/%s.cert         public key, role %s\n%s/%s.cert_secret  private key (mode 0600)\n",
            dir, name, role, dir, name);
    return UFO_CLI_OK;
}
