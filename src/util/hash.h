/* 64-bit FNV-1a, the hash the ranks compare their arguments by (graphs,
 * distributions, collective calls, texts): one step a word or a byte. */
#ifndef WEFT_UTIL_HASH_H
#define WEFT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_HASH_INIT 1469598103934665603ULL

static inline uint64_t weft_hash_step(uint64_t h, uint64_t v) { return (h ^ v) * 1099511628211ULL; }

static inline uint64_t weft_hash_words(uint64_t h, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) h = weft_hash_step(h, v[i]);
    return h;
}

#endif
