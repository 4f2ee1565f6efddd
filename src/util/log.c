#include "util/log.h"

#include <stdio.h>

static int log_rank = 0;
static int log_level = WEFT_LOG_WARN;

void weft_log_set_rank(int rank) { log_rank = rank; }
void weft_log_set_level(int level) { log_level = level; }
int weft_log_level(void) { return log_level; }

/* One line "weft[rank.device] label: message" on out, by one fprintf so
 * that lines of different threads do not interleave. */
static void emit(FILE *out, int device, const char *label, const char *fmt, va_list ap)
{
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (device >= 0)
        fprintf(out, "weft[%d.%d] %s: %s\n", log_rank, device, label, line);
    else
        fprintf(out, "weft[%d] %s: %s\n", log_rank, label, line);
}

void weft_log(int level, int device, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > log_level && level != WEFT_LOG_ERROR) return;
    va_list ap;
    va_start(ap, fmt);
    emit(level == WEFT_LOG_INFO ? stdout : stderr, device, names[level], fmt, ap);
    va_end(ap);
}

void weft_log_stats(int device, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(stdout, device, "stats", fmt, ap);
    va_end(ap);
    fflush(stdout);
}
