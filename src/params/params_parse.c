/* Reading one parameter's text as its kind (params_parse.h). */
#include "params/params_parse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

/* ---- small text helpers ------------------------------------------------ */

char *weft_params__text_dup(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d == NULL) return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

/* Case-insensitive comparison of s[0..len) with the whole of word. */
static int text_ieq(const char *s, size_t len, const char *word)
{
    if (strlen(word) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)s[i]) != tolower((unsigned char)word[i])) return 0;
    return 1;
}

/* ---- parsing, one function per kind -------------------------------------
 * Each fills *num (ENUM also the choice's own spelling to keep) or writes
 * why the text was refused. */

static int parse_int(const weft_param_def_t *d, const char *s, int64_t *num, char *why)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    /* strtoll skips leading blanks and takes '+'; a value is digits only. */
    if (end == s || *end != '\0' || !(isdigit((unsigned char)s[0]) || s[0] == '-')) {
        snprintf(why, WEFT_PARAMS_WHY_LEN, "'%s' is not an integer", s);
        return WEFT_ERR_PARAM;
    }
    if (errno == ERANGE || v < d->min || v > d->max) {
        snprintf(why, WEFT_PARAMS_WHY_LEN,
                 "%s is outside the allowed range [%" PRId64 ", %" PRId64 "]", s, d->min, d->max);
        return WEFT_ERR_PARAM;
    }
    *num = v;
    return WEFT_SUCCESS;
}

int weft_params__bool_word(const char *s)
{
    static const char *words[] = {"0", "false", "off", "no", "1", "true", "on", "yes"};
    for (int i = 0; i < 8; i++)
        if (text_ieq(s, strlen(s), words[i])) return i >= 4;
    return -1;
}

static int parse_bool(const char *s, int64_t *num, char *why)
{
    int b = weft_params__bool_word(s);
    if (b < 0) {
        snprintf(why, WEFT_PARAMS_WHY_LEN, "'%s' is not a boolean (1|0|true|false|on|off|yes|no)",
                 s);
        return WEFT_ERR_PARAM;
    }
    *num = b;
    return WEFT_SUCCESS;
}

/* Binary shift of a size suffix, -1 if it is not one. */
static int size_shift(const char *sfx)
{
    static const struct {
        const char *text;
        int shift;
    } known[] = {{"", 0},   {"k", 10},   {"kib", 10}, {"m", 20},  {"mib", 20},
                 {"g", 30}, {"gib", 30}, {"t", 40},   {"tib", 40}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (text_ieq(sfx, strlen(sfx), known[i].text)) return known[i].shift;
    return -1;
}

/* A size as the user would write it: the largest suffix that divides it
 * exactly, so that a range reads "[4K, 1G]". */
static void size_text(int64_t v, char *buf, size_t len)
{
    static const char sfx[] = {'G', 'M', 'K'};
    for (int i = 0; i < 3; i++) {
        int shift = 30 - 10 * i;
        if (v != 0 && v % ((int64_t)1 << shift) == 0) {
            snprintf(buf, len, "%" PRId64 "%c", v >> shift, sfx[i]);
            return;
        }
    }
    snprintf(buf, len, "%" PRId64, v);
}

void weft_params__range_text(const weft_param_def_t *d, char *buf, size_t len)
{
    char lo[32], hi[32];
    size_text(d->min, lo, sizeof lo);
    size_text(d->max, hi, sizeof hi);
    snprintf(buf, len, "[%s, %s]", lo, hi);
}

static int parse_size(const weft_param_def_t *d, const char *s, int64_t *num, char *why)
{
    const char *c = s;
    int64_t v = 0;
    int too_large = 0;
    for (; isdigit((unsigned char)*c); c++) {
        int digit = *c - '0';
        if (v > (INT64_MAX - digit) / 10)
            too_large = 1;
        else
            v = v * 10 + digit;
    }
    int shift = size_shift(c);
    if (c == s || shift < 0) {
        snprintf(why, WEFT_PARAMS_WHY_LEN,
                 "'%s' is not a size (bytes, optional K|M|G|T or KiB|MiB|GiB|TiB suffix)", s);
        return WEFT_ERR_PARAM;
    }
    if (too_large || v > (INT64_MAX >> shift) || (v << shift) < d->min || (v << shift) > d->max) {
        char range[80];
        weft_params__range_text(d, range, sizeof range);
        snprintf(why, WEFT_PARAMS_WHY_LEN, "'%s' is outside the allowed range %s (bytes)", s,
                 range);
        return WEFT_ERR_PARAM;
    }
    *num = v << shift;
    return WEFT_SUCCESS;
}

/* The choice s names, as index and as its spelling in the table. */
static int parse_enum(const weft_param_def_t *d, const char *s, int64_t *num, const char **choice,
                      size_t *choice_len, char *why)
{
    const char *c = d->choices;
    for (int index = 0;; index++) {
        size_t len = strcspn(c, "|");
        if (text_ieq(c, len, s)) {
            *num = index;
            *choice = c;
            *choice_len = len;
            return WEFT_SUCCESS;
        }
        if (c[len] == '\0') break;
        c += len + 1;
    }
    snprintf(why, WEFT_PARAMS_WHY_LEN, "'%s' is not one of %s", s, d->choices);
    return WEFT_ERR_PARAM;
}

int weft_params__parse(const weft_param_def_t *d, const char *text, int64_t *num_out, char **kept,
                       char *why)
{
    int64_t num = 0;
    const char *keep = text;
    size_t keep_len = strlen(text);
    char digits[24];
    int rc = WEFT_SUCCESS;
    switch (d->kind) {
    case WEFT_PARAM_INT:
        rc = parse_int(d, text, &num, why);
        break;
    case WEFT_PARAM_BOOL:
        rc = parse_bool(text, &num, why);
        break;
    case WEFT_PARAM_SIZE:
        rc = parse_size(d, text, &num, why);
        break;
    case WEFT_PARAM_ENUM:
        rc = parse_enum(d, text, &num, &keep, &keep_len, why);
        break;
    case WEFT_PARAM_STRING:
        break;
    }
    if (rc != WEFT_SUCCESS) return rc;
    /* Numbers and booleans show in one spelling whatever the user typed. */
    if (d->kind == WEFT_PARAM_INT || d->kind == WEFT_PARAM_BOOL) {
        keep_len = (size_t)snprintf(digits, sizeof digits, "%" PRId64, num);
        keep = digits;
    }
    char *copy = weft_params__text_dup(keep, keep_len);
    if (copy == NULL) return WEFT_ERR_NOMEM;
    *kept = copy;
    *num_out = num;
    return WEFT_SUCCESS;
}
