/* The logging door: levels, the rank (and device) in every line. */
#include "util/log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int log_rank = 0;
static int log_level = WEFT_LOG_WARN;

/* The text of the newest error line, so that a failure can be told to the
 * other ranks (weft_init's agreement sends the failing rank's own words). */
static pthread_mutex_t last_error_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_error[WEFT_LOG_LINE];

void weft_log_set_rank(int rank) { log_rank = rank; }
void weft_log_set_level(int level) { log_level = level; }
int weft_log_level(void) { return log_level; }

void weft_log_last_error(char *buf, size_t n)
{
    if (!buf || n == 0) return;
    pthread_mutex_lock(&last_error_lock);
    snprintf(buf, n, "%s", last_error);
    pthread_mutex_unlock(&last_error_lock);
}

void weft_log_clear_last_error(void)
{
    pthread_mutex_lock(&last_error_lock);
    last_error[0] = '\0';
    pthread_mutex_unlock(&last_error_lock);
}

/* One line "weft[rank.device] label: message" on out, by one fprintf so
 * that lines of different threads do not interleave. */
static void emit(FILE *out, int device, const char *label, const char *line)
{
    if (device >= 0)
        fprintf(out, "weft[%d.%d] %s: %s\n", log_rank, device, label, line);
    else
        fprintf(out, "weft[%d] %s: %s\n", log_rank, label, line);
}

void weft_log(int level, int device, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > log_level && level != WEFT_LOG_ERROR) return;
    char line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (level == WEFT_LOG_ERROR) {
        pthread_mutex_lock(&last_error_lock);
        memcpy(last_error, line, sizeof line);
        pthread_mutex_unlock(&last_error_lock);
    }
    emit(level == WEFT_LOG_INFO ? stdout : stderr, device, names[level], line);
}

void weft_log_stats(int device, const char *fmt, ...)
{
    char line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(stdout, device, "stats", line);
    fflush(stdout);
}

void weft_log_summary(const char *fmt, ...)
{
    char line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stdout, "weft %s\n", line);
    fflush(stdout);
}
