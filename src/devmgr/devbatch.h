/* Batches of small tasks on a device (devbatch.c): what the manager's
 * pass (devexec.c) asks of them. Internal to devmgr/. */
#ifndef WEFT_DEVMGR_DEVBATCH_H
#define WEFT_DEVMGR_DEVBATCH_H

#include "devmgr/devlaunch.h"

/* The batch body t would go out with on m's device, or NULL. */
weft_batch_fn weft_devbatch_body(const weft_devmgr_t *m, const weft_task_t *t);
/* Launches the records held READY, in batches; returns the tasks launched. */
int weft_devbatch_launch(weft_devmgr_t *m);

#endif
