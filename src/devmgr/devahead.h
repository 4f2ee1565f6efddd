/* Prefetch ahead (issue 18 item 2): a device manager stages in the inputs
 * of tasks homed on its device before they are ready, soonest use first,
 * while earlier tasks run. Internal to devmgr/. */
#ifndef WEFT_DEVMGR_DEVAHEAD_H
#define WEFT_DEVMGR_DEVAHEAD_H

#include "devmgr/devmgr.h"

/* Lists m's upcoming tasks from insertion on (ctx->upcoming) and lets its
 * manager hold up to `max` tiles ahead (arriving, or in and not used yet); max 0, device_evict=lru
 * (its victims do not know the future), device_prefetch=0 (no prefetch
 * stream) or device_prefetch_share=100 (no room) leaves it off, said
 * when max was given. Before the manager
 * thread starts. WEFT_ERR_NOMEM. */
int weft_devahead_start(weft_devmgr_t *m, int max) __attribute__((warn_unused_result));
/* After the manager thread stopped (nothing in flight): the listed tasks'
 * references dropped. */
void weft_devahead_stop(weft_devmgr_t *m);

/* One pass of the manager: the copies ahead that landed are marked in,
 * then, with `fetch`, when something changed since the last look (a task
 * listed or ended, a copy ahead landed, used or freed) and fewer than max
 * tiles are held ahead, more are started. Returns how many ended or
 * started (0: nothing to do). Manager thread. */
int weft_devahead_pass(weft_devmgr_t *m, int fetch);
/* Copies ahead in flight (the manager polls while there are). Manager
 * thread. */
int weft_devahead_inflight(const weft_devmgr_t *m);

#endif
