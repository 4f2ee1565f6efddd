/* The parameter registry: the values, the env and command line passes,
 * typed reads and the listing. The parameters themselves are in
 * params_table.c, the parsing of each kind in params_parse.c. */
#include "params/params.h"
#include "params/params_parse.h"

#include <assert.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "weft/weft.h"

#define OPT_PREFIX "--weft-"
#define OPT_PREFIX_LEN (sizeof OPT_PREFIX - 1)
#define ENV_PREFIX "WEFT_"

/* One parameter's current value: the text that weft_params_str and the
 * listing show, and the number that weft_params_int returns. */
typedef struct param_value {
    char *text;
    int64_t num;
    int is_set;
} param_value_t;

struct weft_params {
    int count;
    param_value_t *values; /* indexed like weft_param_table */
};

/* ---- names ------------------------------------------------------------ */

/* Index of the parameter called name[0..len), or -1. A '-' in the name
 * matches '_' so that --weft-debug-verbose works as well. */
static int find_index(const char *name, size_t len)
{
    for (int i = 0; i < weft_param_count; i++) {
        const char *t = weft_param_table[i].name;
        size_t k = 0;
        while (k < len && t[k] != '\0' && (t[k] == name[k] || (t[k] == '_' && name[k] == '-'))) k++;
        if (k == len && t[k] == '\0') return i;
    }
    return -1;
}

const weft_param_def_t *weft_params_find(const char *name)
{
    int i = find_index(name, strlen(name));
    return i < 0 ? NULL : &weft_param_table[i];
}

/* Parses text for parameter d into a fresh value (text owned by *out). */
static int parse_value(const weft_param_def_t *d, const char *text, param_value_t *out, char *why)
{
    *out = (param_value_t){0};
    return weft_params__parse(d, text, &out->num, &out->text, why);
}

/* Replaces parameter i's value with text; origin says where the text came
 * from in the error message ("" for the command line and the API). */
static int assign(weft_params_t *p, int i, const char *text, const char *origin)
{
    const weft_param_def_t *d = &weft_param_table[i];
    char why[WEFT_PARAMS_WHY_LEN];
    param_value_t v;
    int rc = parse_value(d, text, &v, why);
    if (rc == WEFT_ERR_PARAM) weft_error("parameter %s: %s%s", d->name, why, origin);
    if (rc != WEFT_SUCCESS) return rc;
    free(p->values[i].text);
    p->values[i] = v;
    p->values[i].is_set = 1;
    return WEFT_SUCCESS;
}

/* ---- create, copy, destroy --------------------------------------------- */

int weft_params_create(weft_params_t **out)
{
    weft_params_t *p = malloc(sizeof *p);
    if (p == NULL) return WEFT_ERR_NOMEM;
    p->count = weft_param_count;
    p->values = calloc((size_t)weft_param_count, sizeof *p->values);
    if (p->values == NULL) {
        free(p);
        return WEFT_ERR_NOMEM;
    }
    for (int i = 0; i < weft_param_count; i++) {
        const weft_param_def_t *d = &weft_param_table[i];
        char why[WEFT_PARAMS_WHY_LEN];
        int rc = parse_value(d, d->defval, &p->values[i], why);
        if (rc == WEFT_ERR_PARAM) {
            /* A table entry whose default does not parse: a bug in weft. */
            weft_error("parameter %s: default %s", d->name, why);
            rc = WEFT_ERR_INTERNAL;
        }
        if (rc != WEFT_SUCCESS) {
            weft_params_destroy(p);
            return rc;
        }
    }
    *out = p;
    return WEFT_SUCCESS;
}

void weft_params_destroy(weft_params_t *p)
{
    if (p == NULL) return;
    for (int i = 0; i < p->count; i++) free(p->values[i].text);
    free(p->values);
    free(p);
}

/* A deep copy, so that a load that fails half way changes nothing. */
static int params_copy(const weft_params_t *src, weft_params_t **out)
{
    weft_params_t *p;
    int rc = weft_params_create(&p);
    if (rc != WEFT_SUCCESS) return rc;
    for (int i = 0; i < p->count; i++) {
        char *text = weft_params__text_dup(src->values[i].text, strlen(src->values[i].text));
        if (text == NULL) {
            weft_params_destroy(p);
            return WEFT_ERR_NOMEM;
        }
        free(p->values[i].text);
        p->values[i] = src->values[i];
        p->values[i].text = text;
    }
    *out = p;
    return WEFT_SUCCESS;
}

/* ---- env and command line ---------------------------------------------- */

/* The environment variable of parameter i: WEFT_<NAME>. */
static void env_name(int i, char var[128])
{
    const char *name = weft_param_table[i].name;
    size_t len = strlen(name);
    assert(len + sizeof ENV_PREFIX <= 128);
    memcpy(var, ENV_PREFIX, sizeof ENV_PREFIX - 1);
    for (size_t k = 0; k <= len; k++)
        var[sizeof ENV_PREFIX - 1 + k] = (char)toupper((unsigned char)name[k]);
}

/* WEFT_<NAME> for every parameter. Other WEFT_ variables belong to other
 * tools and are not looked at. */
static int load_env(weft_params_t *p)
{
    for (int i = 0; i < p->count; i++) {
        char var[128], origin[160];
        env_name(i, var);
        const char *text = getenv(var);
        if (text == NULL) continue;
        snprintf(origin, sizeof origin, " (from env %s)", var);
        int rc = assign(p, i, text, origin);
        if (rc != WEFT_SUCCESS) return rc;
    }
    return WEFT_SUCCESS;
}

/* Edit distance of a and b (lower case, at most 63 characters each), for
 * the typo check below. */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[64];
    if (la > 63 || lb > 63) return 64;
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            if (up + 1 < best) best = up + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* The parameter one or two letters away from name[0..len) ('-' read as
 * '_'), the nearest; -1 when none is. */
static int nearest(const char *name, size_t len)
{
    char text[64];
    if (len >= sizeof text) return -1;
    for (size_t k = 0; k < len; k++) text[k] = name[k] == '-' ? '_' : name[k];
    text[len] = '\0';
    int best = -1, best_d = 3;
    for (int i = 0; i < weft_param_count; i++) {
        int d = distance(text, weft_param_table[i].name);
        if (d < best_d) best = i, best_d = d;
    }
    return best;
}

/* "unknown parameter PREFIX NAME", with the nearest parameter when one is
 * a letter or two away (a typo on the command line was named without it,
 * while the same typo in the environment got one). */
static int unknown(const char *prefix, const char *name, size_t len)
{
    int near = nearest(name, len);
    if (near >= 0)
        weft_error("unknown parameter %s%.*s: did you mean %s%s? (weft-info lists them)", prefix,
                   (int)len, name, prefix, weft_param_table[near].name);
    else
        weft_error("unknown parameter %s%.*s (run weft-info for the list)", prefix, (int)len, name);
    return WEFT_ERR_PARAM;
}

/* A WEFT_ variable that is no parameter but one or two letters away from
 * one (WEFT_DEVICE_EMU_ENABLE) is a typo that would otherwise leave the
 * run at the default without a word; other WEFT_ variables belong to other
 * tools and stay unremarked. */
static void warn_env_typos(void)
{
    extern char **environ;
    /* Once a process: weft-info loads the parameters twice, and threads
     * may each make a context at once. */
    static atomic_int warned;
    if (atomic_exchange(&warned, 1)) return;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, ENV_PREFIX, sizeof ENV_PREFIX - 1) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) {
            /* An entry a launcher wrote without '=' sets nothing (getenv
             * does not see it): say so rather than leave the default. */
            weft_warn("environment entry %.64s has no '=' and sets nothing (ignored)", *e);
            continue;
        }
        size_t len = (size_t)(eq - *e);
        if (len >= 64 + sizeof ENV_PREFIX) continue;
        char name[80];
        size_t n = len - (sizeof ENV_PREFIX - 1);
        for (size_t k = 0; k < n; k++)
            name[k] = (char)tolower((unsigned char)(*e)[sizeof ENV_PREFIX - 1 + k]);
        name[n] = '\0';
        /* A parameter's name in another case (WEFT_sched_window) is a typo
         * too: the variables are read in upper case only. */
        int i = find_index(name, n);
        if (i < 0) i = nearest(name, n);
        if (i < 0) continue;
        char want[128];
        env_name(i, want);
        if (strlen(want) == len && strncmp(want, *e, len) == 0) continue;
        weft_warn("environment variable %.*s is not a weft parameter (ignored): did you mean "
                  "%s? (weft-info lists them)",
                  (int)len, *e, want);
    }
}

/* Applies the option args[0] (which starts with --weft-), taking its value
 * from args[1] in the two-word form; *used says how many words it took. */
static int apply_option(weft_params_t *p, int nargs, char **args, int *used, int *which)
{
    const char *opt = args[0] + OPT_PREFIX_LEN;
    const char *eq = strchr(opt, '=');
    size_t len = eq != NULL ? (size_t)(eq - opt) : strlen(opt);
    int i = find_index(opt, len);
    *which = i;
    if (i < 0) return unknown(OPT_PREFIX, opt, len);
    const weft_param_def_t *d = &weft_param_table[i];
    const char *next = nargs > 1 ? args[1] : NULL;
    *used = 1;
    if (eq != NULL) return assign(p, i, eq + 1, "");
    /* A bare boolean is a switch; it takes the next word only when that
     * word is a boolean, so "--weft-show_stats input.dat" keeps the file. */
    if (d->kind == WEFT_PARAM_BOOL) {
        if (next == NULL || weft_params__bool_word(next) < 0) return assign(p, i, "1", "");
        *used = 2;
        return assign(p, i, next, "");
    }
    /* The next word is an option, not a value ("--weft-trace --check" took
     * --check as the trace's path, and the check never ran); "-1" is a
     * value. */
    int option =
        next != NULL && next[0] == '-' && (next[1] == '-' || isalpha((unsigned char)next[1]));
    if (next == NULL || option) {
        weft_error("parameter %s: " OPT_PREFIX "%s needs a value (" OPT_PREFIX "%s=<value>)%s%s%s",
                   d->name, d->name, d->name, option ? "; the next word, '" : "",
                   option ? next : "", option ? "', is an option" : "");
        return WEFT_ERR_PARAM;
    }
    *used = 2;
    return assign(p, i, next, "");
}

/* The first value an option gave a parameter on the command line. */
typedef struct argv_seen {
    int64_t num;
    char *text; /* NULL until the parameter is given */
} argv_seen_t;

/* A second option for a parameter already given on the command line: the
 * same value passes, another is refused (the last one won silently, while
 * the environment's value stays the documented default an option
 * overrides). */
static int check_repeat(const weft_params_t *p, int i, argv_seen_t *seen)
{
    const weft_param_def_t *d = &weft_param_table[i];
    const param_value_t *v = &p->values[i];
    if (!seen->text) {
        seen->text = weft_params__text_dup(v->text, strlen(v->text));
        if (!seen->text) return WEFT_ERR_NOMEM;
        seen->num = v->num;
        return WEFT_SUCCESS;
    }
    int by_text = d->kind == WEFT_PARAM_ENUM || d->kind == WEFT_PARAM_STRING;
    if (by_text ? strcmp(seen->text, v->text) == 0 : seen->num == v->num) return WEFT_SUCCESS;
    weft_error("parameter %s: given twice on the command line, as '%s' and then '%s' (give it "
               "once)",
               d->name, seen->text, v->text);
    return WEFT_ERR_PARAM;
}

/* Applies the --weft- options of argv and writes the other words, in
 * order, to kept; returns how many were kept in *nkept. Words after "--"
 * belong to the application. */
static int load_argv(weft_params_t *p, int argc, char **argv, char **kept, int *nkept)
{
    argv_seen_t *seen = calloc((size_t)weft_param_count, sizeof *seen);
    if (!seen) return WEFT_ERR_NOMEM;
    int n = 0, i = 0, rc = WEFT_SUCCESS;
    if (argc > 0) kept[n++] = argv[i++]; /* the program name */
    while (i < argc && strcmp(argv[i], "--") != 0) {
        if (strncmp(argv[i], OPT_PREFIX, OPT_PREFIX_LEN) != 0) {
            kept[n++] = argv[i++];
            continue;
        }
        int used = 1, which = -1;
        rc = apply_option(p, argc - i, argv + i, &used, &which);
        if (rc == WEFT_SUCCESS) rc = check_repeat(p, which, &seen[which]);
        if (rc != WEFT_SUCCESS) break;
        i += used;
    }
    while (rc == WEFT_SUCCESS && i < argc) kept[n++] = argv[i++];
    *nkept = n;
    for (int k = 0; k < weft_param_count; k++) free(seen[k].text);
    free(seen);
    return rc;
}

/* Gives p the values of from and frees from's shell. */
static void params_take(weft_params_t *p, weft_params_t *from)
{
    param_value_t *old = p->values;
    p->values = from->values;
    from->values = old;
    weft_params_destroy(from);
}

/* A count kept from before a weft_init, which removed its --weft- words
 * from the same array (a second context given a copy of argc), is too
 * large: the words end at the NULL (strcmp of it crashed). */
int weft_params_argv_words(const int *argc, char **const *argv)
{
    int n = 0;
    if (argc == NULL || argv == NULL || *argv == NULL) return 0;
    while (n < *argc && (*argv)[n] != NULL) n++;
    return n;
}

/* A word that looks meant for weft but lacks its prefix (--weft_cores=2,
 * -weft-cores=2) goes to the application, and the parameter keeps its
 * value without a word: said once a word, as the WEFT_ typos are. */
static void warn_argv_near_misses(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *w = argv[i], *rest = NULL;
        if (strncmp(w, "--weft_", 7) == 0) rest = w + 7;
        if (strncmp(w, "-weft-", 6) == 0 || strncmp(w, "-weft_", 6) == 0) rest = w + 6;
        if (rest)
            weft_warn(
                "argument %s is left to the application: weft's options begin with " OPT_PREFIX
                " (did you mean " OPT_PREFIX "%s?)",
                w, rest);
    }
}

int weft_params_load(weft_params_t *p, int *argc, char ***argv)
{
    int n = weft_params_argv_words(argc, argv);
    char **kept = malloc(((size_t)n + 1) * sizeof *kept);
    if (kept == NULL) return WEFT_ERR_NOMEM;
    weft_params_t *work;
    int rc = params_copy(p, &work);
    if (rc != WEFT_SUCCESS) goto undo_kept;
    int nkept = 0;
    rc = load_env(work);
    if (rc == WEFT_SUCCESS && n > 0) rc = load_argv(work, n, *argv, kept, &nkept);
    /* After both sources, so that debug_verbose=0 from either silences it;
     * also when an option was refused (a typo's hint helps most then). */
    if (weft_params_int(work, "debug_verbose") >= WEFT_LOG_WARN) {
        warn_env_typos();
        if (n > 0) warn_argv_near_misses(n, *argv); /* n > 0: argv and *argv are not NULL */
    }
    if (rc != WEFT_SUCCESS) goto undo_work;
    if (n > 0) {
        memcpy(*argv, kept, (size_t)nkept * sizeof *kept);
        (*argv)[nkept] = NULL;
        *argc = nkept;
    }
    params_take(p, work);
    free(kept);
    return WEFT_SUCCESS;
undo_work:
    weft_params_destroy(work);
undo_kept:
    free(kept);
    return rc;
}

int weft_params__set(weft_params_t *p, const char *name, const char *value)
{
    int i = find_index(name, strlen(name));
    if (i < 0) return unknown("", name, strlen(name));
    return assign(p, i, value, "");
}

/* ---- reads ------------------------------------------------------------- */

/* Index of a name the caller knows to exist: a wrong name is a bug in weft
 * (assert); release builds then read as "0" rather than crash. */
static int index_of(const char *name)
{
    int i = find_index(name, strlen(name));
    assert(i >= 0 && "no such parameter in weft_param_table");
    return i;
}

int64_t weft_params_int(const weft_params_t *p, const char *name)
{
    int i = index_of(name);
    if (i < 0) return 0;
    assert(weft_param_table[i].kind != WEFT_PARAM_STRING && "read strings with weft_params_str");
    return p->values[i].num;
}

const char *weft_params_str(const weft_params_t *p, const char *name)
{
    int i = index_of(name);
    if (i < 0) return "";
    assert((weft_param_table[i].kind == WEFT_PARAM_STRING ||
            weft_param_table[i].kind == WEFT_PARAM_ENUM) &&
           "read numbers with weft_params_int");
    return p->values[i].text;
}

const char *weft_params_text(const weft_params_t *p, const char *name)
{
    int i = index_of(name);
    return i < 0 ? "" : p->values[i].text;
}

int weft_params_is_set(const weft_params_t *p, const char *name)
{
    int i = index_of(name);
    return i >= 0 ? p->values[i].is_set : 0;
}

/* ---- listing ----------------------------------------------------------- */

static int max_int(int a, int b) { return a > b ? a : b; }

/* The help line with the accepted values appended where the kind has them. */
static void print_help(const weft_param_def_t *d, FILE *out)
{
    char range[80];
    if (d->kind == WEFT_PARAM_INT) {
        fprintf(out, "%s [%" PRId64 ", %" PRId64 "]\n", d->help, d->min, d->max);
    } else if (d->kind == WEFT_PARAM_SIZE) {
        weft_params__range_text(d, range, sizeof range);
        fprintf(out, "%s %s\n", d->help, range);
    } else if (d->kind == WEFT_PARAM_ENUM) {
        fprintf(out, "%s (%s)\n", d->help, d->choices);
    } else {
        fprintf(out, "%s\n", d->help);
    }
}

void weft_params_print(const weft_params_t *p, FILE *out)
{
    int wname = 0, wvalue = 0, wdef = 0;
    for (int i = 0; i < p->count; i++) {
        wname = max_int(wname, (int)strlen(weft_param_table[i].name));
        wvalue = max_int(wvalue, (int)strlen(p->values[i].text));
        wdef = max_int(wdef, (int)strlen(weft_param_table[i].defval));
    }
    for (int i = 0; i < p->count; i++) {
        const weft_param_def_t *d = &weft_param_table[i];
        fprintf(out, "%-*s  %-*s  %-*s  ", wname, d->name, wvalue, p->values[i].text, wdef,
                d->defval);
        print_help(d, out);
    }
}
