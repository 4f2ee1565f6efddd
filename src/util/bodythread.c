/* The stack of the threads that run task bodies (bodythread.h). */
#include "util/bodythread.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/resource.h>

#include "util/log.h"

#define UNLIMITED_STACK ((size_t)64 << 20)

size_t weft_body_stack_bytes(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return UNLIMITED_STACK;
    size_t bytes = (size_t)rl.rlim_cur;
    return bytes < (size_t)PTHREAD_STACK_MIN ? (size_t)PTHREAD_STACK_MIN : bytes;
}

int weft_body_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    size_t bytes = weft_body_stack_bytes();
    int rc = pthread_attr_init(&attr);
    if (rc != 0) return rc;
    rc = pthread_attr_setstacksize(&attr, bytes);
    if (rc == 0) rc = pthread_create(thread, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    /* No room to reserve that much (an address-space limit, strict
     * overcommit): the default stack, said, rather than no thread. When
     * that fails too the cause was no stack (EAGAIN is also the limit on a
     * user's threads, ulimit -u): said as such, where the caller's
     * failure read "out of host memory" after a warning of the stack. */
    if (rc == EAGAIN || rc == ENOMEM) {
        int again = pthread_create(thread, NULL, fn, arg);
        if (again == 0)
            weft_warn("a thread that runs task bodies could not reserve a stack of %zu MiB (%s): "
                      "it has the system's default",
                      bytes >> 20, strerror(rc));
        rc = again;
    }
    if (rc != 0) weft_error("could not start a thread: %s", weft_thread_failure_words(rc));
    return rc;
}

const char *weft_thread_failure_words(int err)
{
    return err == EAGAIN ? "Resource temporarily unavailable (the limit on the user's threads, "
                           "ulimit -u, or on memory)"
                         : strerror(err);
}
