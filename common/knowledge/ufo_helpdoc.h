/*  ufo_helpdoc.h - reads one help document into titled passages: Mallard (.page) and
    DocBook (.xml, .docbook) help, man pages (roff, plain or .gz) and notes (.md, .txt).
    The only module that includes libxml2 and zlib headers.

    XML is parsed without network access, external entities or XInclude. A passage is at
    most UFO_HELPDOC_PASSAGE_MAX bytes of text (longer sections are cut at paragraph ends);
    its title is the document's title, then the section's ("Page › Section"). */
#ifndef UFO_HELPDOC_H_INCLUDED
#define UFO_HELPDOC_H_INCLUDED

#include <stddef.h>
#include "ufo_error.h"

#define UFO_HELPDOC_PASSAGE_MAX 2000

//  Called once per passage, in document order. Strings are borrowed for the call; ref is
//  the file's base name, with "#section-id" when the section has one.
typedef void (ufo_helpdoc_fn) (const char *title, const char *text, const char *ref, void *arg);

//  The format a file name stands for: "mallard", "docbook", "man", "markdown", "text",
//  or NULL when it is not a help document this module reads.
const char *ufo_helpdoc_format (const char *path);

//  Reads the file at path (at most max_bytes, before and after decompression) and calls fn
//  for each passage. Returns the number of passages, or -1 with err naming the file and the
//  reason (too large, not UTF-8, not well-formed XML, unreadable); nothing is called then.
int ufo_helpdoc_parse (const char *path, size_t max_bytes, ufo_helpdoc_fn *fn, void *arg,
                       ufo_error_t *err);

//  The same for a document already in memory; name gives its format and ref.
int ufo_helpdoc_parse_mem (const char *name, const char *data, size_t len, ufo_helpdoc_fn *fn,
                           void *arg, ufo_error_t *err);

#endif
