/* Reference -> number map of the PTG builder (ptgmap.h). */
#include "ptg/ptgmap.h"

#include <stdlib.h>
#include <string.h>

void weft_ptgmap_init(weft_ptgmap_t *m) { *m = (weft_ptgmap_t){0}; }

void weft_ptgmap_fini(weft_ptgmap_t *m)
{
    free(m->keys);
    free(m->vals);
    *m = (weft_ptgmap_t){0};
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static size_t slot_of(const weft_ptg_ref_t *k, size_t cap)
{
    uint64_t h = mix((uint64_t)(uint32_t)k->cls, (uint64_t)(uint32_t)k->flow);
    for (int i = 0; i < WEFT_PTG_MAX_DIMS; i++) h = mix(h, (uint64_t)(uint32_t)k->idx[i]);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int same(const weft_ptg_ref_t *a, const weft_ptg_ref_t *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

size_t weft_ptgmap_get(const weft_ptgmap_t *m, const weft_ptg_ref_t *key)
{
    if (m->cap == 0) return SIZE_MAX;
    for (size_t s = slot_of(key, m->cap);; s = (s + 1) & (m->cap - 1)) {
        if (m->vals[s] == SIZE_MAX) return SIZE_MAX;
        if (same(&m->keys[s], key)) return m->vals[s];
    }
}

static void place(weft_ptg_ref_t *keys, size_t *vals, size_t cap, const weft_ptg_ref_t *k,
                  size_t v)
{
    size_t s = slot_of(k, cap);
    while (vals[s] != SIZE_MAX) s = (s + 1) & (cap - 1);
    keys[s] = *k;
    vals[s] = v;
}

static int grow(weft_ptgmap_t *m)
{
    size_t cap = m->cap ? 2 * m->cap : 64;
    weft_ptg_ref_t *keys = malloc(cap * sizeof *keys);
    size_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return WEFT_ERR_NOMEM;
    }
    memset(vals, 0xff, cap * sizeof *vals);
    for (size_t s = 0; s < m->cap; s++)
        if (m->vals[s] != SIZE_MAX) place(keys, vals, cap, &m->keys[s], m->vals[s]);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return WEFT_SUCCESS;
}

int weft_ptgmap_put(weft_ptgmap_t *m, const weft_ptg_ref_t *key, size_t val)
{
    if (2 * (m->n + 1) > m->cap && grow(m) != WEFT_SUCCESS) return WEFT_ERR_NOMEM;
    place(m->keys, m->vals, m->cap, key, val);
    m->n++;
    return WEFT_SUCCESS;
}

size_t weft_ptgmap_bytes(const weft_ptgmap_t *m)
{
    return m->cap * (sizeof *m->keys + sizeof *m->vals);
}
