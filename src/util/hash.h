/* 64-bit FNV-1a with a fold, the hash the ranks compare their arguments by (graphs,
 * distributions, collective calls, texts): one step a word or a byte. */
#ifndef WEFT_UTIL_HASH_H
#define WEFT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_HASH_INIT 1469598103934665603ULL

/* The fold after FNV's multiply brings the high bits down: a product
 * carries a bit only upward, so the top bit of a word reached the top bit
 * of the hash alone, and two words' sign bits flipped together cancelled
 * (a tile's two negated doubles passed check_reads). */
static inline uint64_t weft_hash_step(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 1099511628211ULL;
    return h ^ (h >> 32);
}

static inline uint64_t weft_hash_words(uint64_t h, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++) h = weft_hash_step(h, v[i]);
    return h;
}

#endif
