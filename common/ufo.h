/*  ufo.h - public API of libufo, the library every ufobus process shares.
    Include this one header; it pulls in every public module. */
#ifndef UFO_H_INCLUDED
#define UFO_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "ufo_error.h"
#include "ufo_buf.h"
#include "ufo_utf8.h"
#include "ufo_clock.h"
#include "ufo_hex.h"
#include "ufo_log.h"
#include "ufo_value.h"
#include "ufo_json.h"
#include "ufo_msgpack.h"
#include "ufo_tasklog.h"
#include "ufo_paths.h"
#include "ufo_modules.h"

#ifdef __cplusplus
}
#endif
#endif
