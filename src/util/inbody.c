/* The mark of the task body a thread runs (inbody.h). */
#include "util/inbody.h"

#include "util/log.h"

/* initial-exec: one load a public call, not a __tls_get_addr call. */
static _Thread_local weft_inbody_t current __attribute__((tls_model("initial-exec")));

void weft_inbody_enter(weft_inbody_t *saved, const char *cls, unsigned long long seq,
                       atomic_int *misuse)
{
    *saved = current;
    current = (weft_inbody_t){.cls = cls, .seq = seq, .misuse = misuse};
}

void weft_inbody_leave(const weft_inbody_t *saved) { current = *saved; }

int weft_inbody_refuse(const char *call)
{
    if (__builtin_expect(current.cls == NULL, 1)) return 0;
    weft_error("%s called from the body of task %s #%llu: a task body may only call the "
               "weft_task_* accessors (waits, insertions, creations and host access belong to "
               "the thread that called weft_init): the call is refused and the task fails",
               call, current.cls, current.seq);
    if (current.misuse) atomic_store(current.misuse, 1);
    return 1;
}
