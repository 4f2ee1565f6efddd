/* Threads that run task bodies (workers, device managers, emulated
 * devices' threads) get a stack as large as the main thread may grow to:
 * the stack limit (RLIMIT_STACK), 64 MiB when it is unlimited. glibc gives
 * a thread the limit when it is finite but 2 MiB when it is unlimited, as
 * it often is on HPC nodes: a body with a few MiB of arrays on its stack
 * then died of SIGSEGV without a word on a worker, and passed on the main
 * thread (which runs bodies when the insertion window is full). */
#ifndef WEFT_UTIL_BODYTHREAD_H
#define WEFT_UTIL_BODYTHREAD_H

#include <pthread.h>
#include <stddef.h>

/* The stack a body's thread gets, bytes. */
size_t weft_body_stack_bytes(void);

/* pthread_create with that stack; its status. */
int weft_body_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

/* pthread_create's error err in words, the thread limit named for EAGAIN. */
const char *weft_thread_failure_words(int err);

#endif
