/* A SIGBUS in emulated device memory named (emu_sigbus.h). */
#include "device/emu/emu_sigbus.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "util/ending.h"
#include "util/log.h"

/* Zones a process maps: its devices' own and those of the node's other
 * ranks that sent it tiles. Past this many, the later ones go unnamed. */
#define WATCH_MAX 256

static _Atomic uintptr_t watch_lo[WATCH_MAX], watch_hi[WATCH_MAX];
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed;
static char line[320];
static size_t line_len;

static struct sigaction previous;

/* Async-signal-safe: a look at the watched ranges, one write, then the
 * action found at install (Open MPI's, which prints a backtrace, or the
 * default). A handler is called with the signal's own details and stays
 * chained behind this one (a SIGBUS it survives, as one sent by another
 * process, leaves the next still named), unless it was installed
 * one-shot (SA_RESETHAND: the default comes back first). Without a
 * handler the default action is put back: a faulting access faults again
 * on return and ends the process by it, and a sent SIGBUS is raised
 * again. */
static void on_bus(int sig, siginfo_t *si, void *uctx)
{
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < WATCH_MAX && si->si_code > 0; i++) {
        uintptr_t lo = atomic_load(&watch_lo[i]), hi = atomic_load(&watch_hi[i]);
        if (lo && a >= lo && a < hi) {
            ssize_t w = write(STDERR_FILENO, line, line_len);
            (void)w;
            weft_ending_run(); /* the process ends: its files' memory back to the node */
            break;
        }
    }
    int handler = (previous.sa_flags & SA_SIGINFO) ||
                  (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN);
    if (handler && (previous.sa_flags & SA_RESETHAND)) {
        /* One-shot, as the kernel would have made it: the default action
         * after this call (a handler that returns on a fault would
         * otherwise be called again at each new fault, for ever). */
        struct sigaction dfl = {0};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGBUS, &dfl, NULL);
    }
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uctx);
        return;
    }
    if (handler) {
        previous.sa_handler(sig);
        return;
    }
    sigaction(SIGBUS, &previous, NULL);
    if (si->si_code <= 0) raise(sig);
}

/* Over the default action or MPI's own (chained to); an application that
 * ignores SIGBUS or handles it keeps its choice. */
static void install_locked(void)
{
    installed = 1;
    int n = snprintf(line, sizeof line,
                     "weft[%d] error: SIGBUS in emulated device memory: a page of its file in "
                     "/dev/shm could not be backed, the file system being full; free space there "
                     "or lower device_emu_memory (the process ends by the signal)\n",
                     weft_log_rank());
    line_len = n < 0 ? 0 : (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    struct sigaction sa = {0};
    sa.sa_sigaction = on_bus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;
    /* One call, so that no handler set meanwhile is lost; an ignored
     * SIGBUS stays ignored. */
    if (sigaction(SIGBUS, &sa, &previous) == 0 && !(previous.sa_flags & SA_SIGINFO) &&
        previous.sa_handler == SIG_IGN)
        sigaction(SIGBUS, &previous, NULL);
}

void weft_emu_sigbus_watch(void *base, size_t bytes)
{
    pthread_mutex_lock(&watch_lock);
    if (!installed) install_locked();
    for (int i = 0; i < WATCH_MAX; i++) {
        if (atomic_load(&watch_lo[i])) continue;
        /* The end first: a handler that sees the start sees a range. */
        atomic_store(&watch_hi[i], (uintptr_t)base + bytes);
        atomic_store(&watch_lo[i], (uintptr_t)base);
        break;
    }
    pthread_mutex_unlock(&watch_lock);
}

void weft_emu_sigbus_unwatch(void *base)
{
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < WATCH_MAX; i++)
        if (atomic_load(&watch_lo[i]) == (uintptr_t)base) {
            atomic_store(&watch_lo[i], 0);
            break;
        }
    pthread_mutex_unlock(&watch_lock);
}
