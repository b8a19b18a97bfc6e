/*  ufo_xrecord.h - what a person does with mouse and keyboard on an X display, through the
    X RECORD extension (libXtst): button presses and key presses, in order, as they reach the
    server (synthetic XTest input included). The only module that includes record.h.

    Used by `ufo record` (demonstrations): the caller polls ufo_xrecord_fd in its loop and
    calls ufo_xrecord_next until it returns NULL. */
#ifndef UFO_XRECORD_H_INCLUDED
#define UFO_XRECORD_H_INCLUDED

#include "ufo_error.h"
#include "ufo_value.h"

typedef struct _ufo_xrecord_t ufo_xrecord_t;

//  Starts recording on display (NULL: $DISPLAY). Returns NULL with err when the display
//  cannot be opened or has no RECORD extension.
ufo_xrecord_t *ufo_xrecord_new (const char *display, ufo_error_t *err);

//  Stops recording and closes the connections; sets *self_p to NULL. Safe twice.
void ufo_xrecord_destroy (ufo_xrecord_t **self_p);

//  The socket to poll for input (readable when events may be waiting).
int ufo_xrecord_fd (ufo_xrecord_t *self);

//  The next recorded event (caller owns), or NULL when none is waiting. Events:
//    {"type": "click", "x": int, "y": int, "button": 1..5}     screen coordinates
//    {"type": "key", "text": "a"}                              a printable character (shift applied)
//    {"type": "key", "key": "Return", "ctrl": bool, "alt": bool}   any other key, by its X name;
//                                                              letters with ctrl/alt come here too
//  Modifier keys alone produce nothing.
ufo_value_t *ufo_xrecord_next (ufo_xrecord_t *self);

#endif
