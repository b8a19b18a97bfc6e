/*  ufo_paths.c - locating data files in a build tree or an installation. */
#include "ufo_prelude.h"
#include "ufo_paths.h"
#include <libgen.h>
#include <pthread.h>

static char s_installed [4096];
static bool s_have_installed;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

static void
s_find_installed (void)
{
    char exe [4096];
    ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return;
    exe [n] = 0;
    char *dir = dirname (exe);                  //  <prefix>/bin
    char candidate [4096 + 32];
    snprintf (candidate, sizeof candidate, "%s/../share/ufobus", dir);
    char resolved [4096];
    struct stat st;
    if (realpath (candidate, resolved) && stat (resolved, &st) == 0 && S_ISDIR (st.st_mode)) {
        snprintf (s_installed, sizeof s_installed, "%s", resolved);
        s_have_installed = true;
    }
}

const char *
ufo_data_installed_dir (void)
{
    pthread_once (&s_once, s_find_installed);
    return s_have_installed ? s_installed : NULL;
}

bool
ufo_data_find (const char *relative, char *out, size_t size)
{
    assert (relative && out && size);
    if (relative [0] == '/') {
        snprintf (out, size, "%s", relative);
        return access (out, R_OK) == 0;
    }
    if (access (relative, R_OK) == 0) {
        snprintf (out, size, "%s", relative);
        return true;
    }
    const char *installed = ufo_data_installed_dir ();
    const char *roots [3];
    size_t count = 0;
    if (installed)
        roots [count++] = installed;
#ifdef UFO_SOURCE_DIR
    else
        roots [count++] = UFO_SOURCE_DIR;       //  a binary of the build tree
#endif
#ifdef UFO_DATADIR
    roots [count++] = UFO_DATADIR;
#endif
    for (size_t i = 0; i < count; i++) {
        snprintf (out, size, "%s/%s", roots [i], relative);
        if (access (out, R_OK) == 0)
            return true;
    }
    return false;
}
