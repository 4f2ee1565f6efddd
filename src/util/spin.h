/* A test-and-test-and-set spinlock for short critical sections on the hot
 * path (a few loads and stores); anything longer uses a pthread mutex. */
#ifndef WEFT_UTIL_SPIN_H
#define WEFT_UTIL_SPIN_H

#include <stdatomic.h>

static inline void weft_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

typedef struct {
    atomic_int v;
} weft_spin_t;

#define WEFT_SPIN_INIT                                                                             \
    {                                                                                              \
        0                                                                                          \
    }

static inline void weft_spin_init(weft_spin_t *s) { atomic_init(&s->v, 0); }

static inline void weft_spin_lock(weft_spin_t *s)
{
    for (;;) {
        if (!atomic_exchange_explicit(&s->v, 1, memory_order_acquire)) return;
        while (atomic_load_explicit(&s->v, memory_order_relaxed)) weft_cpu_relax();
    }
}

static inline int weft_spin_trylock(weft_spin_t *s)
{
    return !atomic_load_explicit(&s->v, memory_order_relaxed) &&
           !atomic_exchange_explicit(&s->v, 1, memory_order_acquire);
}

static inline void weft_spin_unlock(weft_spin_t *s)
{
    atomic_store_explicit(&s->v, 0, memory_order_release);
}

#endif
