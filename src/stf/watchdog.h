/* Waiting for a taskpool: progress line and stall watchdog. */
#ifndef WEFT_STF_WATCHDOG_H
#define WEFT_STF_WATCHDOG_H

#include "stf/taskpool.h"

/* Blocks until tp has no pending task (main thread). */
void weft_watchdog_wait(weft_taskpool_t *tp);

#endif
