/* One door for every message weft prints: level, rank and device prefix. */
#ifndef WEFT_UTIL_LOG_H
#define WEFT_UTIL_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum { WEFT_LOG_ERROR = 0, WEFT_LOG_WARN = 1, WEFT_LOG_INFO = 2, WEFT_LOG_DEBUG = 3 };

/* Process-wide: the rank shown in every line and the verbosity threshold.
 * Set once by weft_init before any thread starts. */
void weft_log_set_rank(int rank);
void weft_log_set_level(int level);
int weft_log_level(void);

/* device < 0 means "no device" (host side code). Messages go to stderr,
 * except WEFT_LOG_INFO which goes to stdout. */
void weft_log(int level, int device, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Statistics asked for by the user (show_stats): always printed, to
 * stdout, as "weft[rank.device] stats: ...". */
void weft_log_stats(int device, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A summary line that names its rank itself (the simulation's, which
 * tools parse): "weft <message>" on stdout, always printed. */
void weft_log_summary(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The longest message kept whole; longer ones are cut. */
#define WEFT_LOG_LINE 1024
/* Copies the message of the newest error line (any thread), "" if none
 * since the last clear: a failure can then be told to the other ranks. */
void weft_log_last_error(char *buf, size_t n);
void weft_log_clear_last_error(void);

#define weft_error(...) weft_log(WEFT_LOG_ERROR, -1, __VA_ARGS__)
#define weft_warn(...) weft_log(WEFT_LOG_WARN, -1, __VA_ARGS__)

/* Hot-path debug output compiles out of release builds. */
#ifdef WEFT_DEBUG_LOG
#define weft_debug(dev, ...)                                                                       \
    do {                                                                                           \
        if (weft_log_level() >= WEFT_LOG_DEBUG) weft_log(WEFT_LOG_DEBUG, dev, __VA_ARGS__);        \
    } while (0)
#else
#define weft_debug(dev, ...) ((void)(dev))
#endif

#endif
