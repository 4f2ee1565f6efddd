/* Parsing an insertion's arguments into the walked task (insert_args.c). */
#ifndef WEFT_STF_INSERT_ARGS_H
#define WEFT_STF_INSERT_ARGS_H

#include <stdarg.h>

#include "sched/task.h"

/* The array form: args[0..nargs) into t; tags[i] gets the tag of t's flow
 * i. released_ok: a released data is taken (the tasks weft inserts itself
 * at a wait, which hold the data until then). The first misuse is named
 * and returns WEFT_ERR_INVALID. */
int weft_insert__parse_args(weft_task_t *t, int *tags, const weft_arg_t *args, int nargs,
                            int released_ok);
/* The variadic form, up to the 0 that ends it, parsed as the array form. */
int weft_insert__parse_va(weft_task_t *t, int *tags, va_list ap);

#endif
