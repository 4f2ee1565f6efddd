/* The mark of the task body a thread runs (inbody.h). */
#include "util/inbody.h"

#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "util/tname.h"

/* initial-exec: one load a public call, not a __tls_get_addr call. */
static _Thread_local weft_inbody_t current __attribute__((tls_model("initial-exec")));

void weft_inbody_enter(weft_inbody_t *saved, const weft_inbody_t *now)
{
    *saved = current;
    current = *now;
}

void weft_inbody_leave(const weft_inbody_t *saved) { current = *saved; }

void weft_inbody_enter_callback(weft_inbody_t *saved, atomic_int *misuse, const char *fn, int keyed,
                                unsigned long long key, const char *fails)
{
    weft_inbody_enter(
        saved,
        &(weft_inbody_t){.cls = fn, .seq = key, .misuse = misuse, .fails = fails, .keyed = keyed});
}

void weft_inbody_enter_named_callback(weft_inbody_t *saved, atomic_int *misuse, const char *fn,
                                      const char *of, const char *fails)
{
    weft_inbody_enter(saved,
                      &(weft_inbody_t){.cls = fn, .misuse = misuse, .fails = fails, .of = of});
}

static _Thread_local const char *call_now;

int weft_inbody_call_refuse(const char *call, const char *inside_ok)
{
    if (weft_inbody_refuse(call)) return 1;
    if (!call_now || (inside_ok && strcmp(call_now, inside_ok) == 0)) return 0;
    weft_error("%s called while this thread is inside %s (from a signal handler?): the call is "
               "refused",
               call, call_now);
    return 1;
}

const char *weft_inbody_call_enter(const char *call)
{
    const char *was = call_now;
    if (!was) call_now = call;
    return was;
}

void weft_inbody_call_leave(const char *was) { call_now = was; }

/* The contexts this thread made and has not ended: only its wording of a
 * refusal depends on it (context.h checks the thread against the context
 * it is given). */
static _Thread_local int contexts_made __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned long thread_number __attribute__((tls_model("initial-exec")));
static atomic_ulong threads_numbered;

void weft_inbody_main_begin(void) { contexts_made++; }

void weft_inbody_main_end(void) { contexts_made--; }

int weft_inbody_contexts_made(void) { return contexts_made; }

unsigned long weft_inbody_thread(void)
{
    if (__builtin_expect(thread_number == 0, 0))
        thread_number = atomic_fetch_add(&threads_numbered, 1) + 1;
    return thread_number;
}

int weft_inbody_refuse(const char *call)
{
    if (__builtin_expect(current.cls == NULL, 1)) return 0;
    if (current.fails) {
        char key[96] = "";
        if (current.keyed)
            snprintf(key, sizeof key, " %llu", current.seq);
        else if (current.of)
            snprintf(key, sizeof key, " %s", current.of);
        weft_error("%s called from %s%s: a function weft calls back may only compute (waits, "
                   "insertions, creations and host access belong to the thread that called "
                   "weft_init): the call is refused and %s fails",
                   call, current.cls, key, current.fails);
    } else {
        weft_error("%s called from the body of task %s: a task body may only call the "
                   "weft_task_* accessors (waits, insertions, creations and host access belong to "
                   "the thread that called weft_init): the call is refused and the task fails",
                   call, weft_tname(current.cls, current.seq, current.idx, current.nidx).text);
    }
    if (current.misuse) atomic_store(current.misuse, 1);
    return 1;
}

int weft_inbody_in_task(void) { return current.cls != NULL && current.fails == NULL; }

int weft_inbody_fail_task(void)
{
    if (!weft_inbody_in_task()) return 0;
    if (current.misuse) atomic_store(current.misuse, 1);
    return 1;
}
