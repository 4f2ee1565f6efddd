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

typedef struct app_flag {
    const char *name;
    size_t offset; /* of the int64_t field in the app's options */
    int64_t min, max;
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
        if (strcmp(s, words[i]) == 0) {
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

#endif
