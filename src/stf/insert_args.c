/* The arguments of an insertion, array or variadic, parsed alike one by
 * one into the walked task: data flows with their modes, values copied at
 * insertion, placement options; every misuse named, alike on every rank. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sched/task.h"
#include "stf/insert_args.h"
#include "stf/taskpool.h"
#include "util/handle.h"
#include "util/log.h"

/* pos counts the task's arguments after the class from 1: a (mode, data)
 * pair, a (WEFT_VALUE, ptr, bytes) triple or a (WEFT_PRIORITY, int) pair
 * each make one. The handle is checked before anything is read from it:
 * a matrix, a released data or a stray pointer is refused, except a
 * released data in a task weft inserts itself (released_ok: a reduction's
 * combines at the wait, for tasks inserted before the release, which hold
 * the data until then). The data is retained only if the task is kept
 * (weft_insert_keep). */
static int add_flow(weft_task_t *t, int tag, weft_data_t *d, int pos, int released_ok)
{
    const char *name = t->cls->name;
    if (!d || weft_address_is_small(d) ||
        (d->tag != (uint32_t)WEFT_HANDLE_DATA &&
         !(released_ok && d->tag == weft_handle_released(WEFT_HANDLE_DATA)))) {
        char call[96]; /* formatted only for the error: every task passes here */
        snprintf(call, sizeof call, "insert %s", name);
        (void)weft_handle_check(d, WEFT_HANDLE_DATA, call, pos);
        return WEFT_ERR_INVALID;
    }
    if (t->nflows == WEFT_MAX_FLOWS) {
        weft_error("insert %s: argument %d is its data number %d: a task takes %d at most "
                   "(WEFT_MAX_FLOWS; docs/GUIDE.md says how to sum more tiles)",
                   name, pos, WEFT_MAX_FLOWS + 1, WEFT_MAX_FLOWS);
        return WEFT_ERR_INVALID;
    }
    weft_flow_t *f = &t->flow[t->nflows++];
    f->data = d;
    f->mode = tag & (WEFT_RW | WEFT_REDUX);
    f->copy = NULL;
    f->out_version = 0;
    return WEFT_SUCCESS;
}

static int add_value(weft_task_t *t, const void *ptr, size_t bytes, int pos)
{
    const char *name = t->cls->name;
    if (!ptr && bytes) {
        weft_error("insert %s: value argument %d: a NULL pointer for %zu bytes: pass the address "
                   "of the value (copied at insertion)",
                   name, pos, bytes);
        return WEFT_ERR_INVALID;
    }
    if (bytes && weft_address_is_small(ptr)) {
        weft_error("insert %s: value argument %d: %lu is no address (the value itself where its "
                   "address belongs?): pass WEFT_VALUE, &v, sizeof v",
                   name, pos, (unsigned long)(uintptr_t)ptr);
        return WEFT_ERR_INVALID;
    }
    if (t->nvalues == WEFT_MAX_VALUES || bytes > WEFT_MAX_VALUE_BYTES) {
        weft_error("insert %s: value argument %d (%zu bytes, value %d of the task): at most %d "
                   "values of at most %d bytes",
                   name, pos, bytes, t->nvalues + 1, WEFT_MAX_VALUES, WEFT_MAX_VALUE_BYTES);
        return WEFT_ERR_INVALID;
    }
    int off = t->nvalues ? t->value_off[t->nvalues - 1] + t->value_len[t->nvalues - 1] : 0;
    if (bytes) memcpy(t->values + off, ptr, bytes); /* (NULL, 0) is a valid empty value */
    t->value_off[t->nvalues] = (uint16_t)off;
    t->value_len[t->nvalues] = (uint16_t)bytes;
    t->nvalues++;
    return WEFT_SUCCESS;
}

/* A (tag, int) option: priority, rank or device hint, checked alike on
 * every rank so that every rank refuses the same call. */
static int add_option(weft_task_t *t, int tag, int v, int pos)
{
    weft_context_t *ctx = t->tp->ctx;
    if (tag == WEFT_PRIORITY) {
        t->priority = v;
    } else if (tag == WEFT_ON_RANK && v >= 0 && v < ctx->nranks) {
        t->on_rank = v;
    } else if (tag == WEFT_DEVICE_HINT && v >= 0 && v <= ctx->ndevices) {
        t->device_hint = v;
    } else {
        /* Every rank checks a hint against its own devices, whichever
         * rank runs the task: with different device counts a hint valid
         * where the task runs is refused where there are fewer (alike
         * refusals keep the ranks in step; weft.h). */
        weft_error("insert %s: argument %d: %s %d is not in [0, %d]%s", t->cls->name, pos,
                   tag == WEFT_ON_RANK ? "WEFT_ON_RANK rank" : "WEFT_DEVICE_HINT device", v,
                   tag == WEFT_ON_RANK ? ctx->nranks - 1 : ctx->ndevices,
                   tag == WEFT_ON_RANK ? ""
                                       : " (this rank's devices: every rank checks a hint "
                                         "against its own, whichever rank runs the task)");
        return WEFT_ERR_INVALID;
    }
    return WEFT_SUCCESS;
}

static int is_mode(int tag)
{
    return ((tag & WEFT_RW) && !(tag & ~(WEFT_RW | WEFT_AFFINITY))) ||
           (tag & ~WEFT_AFFINITY) == WEFT_REDUX;
}

static int is_option(int tag)
{
    return tag == WEFT_PRIORITY || tag == WEFT_ON_RANK || tag == WEFT_DEVICE_HINT;
}

/* A placement given a second time (WEFT_ON_RANK, WEFT_DEVICE_HINT,
 * WEFT_AFFINITY): one of the two was dropped silently (the last rank or
 * hint won, the first affinity), moving the task where the user did not
 * say, so the call is refused, alike on every rank. (A second
 * WEFT_PRIORITY replaces the first, as documented.) seen[k]: the argument
 * that gave placement k first (0: none yet). */
enum { SEEN_ON_RANK, SEEN_HINT, SEEN_AFFINITY, SEEN_KINDS };

static int check_once(const weft_task_t *t, int *seen, int tag, int pos)
{
    int k = tag == WEFT_ON_RANK       ? SEEN_ON_RANK
            : tag == WEFT_DEVICE_HINT ? SEEN_HINT
            : (tag & WEFT_AFFINITY)   ? SEEN_AFFINITY
                                      : -1;
    if (k < 0) return WEFT_SUCCESS;
    static const char *const names[SEEN_KINDS] = {"WEFT_ON_RANK", "WEFT_DEVICE_HINT",
                                                  "WEFT_AFFINITY"};
    if (!seen[k]) {
        seen[k] = pos;
        return WEFT_SUCCESS;
    }
    weft_error("insert %s: arguments %d and %d both give %s: a task takes it once (%s)",
               t->cls->name, seen[k], pos, names[k],
               k == SEEN_AFFINITY ? "it runs where one data lives: mark that one"
                                  : "one of the two would be ignored");
    return WEFT_ERR_INVALID;
}

/* What is wrong with a tag made of known bits that is no mode; NULL when
 * it holds other bits. */
static const char *tag_misuse(int tag)
{
    if (tag & ~(WEFT_RW | WEFT_REDUX | WEFT_AFFINITY)) return NULL;
    if ((tag & WEFT_REDUX) && (tag & WEFT_RW))
        return "WEFT_REDUX is a mode of its own: it cannot be OR-ed with WEFT_R, WEFT_W or "
               "WEFT_RW";
    if (!(tag & (WEFT_RW | WEFT_REDUX)) && (tag & WEFT_AFFINITY))
        return "WEFT_AFFINITY marks a data argument: OR it with its mode (WEFT_R, WEFT_W, "
               "WEFT_RW or WEFT_REDUX)";
    return NULL;
}

/* One argument into the walked task t; pos counts them from 1;
 * released_ok: add_flow's; seen: check_once's. */
static int parse_arg(weft_task_t *t, int *tags, int *seen, const weft_arg_t *a, int pos,
                     int released_ok)
{
    /* weft_arg_int(WEFT_VALUE, n) read as an empty value, n lost: an
     * array argument's int belongs to the (tag, int) options alone. */
    if (a->tag == WEFT_VALUE && a->i != 0 && !a->ptr && !a->bytes) {
        weft_error("insert %s: argument %d is WEFT_VALUE with the int %d and no bytes: a value "
                   "is given as weft_arg_value(&v, sizeof v); weft_arg_int takes WEFT_PRIORITY, "
                   "WEFT_ON_RANK or WEFT_DEVICE_HINT",
                   t->cls->name, pos, a->i);
        return WEFT_ERR_INVALID;
    }
    if (a->tag == WEFT_VALUE) return add_value(t, a->ptr, a->bytes, pos);
    if ((is_option(a->tag) || is_mode(a->tag)) && check_once(t, seen, a->tag, pos) != 0)
        return WEFT_ERR_INVALID;
    if (is_option(a->tag)) return add_option(t, a->tag, a->i, pos);
    if (is_mode(a->tag)) {
        if (t->nflows < WEFT_MAX_FLOWS) tags[t->nflows] = a->tag;
        return add_flow(t, a->tag, a->data, pos, released_ok);
    }
    const char *misuse = tag_misuse(a->tag);
    if (misuse) {
        weft_error("insert %s: argument %d has tag 0x%x: %s", t->cls->name, pos, a->tag, misuse);
        return WEFT_ERR_INVALID;
    }
    /* Garbage here is most often what followed a list whose closing 0
     * was left out (a newcomer read the hex and looked for a bad flag),
     * or a data handle put before its mode, read as a tag (its address's
     * low bits, so the hex differs from rank to rank). */
    weft_error("insert %s: argument %d has unknown tag 0x%x: a data comes after its mode "
               "(WEFT_RW, d), a value after WEFT_VALUE, an int after WEFT_PRIORITY, WEFT_ON_RANK "
               "or WEFT_DEVICE_HINT, and weft_insert_task's list ends with 0: was a data given "
               "before its mode, or the closing 0 left out?",
               t->cls->name, pos, a->tag);
    return WEFT_ERR_INVALID;
}

int weft_insert__parse_args(weft_task_t *t, int *tags, const weft_arg_t *args, int nargs,
                            int released_ok)
{
    int seen[SEEN_KINDS] = {0};
    for (int k = 0; k < nargs; k++) {
        int rc = parse_arg(t, tags, seen, &args[k], k + 1, released_ok);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

#define INSERT_MAX_ARGS 64

/* The variadic arguments, each parsed as the array form parses it as soon
 * as it is read (every rank walks every task: no array to fill and read
 * again). An unknown tag ends the list (what follows it cannot be read):
 * parse_arg names it. */
int weft_insert__parse_va(weft_task_t *t, int *tags, va_list ap)
{
    /* Up to INSERT_MAX_ARGS arguments, then the 0 that ends them. */
    int seen[SEEN_KINDS] = {0};
    for (int n = 0; n <= INSERT_MAX_ARGS; n++) {
        int tag = va_arg(ap, int);
        if (tag == 0) return WEFT_SUCCESS;
        if (n == INSERT_MAX_ARGS) break;
        weft_arg_t a = weft_arg_int(tag, 0);
        if (tag == WEFT_VALUE) {
            a.ptr = va_arg(ap, const void *);
            a.bytes = va_arg(ap, size_t);
        } else if (is_option(tag)) {
            a.i = va_arg(ap, int);
        } else if (is_mode(tag)) {
            a.data = va_arg(ap, weft_data_t *);
        }
        int rc = parse_arg(t, tags, seen, &a, n + 1, 0);
        if (rc != WEFT_SUCCESS) return rc;
    }
    weft_error("insert %s: more than %d arguments before the 0 that ends them (at most %d data "
               "and %d values)",
               t->cls->name, INSERT_MAX_ARGS, WEFT_MAX_FLOWS, WEFT_MAX_VALUES);
    return WEFT_ERR_INVALID;
}
