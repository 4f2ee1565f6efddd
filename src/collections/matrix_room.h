/* Whether this rank's tiles of a new matrix fit the host memory weft's
 * copies may take, asked before any of them is allocated. */
#ifndef WEFT_COLLECTIONS_MATRIX_ROOM_H
#define WEFT_COLLECTIONS_MATRIX_ROOM_H

#include "weft/weft.h"

/* The tiles of A (its shape set, none made yet) that owners gives this
 * rank (owners[k] for tile k = j * mt + i, from the distribution's rank
 * function), weighed against the room left in the rank's host memory pool
 * (host_memory_use, data/hostmem.h): WEFT_SUCCESS when they fit, when
 * there is none or no limit, else WEFT_ERR_NOMEM after a line naming
 * `call`, the matrix, the rank's bytes and the limit. A simulation gives
 * tiles no memory: always WEFT_SUCCESS. Main thread. */
int weft_matrix__check_room(const weft_matrix_t *A, const char *call, const int *owners);

#endif
