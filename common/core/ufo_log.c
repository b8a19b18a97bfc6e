/*  ufo_log.c - levelled logging to stderr (or a chosen stream), human or JSON lines. */
#include "ufo_prelude.h"
#include "ufo_buf.h"
#include "ufo_json.h"
#include "ufo_log.h"
#include <pthread.h>
#include <sys/time.h>

static pthread_mutex_t s_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static char s_name [64] = "ufo";
static int s_level = UFO_LOG_INFO;
static bool s_json = false;
static FILE *s_stream = NULL;

static const char *s_level_names [] = { "trace", "debug", "info", "warn", "error", "off" };

static void
s_init_from_env (void)
{
    const char *level = getenv ("UFO_LOG_LEVEL");
    if (level) {
        int parsed = ufo_log_level_parse (level);
        if (parsed >= 0)
            s_level = parsed;
    }
    const char *json = getenv ("UFO_LOG_JSON");
    if (json && (strcmp (json, "1") == 0 || strcasecmp (json, "true") == 0))
        s_json = true;
}

void
ufo_log_set_name (const char *name)
{
    pthread_once (&s_once, s_init_from_env);
    pthread_mutex_lock (&s_lock);
    snprintf (s_name, sizeof (s_name), "%s", name ? name : "ufo");
    pthread_mutex_unlock (&s_lock);
}

void
ufo_log_set_level (ufo_log_level_t level)
{
    pthread_once (&s_once, s_init_from_env);
    if ((int) level >= UFO_LOG_TRACE && level <= UFO_LOG_OFF)
        s_level = level;
}

ufo_log_level_t
ufo_log_level (void)
{
    pthread_once (&s_once, s_init_from_env);
    return (ufo_log_level_t) s_level;
}

int
ufo_log_level_parse (const char *text)
{
    if (!text)
        return -1;
    for (int i = 0; i < (int) UFO_ARRAY_SIZE (s_level_names); i++)
        if (strcasecmp (text, s_level_names [i]) == 0)
            return i;
    if (strcasecmp (text, "warning") == 0)
        return UFO_LOG_WARN;
    return -1;
}

void
ufo_log_set_json (bool json)
{
    pthread_once (&s_once, s_init_from_env);
    s_json = json;
}

void
ufo_log_set_stream (FILE *stream)
{
    pthread_mutex_lock (&s_lock);
    s_stream = stream;
    pthread_mutex_unlock (&s_lock);
}

void
ufo_log (ufo_log_level_t level, const char *format, ...)
{
    pthread_once (&s_once, s_init_from_env);
    if ((int) level < s_level || level >= UFO_LOG_OFF)
        return;

    char message [2048];
    va_list args;
    va_start (args, format);
    vsnprintf (message, sizeof (message), format, args);
    va_end (args);

    struct timeval tv;
    gettimeofday (&tv, NULL);
    struct tm tm;
    gmtime_r (&tv.tv_sec, &tm);
    char stamp [64];
    snprintf (stamp, sizeof (stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
              (int) (tv.tv_usec / 1000));

    ufo_buf_t line = {0};
    pthread_mutex_lock (&s_lock);
    if (s_json) {
        ufo_buf_printf (&line, "{\"ts\":\"%s\",\"level\":\"%s\",\"proc\":", stamp, s_level_names [level]);
        ufo_json_append_string (&line, s_name, strlen (s_name), UFO_JSON_COMPACT);
        ufo_buf_printf (&line, ",\"pid\":%d,\"msg\":", (int) getpid ());
        ufo_json_append_string (&line, message, strlen (message), UFO_JSON_COMPACT);
        ufo_buf_puts (&line, "}\n");
    }
    else
        ufo_buf_printf (&line, "%s %s[%d] %s: %s\n", stamp, s_name, (int) getpid (),
                        s_level_names [level], message);
    FILE *stream = s_stream ? s_stream : stderr;
    fwrite (line.data, 1, line.len, stream);
    fflush (stream);
    pthread_mutex_unlock (&s_lock);
    ufo_buf_free (&line);
}
