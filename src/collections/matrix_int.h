/* The matrix structure, shared by the files of the collections layer
 * (matrix.c makes it, collect.c gathers and scatters it); never installed. */
#ifndef WEFT_COLLECTIONS_MATRIX_INT_H
#define WEFT_COLLECTIONS_MATRIX_INT_H

#include <stddef.h>

#include "api/data_api.h"

struct weft_matrix {
    uint32_t tag; /* util/handle.h: WEFT_HANDLE_MATRIX; first field */
    weft_context_t *ctx;
    weft_dtype_t type;
    int64_t m, n;
    int mb, nb, mt, nt, P, Q;
    /* Owners follow the P x Q grid (no user distribution): a tile's owner
     * is computed, not read from its handle, a cache miss a tile when a
     * rank asks for many (docs/SCALE.md). */
    int cyclic;
    weft_data_t **tiles; /* column-major, mt x nt */
    int *local;          /* column-major indices of this rank's tiles */
    int nlocal;
    /* weft_matrix_host_acquire succeeded and was not released: on a rank
     * holding no tile, what lets the release succeed too. */
    int host_acquired;
    /* A wrapped matrix's user memory (data/span.h), until it is freed. */
    struct weft_span *span;
};
/* A call finds a handle's context where weft_handle_context looks for it. */
_Static_assert(offsetof(struct weft_matrix, ctx) == offsetof(weft_handle_head_t, ctx),
               "the context of a handle follows its tag (context/context.h)");

/* weft_matrix_host_acquire on behalf of `call` (gather, scatter), which
 * its messages name: the user made no host acquire. The caller checked A. */
int weft_matrix__host_acquire_for(weft_matrix_t *A, int mode, const char *call);

/* The most bytes one round of collect.c's MPI_Gatherv / MPI_Scatterv
 * moves from each rank (0: as many as MPI's int counts allow); tests lower
 * it to run the rounds of a matrix past 2 GiB on small matrices. */
extern int weft_collect__round_bytes;

#endif
