/* Whether this rank's tiles of a new matrix fit the host memory weft's
 * copies may take, asked before any of them is allocated. */
#ifndef WEFT_COLLECTIONS_MATRIX_ROOM_H
#define WEFT_COLLECTIONS_MATRIX_ROOM_H

#include <stdint.h>

#include "weft/weft.h"

/* The tiles that dist gives this rank of an m x n matrix of `type` in mb x
 * nb tiles (a shape check_shape passed), weighed against the room left in
 * the rank's host memory pool (host_memory_use, data/hostmem.h):
 * WEFT_SUCCESS when they fit or there is no limit, else WEFT_ERR_NOMEM
 * after a line naming `call`, the matrix, the rank's bytes and the limit.
 * A simulation gives tiles no memory: always WEFT_SUCCESS. Main thread. */
int weft_matrix__check_room(weft_context_t *ctx, const char *call, weft_dtype_t type, int64_t m,
                            int64_t n, int mb, int nb, const weft_dist_t *dist);

#endif
