/* The comm engine's configuration from the context (parameters, devices,
 * copy callbacks). */
#ifndef WEFT_RUNTIME_COMM_GLUE_H
#define WEFT_RUNTIME_COMM_GLUE_H

#include "comm/comm.h"
#include "context/context.h"

int weft_comm_glue_config(weft_context_t *ctx, weft_comm_config_t *cfg)
    __attribute__((warn_unused_result));

#endif
