/*  ufo_paths.h - where ufobus finds its data files (default configuration, prompts,
    prices, helper scripts), for a build tree and for an installation under any prefix.

    A relative name such as "config/ufo.json" or "prompts" is looked up, first hit wins:
      1. the working directory;
      2. the installed data directory next to the running executable: <exe>/../share/ufobus
         (so `cmake --install --prefix P` works wherever P is, even when moved);
      3. for binaries that run from the build tree only: the source tree;
      4. the data directory fixed at configure time (CMAKE_INSTALL_PREFIX/share/ufobus). */
#ifndef UFO_PATHS_H_INCLUDED
#define UFO_PATHS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

//  Finds a readable file or directory by its relative name. Writes the path into out[size]
//  and returns true, or returns false when it is nowhere. An absolute name is only checked.
bool ufo_data_find (const char *relative, char *out, size_t size);

//  The installed data directory of the running executable (<exe>/../share/ufobus) if it
//  exists, else NULL. Borrowed, computed once.
const char *ufo_data_installed_dir (void);

#endif
