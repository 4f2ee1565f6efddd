/* Time, read one way everywhere: a monotonic clock for durations, and the
 * absolute deadlines that pthread_cond_timedwait takes (CLOCK_REALTIME). */
#ifndef WEFT_UTIL_CLOCK_H
#define WEFT_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds of CLOCK_MONOTONIC. */
static inline int64_t weft_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Seconds of CLOCK_MONOTONIC. */
static inline double weft_clock_s(void) { return 1e-9 * (double)weft_clock_ns(); }

/* Seconds of CPU time of the calling thread: a duration of its own work
 * that a loaded machine, which takes the core away, does not stretch. */
static inline double weft_clock_thread_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The deadline `ns` nanoseconds from now, for pthread_cond_timedwait. */
static inline struct timespec weft_deadline_in(int64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t t = ts.tv_nsec + ns;
    ts.tv_sec += (time_t)(t / 1000000000LL);
    ts.tv_nsec = (long)(t % 1000000000LL);
    return ts;
}

#endif
