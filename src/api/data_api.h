/* Data handles as the stf layer makes and checks them (data_api.c), and the
 * host's access to user memory between taskpools (acquire.c). */
#ifndef WEFT_API_DATA_API_H
#define WEFT_API_DATA_API_H

#include "context/context.h"

/* weft_data_release without the checks of the public call: a matrix's
 * tile, which the user may not release alone (weft_matrix_free). */
void weft_data__release(weft_data_t *d);

/* WEFT_SUCCESS when no taskpool not waited for uses d; else
 * WEFT_ERR_INVALID after an error naming call, d and the taskpool: the
 * calls documented "between taskpools". */
int weft_data_check_between(const weft_data_t *d, const char *call);
/* Claims d's tile of user memory at ptr (d's rows x cols, ld apart) among
 * the rank's live registrations for `call`: *out the span. The refusal of
 * memory another live handle holds is logged, naming both. Main thread. */
int weft_data_claim_memory(weft_data_t *d, const char *call, void *ptr, int64_t ld,
                           weft_span_t **out) __attribute__((warn_unused_result));

/* WEFT_SUCCESS unless d is a NEW data with an initialiser that no task
 * wrote, on several ranks: then WEFT_ERR_INVALID after an error naming
 * call. Each rank that reads such a data first makes its initial contents
 * itself (no transfer), so a write outside tasks on its owner (a host
 * acquire for write, a device registration with current contents) would
 * reach no other rank; a reducible data's reductions start from it, so it
 * is allowed there. Main thread. */
int weft_data_check_outside_write(const weft_data_t *d, const char *call);

/* WEFT_SUCCESS when mode is WEFT_R, WEFT_W or WEFT_RW, else
 * WEFT_ERR_INVALID after an error naming `call` and the mode. */
int weft_acquire_check_mode(int mode, const char *call) __attribute__((warn_unused_result));
/* The host copy of d for the host to use in `mode` (WEFT_R, WEFT_W or
 * WEFT_RW) between taskpools; `call` names the public call in messages.
 * Sets *ptr and *ld on success; WEFT_ERR_INVALID (logged) for a data in
 * use by a taskpool not waited for, already acquired, or not held by this
 * rank; a transfer's status when the newest version could not come home. */
int weft_acquire_host(weft_data_t *d, int mode, const char *call, void **ptr, int64_t *ld)
    __attribute__((warn_unused_result));
/* Before weft_acquire_end, with check_reads set: a read acquire whose host
 * copy changed is named (WEFT_ERR_INVALID). */
int weft_acquire_check_read(weft_data_t *d, const char *call) __attribute__((warn_unused_result));
/* Ends the host access of d: after a write, the host copy becomes the only
 * current one (device copies stale). */
void weft_acquire_end(weft_data_t *d);

#endif
