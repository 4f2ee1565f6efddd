#include "util/log.h"

#include <stdio.h>

static int log_rank = 0;
static int log_level = WEFT_LOG_WARN;

void weft_log_set_rank(int rank) { log_rank = rank; }
void weft_log_set_level(int level) { log_level = level; }
int weft_log_level(void) { return log_level; }

void weft_log(int level, int device, const char *fmt, ...)
{
    static const char *names[] = {"error", "warning", "info", "debug"};
    if (level > log_level && level != WEFT_LOG_ERROR) return;
    FILE *out = level == WEFT_LOG_INFO ? stdout : stderr;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* One fprintf per line so lines of different threads do not interleave. */
    if (device >= 0)
        fprintf(out, "weft[%d.%d] %s: %s\n", log_rank, device, names[level], line);
    else
        fprintf(out, "weft[%d] %s: %s\n", log_rank, names[level], line);
}

void weft_log_stats(int device, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (device >= 0)
        fprintf(stdout, "weft[%d.%d] stats: %s\n", log_rank, device, line);
    else
        fprintf(stdout, "weft[%d] stats: %s\n", log_rank, line);
    fflush(stdout);
}
