/* Type tags of the public handles (context, data, matrix, taskpool). Each
 * handle structure starts with a uint32_t tag, so that a public call can
 * tell which kind of handle it was given, and whether it was released,
 * before it reads anything else. A released handle keeps its memory for a
 * while (see quarantine.h) with its tag turned to the released form. */
#ifndef WEFT_UTIL_HANDLE_H
#define WEFT_UTIL_HANDLE_H

#include <stdint.h>

typedef enum weft_handle_kind {
    WEFT_HANDLE_CONTEXT = 0x57460c01,
    WEFT_HANDLE_DATA = 0x57460d02,
    WEFT_HANDLE_MATRIX = 0x57460a03,
    WEFT_HANDLE_TASKPOOL = 0x57460b04,
} weft_handle_kind_t;

/* OR-ed into a tag when the user gave the handle back. */
#define WEFT_HANDLE_RELEASED 0x00800000u

/* Set instead when weft_fini ended the handle's context: the handle keeps
 * its memory (with this tag) for the rest of the process, so that a call
 * made with it after weft_fini is refused instead of reading freed memory. */
#define WEFT_HANDLE_ENDED 0x00100000u

/* The released form of tag `kind`. */
static inline uint32_t weft_handle_released(weft_handle_kind_t kind)
{
    return (uint32_t)kind | WEFT_HANDLE_RELEASED;
}

/* The form of a tag (live or released) once weft_fini ended its context. */
static inline uint32_t weft_handle_ended(uint32_t tag)
{
    return (tag & ~WEFT_HANDLE_RELEASED) | WEFT_HANDLE_ENDED;
}

/* A handle's tag (its first 4 bytes), read and written relaxed-atomically
 * where another thread may look at it: weft_fini ends a context's handles
 * while a monitor thread's weft_stats_get checks the context's (calls
 * documented for any thread; a plain read beside the write was a data
 * race, ThreadSanitizer). */
static inline uint32_t weft_handle_tag(const void *h)
{
    return __atomic_load_n((const uint32_t *)h, __ATOMIC_RELAXED);
}
static inline void weft_handle_tag_set(void *h, uint32_t tag)
{
    __atomic_store_n((uint32_t *)h, tag, __ATOMIC_RELAXED);
}

/* 1 when h is a live handle of `want`; otherwise logs "argument pos of
 * call is <what h is>, not a <want>" with a hint on the fix, returns 0. */
int weft_handle_check(const void *h, weft_handle_kind_t want, const char *call, int pos);
/* Below this no process maps memory (Linux's mmap_min_addr is 4096 or
 * more; 65536 by default): such a "pointer" is an int passed where a
 * handle or an address belongs, and reading it crashed the call (SIGSEGV
 * on every rank, without a word). Another address that maps nothing
 * still crashes, as in any C library. */
#define WEFT_SMALLEST_ADDRESS 4096

/* p is not NULL but below any address a process maps. Inline: every
 * insertion asks it of each flow. */
static inline int weft_address_is_small(const void *p)
{
    return p && (uintptr_t)p < WEFT_SMALLEST_ADDRESS;
}

/* The public type name of a kind ("weft_data_t"). */
const char *weft_handle_type_name(weft_handle_kind_t kind);

#endif
