/* Debug aids around a body that runs on the host or an emu device, whose
 * flows' memory the host can read (CUDA and HIP bodies are not checked:
 * their copies are in device memory, their kernels still in flight when
 * the body returns).
 *
 * check_reads catches a body writing through a flow it was given to read
 * (WEFT_R). Nothing else would: the write lands in the copy other readers
 * share, or in the user's memory, and a copy sent to another rank silently
 * differs from the one kept here. Each read-only flow is hashed before the
 * body and again after it.
 *
 * check_writes catches a body that reads a flow it was given to write only
 * (WEFT_W where WEFT_RW was meant): such a flow's copy holds whatever it
 * held (often the previous version on the host, stale memory on a device
 * after an eviction), so the program is right on one placement and wrong
 * on another. Each write-only flow is filled with NaNs (of doubles and
 * floats alike) before the body, so that what it computes from them is
 * wrong everywhere; elements that still hold those NaNs after the body
 * (left unwritten, or computed from them) are said. */
#ifndef WEFT_STF_FLOWCHECK_H
#define WEFT_STF_FLOWCHECK_H

#include <stdint.h>

#include "sched/task.h"

typedef struct weft_flowcheck {
    int reads, writes;                     /* whether check_reads / check_writes asked for it */
    uint64_t hash[WEFT_MAX_FLOWS];         /* each checked read-only flow's bytes before the body */
    unsigned char checked[WEFT_MAX_FLOWS]; /* read-only flows hashed */
    unsigned char poisoned[WEFT_MAX_FLOWS]; /* write-only flows filled */
} weft_flowcheck_t;

/* d's bytes in memory at ptr, ld elements apart (column by column): also
 * the host's read acquires' check (api/acquire.c). */
uint64_t weft_flowcheck_hash(const weft_data_t *d, const void *ptr, int64_t ld);

/* Hashes t's read-only flows when check_reads is set, fills its
 * write-only ones when check_writes is. */
void weft_flowcheck_before(weft_task_t *t, weft_flowcheck_t *rc);

/* After the body: a read-only flow whose bytes changed is named and the
 * task marked as misused, so that it fails whatever the body returned; a
 * write-only flow with elements that still hold the fill is said (a
 * warning: a body may fill part of a tile on purpose, the rest of which
 * nobody reads). batch_n: the
 * tasks of the batch call t ran in (0: its own body). The members of a
 * batch may read one copy, and which of them wrote it cannot be told: each
 * that read it fails (what it computed read a changing input), said so. */
void weft_flowcheck_after(weft_task_t *t, const weft_flowcheck_t *rc, int batch_n);

#endif
