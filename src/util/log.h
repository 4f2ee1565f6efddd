/* One door for every message weft prints: level, rank and device prefix. */
#ifndef WEFT_UTIL_LOG_H
#define WEFT_UTIL_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

enum { WEFT_LOG_ERROR = 0, WEFT_LOG_WARN = 1, WEFT_LOG_INFO = 2, WEFT_LOG_DEBUG = 3 };

/* Process-wide: the rank shown in every line and the verbosity threshold.
 * Set by weft_init once MPI has started; before, the rank is the one the
 * launcher put in the environment (0 without a launcher). */
void weft_log_set_rank(int rank);
int weft_log_rank(void);
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
/* Copies the message of the newest error line the calling thread logged,
 * "" if none since its last clear: a failure can then be told to the
 * other ranks. */
void weft_log_last_error(char *buf, size_t n);
void weft_log_clear_last_error(void);
/* Makes the calling thread's place for its newest error line now, not at
 * its first error line (which may come from a signal handler's refused
 * call: no allocation there). The thread that makes a context calls it. */
void weft_log_thread_ready(void);

/* The cause of a task's failure, in the words of the first error line a
 * thread logged while it worked for that task (staged its inputs, ran its
 * body, completed it): only that thread's line said why, and the failure
 * record that every rank logs at the wait carries it (stf/failure.c). It
 * lives in the task, so that the thread that logs (an emu device's
 * thread, which runs the body) and the one that ends the task (its device
 * manager) may differ. Bounded, without allocation: a longer line is cut
 * at a clause or a word. */
#define WEFT_LOG_CAUSE 256
typedef struct weft_log_cause {
    atomic_int state; /* 0 empty, 1 being written, 2 written: the first writer wins */
    char text[WEFT_LOG_CAUSE];
} weft_log_cause_t;

/* Empties c, before its task runs (the task structures are recycled). */
void weft_log_cause_reset(weft_log_cause_t *c);
/* From now on, the first error line this thread logs goes to c unless c
 * holds one already (NULL: to none); returns the previous target, for
 * weft_log_cause_leave (the spans nest: a body runs inside its device
 * manager's span, or an insertion's body inside the main thread's). */
weft_log_cause_t *weft_log_cause_enter(weft_log_cause_t *c);
void weft_log_cause_leave(weft_log_cause_t *saved);
/* c's text, or NULL while none was written. Any thread, once the writer's
 * work for the task is known to be over (its event passed, its body
 * returned). */
const char *weft_log_cause_text(const weft_log_cause_t *c);
/* c takes line as its text unless it holds one: a line logged outside
 * c's span that is still the task's cause (said by a thread its body
 * started, an OpenMP team's or its own). */
void weft_log_cause_offer(weft_log_cause_t *c, const char *line);
/* Copies from's text into to when to holds none (a batch body's cause is
 * each member's). */
void weft_log_cause_copy(weft_log_cause_t *to, const weft_log_cause_t *from);
/* An error line that restates the outcome of a task ("task X failed: its
 * body returned -42"), which its failure record names already: logged as
 * weft_log(WEFT_LOG_ERROR, ...) but never taken as the cause. */
void weft_log_outcome(int device, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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
