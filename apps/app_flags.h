/* Integer command-line flags of the weft apps: a table of flags naming an
 * int64_t field of the app's options with its bounds, the lookup of the
 * flag an argument names ("--long=value" or "-f value"), and the parse of
 * its value with an error naming the flag. Header-only (apps/CMakeLists.txt
 * builds every .c file of apps/ as its own program). */
#ifndef WEFT_APPS_APP_FLAGS_H
#define WEFT_APPS_APP_FLAGS_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Each line an app prints to stderr leaves in one write(2), as weft's own
 * lines do (src/util/log.c): glibc 2.37 and later print to an unbuffered
 * stream in 128-byte pieces, and two ranks' lines interleaved in
 * mpiexec's output (app_mpmd_potrf_posv on the GPU machine's Ubuntu 24.04:
 * "...with the same program and weft-posv: rank 1: ..."). Line buffered,
 * a line shorter than BUFSIZ is one write. First thing in main. */
static inline void app_stderr_by_line(void) { setvbuf(stderr, NULL, _IOLBF, BUFSIZ); }

typedef struct app_flag {
    const char *name;
    size_t offset; /* of the int64_t field in the app's options */
    int64_t min, max;
    int sized; /* a size in bytes: K, M and G suffixes (powers of 1024) allowed */
} app_flag_t;

/* A flag of an app's table whose value is a word (weft-geqrf's --tree
 * flat|hier): word i is stored as i in the flag's field, the flag's max + 1
 * words in all. */
typedef struct app_flag_words {
    const char *flag; /* its name in the app's table */
    const char *const *words;
} app_flag_words_t;

/* Parses s as one of the words of flag f (f->max + 1 of them) into *out;
 * prints "<prog>: <flag> expects a or b, got '...'" otherwise (when
 * verbose). */
static inline int app_parse_word(const char *prog, const app_flag_t *f, const char *const *words,
                                 const char *s, int64_t *out, int verbose)
{
    for (int64_t i = 0; i <= f->max; i++)
        if (strcasecmp(s, words[i]) == 0) { /* as weft's own enumerated parameters */
            *out = i;
            return 0;
        }
    if (verbose) { /* one write: under mpiexec the ranks' lines would interleave */
        char list[256] = "";
        for (int64_t i = 0; i <= f->max; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s",
                     i == 0        ? ""
                     : i == f->max ? " or "
                                   : ", ",
                     words[i]);
        }
        fprintf(stderr, "%s: %s expects %s, got '%s'\n", prog, f->name, list, s);
    }
    return -1;
}

/* Parses s as a decimal integer in [min, max]; prints "<prog>: <flag>
 * expects ..." otherwise (when verbose), with the bound always: "-N expects
 * a positive integer, got '99999999999'" left the user guessing. */
static inline int app_parse_int(const char *prog, const char *flag, const char *s, int64_t min,
                                int64_t max, int64_t *out, int verbose)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == 0 && end != s && *end == '\0' && v >= min && v <= max) {
        *out = v;
        return 0;
    }
    if (verbose) {
        const char *what = min == 1 ? "a positive integer" : "a non-negative integer";
        fprintf(stderr, "%s: %s expects %s <= %lld, got '%s'\n", prog, flag, what, (long long)max,
                s);
    }
    return -1;
}

/* The power of two a size suffix stands for (K, M or G, with an optional
 * "iB", "i" or "B" after it), *end moved past it; 0 for none. */
static inline int app_size_shift(char **end)
{
    const char *e = *end;
    int shift = *e == 'k' || *e == 'K'   ? 10
                : *e == 'm' || *e == 'M' ? 20
                : *e == 'g' || *e == 'G' ? 30
                                         : 0;
    if (shift == 0) return 0;
    e++;
    if (e[0] == 'i' && e[1] == 'B')
        e += 2;
    else if (e[0] == 'B' || e[0] == 'i')
        e++;
    *end = (char *)e;
    return shift;
}

/* Parses s as a size in bytes in [min, max], a decimal integer with an
 * optional K, M or G suffix; prints "<prog>: <flag> expects a size in
 * bytes in [min, max] ..." otherwise (when verbose). */
static inline int app_parse_size(const char *prog, const char *flag, const char *s, int64_t min,
                                 int64_t max, int64_t *out, int verbose)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int shift = end != s ? app_size_shift(&end) : 0;
    if (errno == 0 && end != s && *end == '\0' && v >= 0 && v <= (max >> shift) &&
        (v << shift) >= min) {
        *out = (int64_t)v << shift;
        return 0;
    }
    if (verbose)
        fprintf(stderr,
                "%s: %s expects a size in bytes in [%lld, %lld] (K, M, G suffixes allowed), "
                "got '%s'\n",
                prog, flag, (long long)min, (long long)max, s);
    return -1;
}

/* Parses the value s of flag f into *out: a size or an integer. */
static inline int app_parse_flag(const char *prog, const app_flag_t *f, const char *s, int64_t *out,
                                 int verbose)
{
    return f->sized ? app_parse_size(prog, f->name, s, f->min, f->max, out, verbose)
                    : app_parse_int(prog, f->name, s, f->min, f->max, out, verbose);
}

/* The flag of flags[0..n) that argv[*i] names, its value in *value (from
 * "--long=value" or the next argument, *i advanced). NULL with *value NULL
 * for an unknown option, NULL with *value "" when the value is missing. */
static inline const app_flag_t *app_flag_at(const app_flag_t *flags, size_t n, int argc,
                                            char **argv, int *i, const char **value)
{
    const char *a = argv[*i];
    *value = NULL;
    for (size_t f = 0; f < n; f++) {
        size_t len = strlen(flags[f].name);
        if (strncmp(a, flags[f].name, len) != 0) continue;
        if (a[len] == '=' && a[1] == '-') {
            *value = a + len + 1;
            return &flags[f];
        }
        if (a[len] != '\0') continue;
        if (*i + 1 >= argc) {
            *value = "";
            return NULL;
        }
        *value = argv[++*i];
        return &flags[f];
    }
    return NULL;
}

/* The flags a parse has read, by the option each sets (an app's flag may
 * set a common option: weft-geqrf's -t), so that a second one with another
 * value is refused: the last one won silently ("-N 256 -N 128" ran N=128,
 * weft-pingpong's "--iters 5 --iters 6" ran 6). The same value twice is
 * taken. */
typedef struct app_seen_flags {
    struct {
        size_t offset;
        int64_t value;
        const char *word;
    } flag[64];
    size_t n;
} app_seen_flags_t;

/* Notes flag f read as got (its word `word`); 0, or -1 after a message
 * (when verbose) when f's option was given before with another value. */
static inline int app_flag_once(const char *prog, app_seen_flags_t *seen, const app_flag_t *f,
                                int64_t got, const char *word, int verbose)
{
    size_t k = 0;
    while (k < seen->n && seen->flag[k].offset != f->offset) k++;
    if (k < seen->n) {
        if (seen->flag[k].value == got) return 0;
        if (verbose)
            fprintf(stderr, "%s: %s given twice, as '%s' and then '%s': give it once\n", prog,
                    f->name, seen->flag[k].word, word);
        return -1;
    }
    if (seen->n < sizeof seen->flag / sizeof seen->flag[0]) {
        seen->flag[seen->n].offset = f->offset;
        seen->flag[seen->n].value = got;
        seen->flag[seen->n].word = word;
        seen->n++;
    }
    return 0;
}

#endif
