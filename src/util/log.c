/* The logging door: levels, the rank (and device) in every line. */
#include "util/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -1 until MPI gives the rank (weft_log_set_rank): a line before it, such
 * as MPI's start failing, takes the rank from the launcher (launcher_rank). */
static atomic_int log_rank = -1;
/* Atomic: a context's weft_init or debug_verbose sets it while other
 * contexts' threads log. */
static atomic_int log_level = WEFT_LOG_WARN;

/* The text of the newest error line this thread logged, so that a failure
 * can be told to the other ranks (weft_init's agreement sends the failing
 * rank's own words). A thread's own: one kept for the process gave a rank
 * another context's error, logged meanwhile by that context's thread, as
 * the words of its own failure (a stranger's two contexts). The lines the
 * readers want are their own thread's: a call's refusal, an agreement's
 * failure, weft_fini's. On the heap, the thread's pointer to it in TLS:
 * the line in TLS made libweft's static TLS block 1.1 KB, which a process
 * that loads it late (a Python extension) takes from glibc's small reserve
 * ("cannot allocate memory in static TLS block"). */
static _Thread_local char *last_error __attribute__((tls_model("initial-exec")));
static pthread_key_t last_error_key;
static pthread_once_t last_error_once = PTHREAD_ONCE_INIT;
static int last_error_key_ok;

/* At the thread's exit: its line goes, and a line logged after (another
 * key's destructor) makes a new one. */
static void last_error_free(void *p)
{
    last_error = NULL;
    free(p);
}

static void last_error_key_init(void)
{
    last_error_key_ok = pthread_key_create(&last_error_key, last_error_free) == 0;
}

/* The thread's line, made on first use (NULL without memory: the line is
 * then not kept). */
static char *last_error_line(void)
{
    if (last_error) return last_error;
    pthread_once(&last_error_once, last_error_key_init);
    char *b = last_error_key_ok ? calloc(1, WEFT_LOG_LINE) : NULL;
    if (!b) return NULL;
    if (pthread_setspecific(last_error_key, b) != 0) {
        free(b);
        return NULL;
    }
    last_error = b;
    return b;
}

void weft_log_thread_ready(void) { (void)last_error_line(); }

/* The rank the launcher gave this process in its environment (Open MPI,
 * PMIx, PMI-1/2 launchers, Slurm, MVAPICH), 0 under none: a process
 * started alone is rank 0. Every rank's line read "weft[0]" before MPI
 * had started, whatever its rank. */
static int launcher_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        int rank = 0;
        for (; *v >= '0' && *v <= '9' && rank < 100000000; v++) rank = rank * 10 + (*v - '0');
        if (*v == '\0') return rank;
    }
    return 0;
}

void weft_log_set_rank(int rank) { atomic_store_explicit(&log_rank, rank, memory_order_relaxed); }

int weft_log_rank(void)
{
    int rank = atomic_load_explicit(&log_rank, memory_order_relaxed);
    return rank >= 0 ? rank : launcher_rank();
}
void weft_log_set_level(int level)
{
    atomic_store_explicit(&log_level, level, memory_order_relaxed);
}
int weft_log_level(void) { return atomic_load_explicit(&log_level, memory_order_relaxed); }

void weft_log_last_error(char *buf, size_t n)
{
    if (!buf || n == 0) return;
    snprintf(buf, n, "%s", last_error ? last_error : "");
}

void weft_log_clear_last_error(void)
{
    if (last_error) last_error[0] = '\0';
}

/* One line "weft[rank.device] label: message" on out. On stderr it leaves
 * by one write(2), which a pipe keeps whole up to PIPE_BUF bytes: glibc
 * 2.37 and later print to an unbuffered stream in 128-byte pieces, and
 * the pieces of two ranks' lines interleaved in mpiexec's output
 * ("...weft_taskpool_frweft[1] error: ..."), as those of two threads of a
 * rank could. stdout is the application's buffered stream: its order
 * with the application's own lines is kept by printing through it. */
static void emit(FILE *out, int device, const char *label, const char *line)
{
    char buf[WEFT_LOG_LINE + 64];
    int rank = weft_log_rank();
    int n = device >= 0
                ? snprintf(buf, sizeof buf, "weft[%d.%d] %s: %s\n", rank, device, label, line)
                : snprintf(buf, sizeof buf, "weft[%d] %s: %s\n", rank, label, line);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    buf[len - 1] = '\n';
    if (out != stderr) {
        fputs(buf, out);
        return;
    }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fileno(out), buf + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        done += (size_t)w;
    }
}

/* The cause the calling thread's error lines go to (log.h), NULL: none.
 * initial-exec: a line that is no error pays one load, not a call. */
static _Thread_local weft_log_cause_t *cause_now __attribute__((tls_model("initial-exec")));

void weft_log_cause_reset(weft_log_cause_t *c) { atomic_init(&c->state, 0); }

weft_log_cause_t *weft_log_cause_enter(weft_log_cause_t *c)
{
    weft_log_cause_t *saved = cause_now;
    cause_now = c;
    return saved;
}

void weft_log_cause_leave(weft_log_cause_t *saved) { cause_now = saved; }

const char *weft_log_cause_text(const weft_log_cause_t *c)
{
    return atomic_load_explicit(&c->state, memory_order_acquire) == 2 ? c->text : NULL;
}

/* Where a line too long for a cause is cut: before its last "; " that
 * fits, past the first quarter (the clauses after one explain, as "it is broken for the rest of
 * the run: ..." after the device that failed and why), else after its
 * last whole word that leaves room for "..." (a cut word would read as
 * another one). *dots: whether "..." follows. */
static size_t cause_cut(const char *line, size_t size, int *dots)
{
    size_t room = size - sizeof "...", cut = room;
    *dots = 0;
    for (size_t i = size - 1; i > size / 4; i--) /* not so early that little is left */
        if (line[i - 1] == ';' && line[i] == ' ') return i - 1;
    *dots = 1;
    while (cut > 0 && line[cut] != ' ') cut--;
    while (cut > 0 && strchr(" ,;:", line[cut - 1])) cut--;
    return cut > 0 ? cut : room;
}

/* The parenthesis a line of n characters ends with, where weft names what
 * to change ("(raise device_memory_limit ...)"), when it takes at most
 * half of size: a cut line keeps it, which the other ranks' lines would
 * lose with the end of the line. NULL for none. */
static const char *remedy_tail(const char *line, size_t n, size_t size)
{
    if (n < 2 || line[n - 1] != ')') return NULL;
    int depth = 0;
    for (size_t i = n; i-- > 1;) {
        depth += line[i] == ')';
        if (line[i] == '(' && --depth == 0) return n - i <= size / 2 ? line + i : NULL;
    }
    return NULL;
}

/* Keeps line as c's text unless c has one, whole or cut (cause_cut) with
 * its closing parenthesis kept (remedy_tail). */
static void cause_take(weft_log_cause_t *c, const char *line)
{
    int empty = 0;
    if (!atomic_compare_exchange_strong(&c->state, &empty, 1)) return;
    size_t n = strlen(line);
    if (n < sizeof c->text) {
        memcpy(c->text, line, n + 1);
    } else {
        const char *tail = remedy_tail(line, n, sizeof c->text);
        size_t keep = tail ? strlen(tail) + 1 : 0; /* with the space before it */
        int dots;
        size_t cut = cause_cut(line, sizeof c->text - keep, &dots);
        memcpy(c->text, line, cut);
        if (dots) memcpy(c->text + cut, "...", 3), cut += 3;
        if (tail) c->text[cut] = ' ', memcpy(c->text + cut + 1, tail, keep - 1), cut += keep;
        c->text[cut] = '\0';
    }
    atomic_store_explicit(&c->state, 2, memory_order_release);
}

void weft_log_cause_offer(weft_log_cause_t *c, const char *line) { cause_take(c, line); }

void weft_log_cause_copy(weft_log_cause_t *to, const weft_log_cause_t *from)
{
    const char *text = weft_log_cause_text(from);
    if (text) cause_take(to, text);
}

static const char *const level_names[] = {"error", "warning", "info", "debug"};

/* weft_log's work; `cause`: whether an error line may become the cause of
 * the task the thread works for. */
static void vlog(int level, int device, int cause, const char *fmt, va_list ap)
{
    char line[WEFT_LOG_LINE];
    vsnprintf(line, sizeof line, fmt, ap);
    if (level == WEFT_LOG_ERROR) {
        char *keep = last_error_line();
        if (keep) memcpy(keep, line, sizeof line);
        if (cause && cause_now) cause_take(cause_now, line);
    }
    emit(level == WEFT_LOG_INFO ? stdout : stderr, device, level_names[level], line);
}

void weft_log(int level, int device, const char *fmt, ...)
{
    if (level > weft_log_level() && level != WEFT_LOG_ERROR) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level, device, 1, fmt, ap);
    va_end(ap);
}

void weft_log_outcome(int device, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(WEFT_LOG_ERROR, device, 0, fmt, ap);
    va_end(ap);
}

void weft_log_stats(int device, const char *fmt, ...)
{
    char line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    emit(stdout, device, "stats", line);
    fflush(stdout);
}

void weft_log_summary(const char *fmt, ...)
{
    char line[WEFT_LOG_LINE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stdout, "weft %s\n", line);
    fflush(stdout);
}
