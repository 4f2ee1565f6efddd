/* check_reads: a debug aid that catches a body writing through a flow it
 * was given to read (WEFT_R). Nothing else would: the write lands in the
 * copy other readers share, or in the user's memory, and a copy sent to
 * another rank silently differs from the one kept here. Each read-only
 * flow whose memory the host can read (a host copy or an emu device's) is
 * hashed before the body and again after it; CUDA and HIP bodies are not
 * checked (their copies are in device memory, their kernels still in
 * flight when the body returns). */
#ifndef WEFT_STF_READCHECK_H
#define WEFT_STF_READCHECK_H

#include <stdint.h>

#include "sched/task.h"

typedef struct weft_readcheck {
    int on;                        /* whether the parameter asked for it */
    uint64_t hash[WEFT_MAX_FLOWS]; /* each checked flow's bytes before the body */
    unsigned char checked[WEFT_MAX_FLOWS];
} weft_readcheck_t;

/* d's bytes in memory at ptr, ld elements apart (column by column): also
 * the host's read acquires' check (api/acquire.c). */
uint64_t weft_readcheck_hash(const weft_data_t *d, const void *ptr, int64_t ld);

/* Hashes t's read-only flows when check_reads is set. */
void weft_readcheck_before(weft_task_t *t, weft_readcheck_t *rc);

/* After the body: a flow whose bytes changed is named and the task marked
 * as misused, so that it fails whatever the body returned. batch_n: the
 * tasks of the batch call t ran in (0: its own body). The members of a
 * batch may read one copy, and which of them wrote it cannot be told: each
 * that read it fails (what it computed read a changing input), said so. */
void weft_readcheck_after(weft_task_t *t, const weft_readcheck_t *rc, int batch_n);

#endif
