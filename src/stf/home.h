/* Where a task belongs: the body its class has for a device, and the home
 * device of its AFFINITY data (the one rule that device selection and the
 * choice of where a received tile lands both follow). */
#ifndef WEFT_STF_HOME_H
#define WEFT_STF_HOME_H

#include "context/context.h"
#include "sched/task.h"

/* The device type of device index `device` (0: the host). */
weft_device_type_t weft_home_device_type(const weft_context_t *ctx, int device);

/* The body t's class has for `device`, NULL when none (an emulated
 * accelerator runs CPU bodies as its kernels). */
weft_body_fn weft_home_body(const weft_context_t *ctx, const weft_task_t *t, int device);

/* t's device hint (WEFT_DEVICE_HINT) when t has a body there, else the
 * home device of t's AFFINITY data when the data has one (0: mapped to
 * the host on purpose) and t a body there; -1 otherwise. */
int weft_home_device(const weft_context_t *ctx, const weft_task_t *t);

#endif
