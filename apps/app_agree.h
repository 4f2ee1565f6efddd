/* What every rank of an app must be given alike, checked after weft_init:
 * an option that differs between ranks makes them run different task
 * sequences or different MPI calls of the app's own, and some of those
 * differences weft cannot see (the ranks then wait on each other for
 * ever), so the apps compare such options and stop on every rank. */
#ifndef WEFT_APP_AGREE_H
#define WEFT_APP_AGREE_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>
#include <weft/weft.h>

#include "app_flags.h"

/* Every rank's smallest and largest value (a rank that does not know its
 * own, known 0, takes no side; when none knows, lo > hi): one
 * MPI_Allreduce of the value and its negation, LLONG_MIN standing for no
 * value, so a value must be above it (every flag's is). Collective; -1
 * when MPI failed. */
static inline int app_value_range(int64_t value, int known, long long *lo, long long *hi)
{
    if (known && value == LLONG_MIN) known = 0;
    long long v[2] = {known ? (long long)value : LLONG_MIN, known ? -(long long)value : LLONG_MIN};
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    /* The negation of "no rank knew" is not a long long: an empty range. */
    *lo = v[1] == LLONG_MIN ? LLONG_MAX : -v[1];
    *hi = v[0];
    return 0;
}

/* Whether every rank runs the same program in the same mode (mode: "" or
 * the option that makes another, "--probe-gpus"): the first collective of
 * every app after weft_init, so that the apps' own collectives, which
 * differ between programs, meet only their own. Ranks of weft-pingpong and
 * weft-potrf aborted in MPI (MPI_ERR_TRUNCATE) comparing flag tables of
 * different lengths; a rank given --probe-gpus alone left the others in an
 * MPI_Allreduce for ever. Collective; 0, or -1 after the line on every
 * rank. */
static inline int app_same_program(const char *prog, const char *mode, weft_context_t *ctx)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a of "prog mode" */
    for (const char *s[] = {prog, " ", mode}, **p = s; p < s + 3; p++)
        for (const unsigned char *c = (const unsigned char *)*p; *c; c++)
            h = (h ^ *c) * 1099511628211ULL;
    long long lo, hi;
    if (app_value_range((int64_t)(h >> 2), 1, &lo, &hi) != 0) {
        fprintf(stderr, "%s: rank %d: comparing the ranks' programs failed in MPI_Allreduce\n",
                prog, weft_rank(ctx));
        return -1;
    }
    if (lo == hi) return 0;
    fprintf(stderr,
            "%s: rank %d: this rank runs %s%s%s, another rank another program or mode: start "
            "every rank with the same program and options\n",
            prog, weft_rank(ctx), prog, *mode ? " " : "", mode);
    return -1;
}

/* A flag's value as its user wrote it: the word of a word flag (words,
 * NULL for an integer flag), "(not given)" for -1, else the number. */
static inline const char *app_flag_text(int64_t v, const char *const *words, char *buf, size_t n)
{
    if (v == -1) return "(not given)";
    if (words && v >= 0) return words[v];
    snprintf(buf, n, "%lld", (long long)v);
    return buf;
}

/* app_same_flag for a flag whose values are words (NULL: numbers). */
static inline int app_same_flag_words(const char *prog, weft_context_t *ctx, const char *flag,
                                      int64_t value, int known, const char *const *words)
{
    long long lo, hi;
    if (app_value_range(value, known, &lo, &hi) != 0) return -1;
    if (!known || lo == hi) return 0;
    char here[24], lo_text[24], hi_text[24];
    fprintf(stderr,
            "%s: rank %d: %s %s here, but the ranks were given %s from %s to %s: give every "
            "rank the same %s\n",
            prog, weft_rank(ctx), flag, app_flag_text(value, words, here, sizeof here), flag,
            app_flag_text(lo, words, lo_text, sizeof lo_text),
            app_flag_text(hi, words, hi_text, sizeof hi_text), flag);
    return -1;
}

/* A flag each rank reads for itself that must be the same on all: -g
 * (the apps make their data and tasks alike on every rank only when every
 * rank was given the same -g: ranks given -g 1 and -g 0 stopped at the
 * first wait with a mismatch of data creations), --seed (each rank
 * generates its own tiles: ranks given different seeds factorized a mix
 * of two matrices and the check passed). Named on every rank that knows
 * its value (known 0: this rank's command line was refused, which it said;
 * it takes no side). Collective; 0, or -1 after the line (value -1: not
 * given). */
static inline int app_same_flag(const char *prog, weft_context_t *ctx, const char *flag,
                                int64_t value, int known)
{
    return app_same_flag_words(prog, ctx, flag, value, known, NULL);
}

/* app_same_flag for each flag of a table (flags, n) whose int64_t field
 * lies at offset `from` or past it in opts, but those whose names skip
 * lists (NULL-terminated; NULL for none); the flags that words (nwords of
 * them) lists are named by their words. Every flag is compared, so each
 * one that differs is named. Collective; 0, or -1 after the lines. */
static inline int app_same_flags(const char *prog, weft_context_t *ctx, const app_flag_t *flags,
                                 size_t n, const void *opts, size_t from, const char *const *skip,
                                 const app_flag_words_t *words, size_t nwords, int known)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        int skipped = flags[i].offset < from;
        for (size_t k = 0; skip && skip[k] && !skipped; k++)
            skipped = strcmp(flags[i].name, skip[k]) == 0;
        if (skipped) continue;
        int64_t v = *(const int64_t *)((const char *)opts + flags[i].offset);
        const char *const *w = NULL;
        for (size_t k = 0; k < nwords && !w; k++)
            if (strcmp(words[k].flag, flags[i].name) == 0) w = words[k].words;
        if (app_same_flag_words(prog, ctx, flags[i].name, v, known, w) != 0) rc = -1;
    }
    return rc;
}

/* Whether every rank took its command line (parsed: this one did). A rank
 * that refused its own said why and stops; without this the others went
 * on alone and met its absence as "ranks inserted different task
 * sequences" in their first wait, no word of the command line. Collective;
 * 0 when all did, -1 after the line. */
static inline int app_all_parsed(const char *prog, weft_context_t *ctx, int parsed)
{
    int all = parsed;
    if (MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return -1;
    if (all) return 0;
    if (parsed)
        fprintf(stderr,
                "%s: rank %d: another rank refused its command line (see its message): "
                "stopping\n",
                prog, weft_rank(ctx));
    return -1;
}

#endif
