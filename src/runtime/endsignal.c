/* A line of its own on a rank that the job's launcher ends. When a rank
 * calls MPI_Abort (weft does where the others cannot be told otherwise: a
 * control message owed for too long, the stall watchdog's watchdog_abort,
 * a rank out of memory inside a collective), Open MPI's mpirun ends every
 * other rank with SIGTERM, and those ranks printed nothing: a user reading
 * one rank's output could not tell why it stopped. The handler writes one
 * line and the process then ends by the signal, as it would have. The
 * other signals that end a process by default clean up alike, without a
 * line. Installed only over the default action (an application's own
 * handler is left alone), once a process, and removed with the last
 * context. */
#include "runtime/endsignal.h"

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "util/ending.h"

/* The signals whose default action ends the process and that a user or a
 * pipe sends: each left the emulated devices' zone files in /dev/shm
 * (nearly 1 GB each, apparent; tens of MB resident) until the next emu
 * device of the node opened (a stranger's Ctrl-C, `| head -1`, SIGHUP).
 * SIGTERM says a line too. */
static const int ending_signals[] = {SIGTERM, SIGINT,  SIGHUP,  SIGQUIT,
                                     SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2};
#define NSIGNALS (sizeof ending_signals / sizeof ending_signals[0])

static struct sigaction previous[NSIGNALS];
static int installed[NSIGNALS];
static int any_installed;
/* The SIGTERM line, written in one buffer while the handler reads the
 * other (its rank is known only once MPI started, after the install). */
static char lines[2][256];
static size_t line_lens[2];
static volatile sig_atomic_t line_now;

/* Async-signal-safe: one write (SIGTERM), the clean-ups of an end without
 * weft_fini (the emulated devices' files, a trace's .part), then the
 * default action, which the kernel takes once the handler returns
 * (SA_RESETHAND restored it and the signal stays blocked until then). */
static void on_end(int sig)
{
    if (sig == SIGTERM) {
        int k = line_now;
        ssize_t w = write(STDERR_FILENO, lines[k], line_lens[k]);
        (void)w;
    }
    weft_ending_run();
    raise(sig);
}

/* The line names rank: made in the buffer the handler does not read. */
static void name_rank(int rank)
{
    int k = !line_now;
    int n = snprintf(lines[k], sizeof lines[k],
                     "weft[%d] error: ended by SIGTERM: when a rank aborts the job or exits with "
                     "an error, the launcher ends the others (that rank's lines say why); else a "
                     "time limit or a kill\n",
                     rank);
    line_lens[k] = n < 0 ? 0 : (size_t)n < sizeof lines[k] ? (size_t)n : sizeof lines[k] - 1;
    line_now = k;
}

void weft_endsignal_install(int rank)
{
    name_rank(rank);
    if (any_installed) return;
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction cur;
        if (sigaction(ending_signals[i], NULL, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) continue;
        struct sigaction sa = {0};
        sa.sa_handler = on_end;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;
        if (sigaction(ending_signals[i], &sa, &previous[i]) == 0) installed[i] = 1;
    }
    any_installed = 1;
}

void weft_endsignal_remove(void)
{
    if (!any_installed) return;
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction cur;
        /* Put back only our own: the application may have set another since. */
        if (installed[i] && sigaction(ending_signals[i], NULL, &cur) == 0 &&
            cur.sa_handler == on_end)
            sigaction(ending_signals[i], &previous[i], NULL);
        installed[i] = 0;
    }
    any_installed = 0;
}
