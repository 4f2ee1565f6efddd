/* The SIGBUS handler of emulated device memory runs in front of the one
 * the application had, passes it the signal's own details and stays in
 * front of it: the application survives two SIGBUS sent by kill (each seen
 * with the sender's SI_USER, not re-raised as the process's own), and a
 * fault in a watched zone afterwards is still named before the
 * application's handler ends the process. Before, the first SIGBUS took
 * weft's handler out and re-raised it, so the sender was lost and the
 * later fault went unnamed. A handler installed one-shot (SA_RESETHAND)
 * that returns from the fault is called once, then the default action ends
 * the process (called directly, it was called again at every fault, for
 * ever). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device/emu/emu_sigbus.h"

#include "../check.h"

static volatile sig_atomic_t sent_seen, sent_wrong;

static void app_handler(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    if (si->si_code == SI_USER && si->si_pid == getpid()) {
        sent_seen++;
        return;
    }
    if (si->si_code <= 0) {
        sent_wrong++;
        return;
    }
    static const char said[] = "app handler saw the fault\n";
    ssize_t w = write(STDERR_FILENO, said, sizeof said - 1);
    (void)w;
    signal(sig, SIG_DFL); /* the access faults again on return and ends the process */
}

/* In a child: the application's SIGBUS handler sa (its mask emptied
 * here), then a watched zone whose file is cut under its mapping. */
static char *cut_zone(struct sigaction *sa)
{
    sigemptyset(&sa->sa_mask);
    if (sigaction(SIGBUS, sa, NULL) != 0) _exit(2);
    FILE *f = tmpfile();
    if (!f || ftruncate(fileno(f), 1 << 16) != 0) _exit(2);
    char *zone = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
    if (zone == MAP_FAILED || ftruncate(fileno(f), 0) != 0) _exit(2);
    weft_emu_sigbus_watch(zone, 1 << 16);
    return zone;
}

/* The child: the application's handler, a watched zone whose file is cut
 * under its mapping, two sent SIGBUS survived, then the faulting touch. */
static void child(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = app_handler;
    sa.sa_flags = SA_SIGINFO;
    char *zone = cut_zone(&sa);
    kill(getpid(), SIGBUS);
    kill(getpid(), SIGBUS);
    if (sent_seen != 2 || sent_wrong != 0) {
        fprintf(stderr, "sent SIGBUS seen %d times as sent, %d otherwise\n", (int)sent_seen,
                (int)sent_wrong);
        _exit(3);
    }
    zone[4096] = 1;
    _exit(4); /* not reached */
}

static volatile sig_atomic_t oneshot_calls;

static void oneshot_handler(int sig)
{
    (void)sig;
    oneshot_calls++;
    static const char said[] = "one-shot handler called\n";
    ssize_t w = write(STDERR_FILENO, said, sizeof said - 1);
    (void)w;
    if (oneshot_calls > 3) _exit(5); /* the loop: a test that ends */
}

/* The second child: a one-shot handler that returns from the fault. */
static void child_oneshot(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = oneshot_handler;
    sa.sa_flags = SA_RESETHAND;
    char *zone = cut_zone(&sa);
    zone[4096] = 1;
    _exit(4);
}

/* Runs fn in a child; its stderr into out, its status returned. */
static int run_child(void (*fn)(void), char *out, size_t size)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        fn();
    }
    close(fds[1]);
    size_t n = 0;
    for (ssize_t r; n < size - 1 && (r = read(fds[0], out + n, size - 1 - n)) > 0;) n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

static int count_of(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, word)) != NULL; p += strlen(word)) n++;
    return n;
}

int main(void)
{
    char out[4096];
    int status = run_child(child, out, sizeof out);
    fprintf(stderr, "child's stderr:\n%s", out);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
    CHECK(strstr(out, "SIGBUS in emulated device memory") != NULL);
    CHECK(strstr(out, "app handler saw the fault") != NULL);
    CHECK(strstr(out, "SIGBUS in emulated device memory") < strstr(out, "app handler saw"));
    char once[4096];
    status = run_child(child_oneshot, once, sizeof once);
    fprintf(stderr, "one-shot child's stderr:\n%s", once);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
    CHECK(count_of(once, "one-shot handler called") == 1);
    CHECK(count_of(once, "SIGBUS in emulated device memory") >= 1);
    return check_report("emu_sigbus_chain");
}
