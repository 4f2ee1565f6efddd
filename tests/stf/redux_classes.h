/* The classes of the reduction tests that sum doubles (WEFT_REDUX into a
 * 1 x 1 double): redux_zero_class, the identity; redux_combine_class,
 * which folds flow 1 into flow 0; redux_add_class, which adds the double
 * of value 0 to the partial in flow 0. Header-only, for tests; a test need
 * not use every class. */
#ifndef WEFT_TESTS_STF_REDUX_CLASSES_H
#define WEFT_TESTS_STF_REDUX_CLASSES_H

#include "weft/weft.h"

static inline int redux_zero(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) = 0;
    return 0;
}

static inline int redux_combine(weft_task_t *t)
{
    *(double *)weft_task_ptr(t, 0) += *(const double *)weft_task_ptr(t, 1);
    return 0;
}

/* flow 0: the partial; value 0: what to add. */
static inline int redux_add(weft_task_t *t)
{
    double v;
    if (weft_task_value_get(t, 0, &v, sizeof v) != 0) return -1;
    *(double *)weft_task_ptr(t, 0) += v;
    return 0;
}

__attribute__((unused)) static const weft_task_class_t redux_zero_class = {
    .name = "zero", .body = {[WEFT_DEV_CPU] = redux_zero}};
__attribute__((unused)) static const weft_task_class_t redux_combine_class = {
    .name = "combine", .body = {[WEFT_DEV_CPU] = redux_combine}};
__attribute__((unused)) static const weft_task_class_t redux_add_class = {
    .name = "add", .body = {[WEFT_DEV_CPU] = redux_add}};

#endif
