/* The refusal of a call made on a context from a thread that did not make
 * it (context.h's thread check). */
#include "context/context.h"

#include "util/log.h"

int weft_context_refuse_thread(const char *call)
{
    if (weft_inbody_contexts_made() == 0) {
        weft_error("%s called from a thread that did not call weft_init: waits, insertions, "
                   "creations, releases, host access and weft_fini belong to the thread that "
                   "called weft_init (weft.h), whose sequences they change without locks; the "
                   "call is refused (make it on that thread)",
                   call);
        return 0;
    }
    weft_error("%s called on a context that another thread made (the weft_init of this thread "
               "made a different one): a context's waits, insertions, creations, releases, host "
               "access and weft_fini belong to the thread that called its weft_init (weft.h), "
               "whose sequences they change without locks; the call is refused (make it on that "
               "thread, with that thread's handles)",
               call);
    return 0;
}
