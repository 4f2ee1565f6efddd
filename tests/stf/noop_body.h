/* A task body that does nothing and succeeds: for the tests whose task
 * classes only need to be inserted and run (the sequence check, refused
 * insertions). Header-only, for tests. */
#ifndef WEFT_TESTS_STF_NOOP_BODY_H
#define WEFT_TESTS_STF_NOOP_BODY_H

#include "weft/weft.h"

static inline int noop_body(weft_task_t *t)
{
    (void)t;
    return 0;
}

#endif
