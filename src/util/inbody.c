/* The mark of the task body a thread runs (inbody.h). */
#include "util/inbody.h"

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

/* Live contexts this thread made, and those of the process: a thread of
 * the application is told apart from the main thread only while a context
 * lives (the calls with an ended context's handles are the handle
 * check's). A thread that made one context passes for the main thread of
 * another made elsewhere: one compare a call, no per-context lookup. */
static _Thread_local int contexts_made __attribute__((tls_model("initial-exec")));
static atomic_int contexts_live;

void weft_inbody_main_begin(void)
{
    contexts_made++;
    atomic_fetch_add(&contexts_live, 1);
}

void weft_inbody_main_end(void)
{
    contexts_made--;
    atomic_fetch_sub(&contexts_live, 1);
}

static int refuse_other_thread(const char *call)
{
    if (__builtin_expect(contexts_made > 0, 1) || atomic_load(&contexts_live) == 0) return 0;
    weft_error("%s called from a thread that did not call weft_init: waits, insertions, "
               "creations, releases and host access belong to the thread that called "
               "weft_init (weft.h), whose sequences they change without locks; the call is "
               "refused (make it on that thread)",
               call);
    return 1;
}

int weft_inbody_refuse(const char *call)
{
    if (__builtin_expect(current.cls == NULL, 1)) return refuse_other_thread(call);
    weft_error("%s called from the body of task %s: a task body may only call the "
               "weft_task_* accessors (waits, insertions, creations and host access belong to "
               "the thread that called weft_init): the call is refused and the task fails",
               call, weft_tname(current.cls, current.seq, current.idx, current.nidx).text);
    if (current.misuse) atomic_store(current.misuse, 1);
    return 1;
}
