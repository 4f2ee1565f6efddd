/* Failure injection (parameter fault_inject): rules parsed once, hit by
 * name and count. */
#include "util/fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "weft/weft.h"

static const char *const site_names[WEFT_FAULT_NSITES] = {
    [WEFT_FAULT_TASK] = "task",
    [WEFT_FAULT_COMM_ALLOC] = "comm_alloc",
    [WEFT_FAULT_COMM_POST] = "comm_post",
    [WEFT_FAULT_DEVICE_OPEN] = "device_open",
    [WEFT_FAULT_DEVICE_COPY] = "device_copy",
    [WEFT_FAULT_TASK_SKIP] = "task_skip",
    [WEFT_FAULT_HOST_PIN] = "host_pin",
    [WEFT_FAULT_DEVICE_FAIL] = "device_fail",
    [WEFT_FAULT_SPAN_ALLOC] = "span_alloc",
    [WEFT_FAULT_REFUSAL_NOTE] = "refusal_note",
    [WEFT_FAULT_DEVICE_LAND] = "device_land",
    [WEFT_FAULT_RECOVER] = "recover",
    [WEFT_FAULT_REDUX_ALLOC] = "redux_alloc",
    [WEFT_FAULT_MPI_COLL] = "mpi_coll",
    [WEFT_FAULT_EVENT_RECORD] = "event_record",
    [WEFT_FAULT_EMU_SHM] = "emu_shm",
    [WEFT_FAULT_TASK_KEEP] = "task_keep",
    [WEFT_FAULT_DEVICE_ALLOC] = "device_alloc",
    [WEFT_FAULT_PTG_WALK] = "ptg_walk",
};

const char *weft_fault_site_name(weft_fault_site_t site)
{
    return site >= 0 && site < WEFT_FAULT_NSITES ? site_names[site] : "?";
}

void weft_fault_site_rules(const weft_fault_t *f, weft_fault_site_t site, char *out, size_t n)
{
    size_t len = 0;
    if (n) out[0] = '\0';
    for (int i = 0; f && i < f->nrules && len < n; i++)
        if (f->rule[i].site == site)
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", f->rule[i].text);
}

static int parse_long(const char *s, long min, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min) return -1;
    *out = v;
    return 0;
}

/* The message names the sites from site_names, so that a new site is
 * listed where it is defined and nowhere else. */
static int bad(const char *rule, const char *why)
{
    char sites[256] = "";
    for (int i = 0; i < WEFT_FAULT_NSITES; i++) {
        size_t used = strlen(sites);
        snprintf(sites + used, sizeof sites - used, "%s%s", i ? ", " : "", site_names[i]);
    }
    weft_error("fault_inject: rule '%s' %s (expected SITE[:CLASS]:N[+][@RANK], SITE one of %s, "
               "N >= 1, '+' for every occurrence from the N-th on; e.g. task:gemm:3@1)",
               rule, why, sites);
    return WEFT_ERR_PARAM;
}

/* The "@RANK" of rule text (cut off text there) into *at, -1 without one;
 * rule: the whole rule, for the error. */
static int parse_rank(char *text, const char *rule, int nranks, long *at)
{
    *at = -1;
    /* The last '@' followed by no ':' starts the rank, so that a class
     * name may hold '@' (and ':'): "task:a@b:2" is class "a@b". */
    char *sep = strrchr(text, '@');
    if (!sep || strchr(sep, ':')) return WEFT_SUCCESS;
    *sep = '\0';
    if (parse_long(sep + 1, 0, at) != 0) return bad(rule, "has a malformed rank after '@'");
    /* A rule no rank applies would never fire: the test that set it
     * would pass without exercising anything. */
    if (*at >= nranks) {
        char why[96];
        snprintf(why, sizeof why, "names rank %ld, but the run has %d rank%s", *at, nranks,
                 nranks == 1 ? "" : "s");
        return bad(rule, why);
    }
    return WEFT_SUCCESS;
}

/* One rule, "SITE[:CLASS]:N[+][@RANK]", written into r; *mine is 1 when it
 * applies on this rank. */
static int parse_rule(char *text, int rank, int nranks, weft_fault_rule_t *r, int *mine)
{
    char rule[160];
    snprintf(rule, sizeof rule, "%s", text);
    snprintf(r->text, sizeof r->text, "%s", text);
    long at;
    int rc = parse_rank(text, rule, nranks, &at);
    if (rc != WEFT_SUCCESS) return rc;
    char *colon = strchr(text, ':'), *last = strrchr(text, ':');
    if (!colon) return bad(rule, "has no ':N'");
    *colon = '\0';
    int site = -1;
    for (int s = 0; s < WEFT_FAULT_NSITES; s++)
        if (strcmp(text, site_names[s]) == 0) site = s;
    if (site < 0) return bad(rule, "names an unknown site");
    /* mpi_coll fails a collective after it was made: on one rank alone,
     * that rank would stop making collectives while the others went into
     * the next one, and the run would hang. */
    if (site == WEFT_FAULT_MPI_COLL && at >= 0)
        return bad(rule,
                   "gives a rank to the site mpi_coll, which must fail the same "
                   "collective on every rank to keep the ranks matched (write it without '@RANK', "
                   "e.g. 'mpi_coll:2')");
    r->cls[0] = '\0';
    if (last != colon) {
        *last = '\0';
        if (site != WEFT_FAULT_TASK && site != WEFT_FAULT_TASK_SKIP &&
            site != WEFT_FAULT_DEVICE_FAIL)
            return bad(rule, "gives a class to a site other than task, task_skip and "
                             "device_fail");
        if (strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof r->cls)
            return bad(rule, "has an empty or too long class name");
        snprintf(r->cls, sizeof r->cls, "%s", colon + 1);
    }
    /* "N+": the N-th occurrence and every one after it (a fault that
     * stays, as a dead link does). */
    size_t nlen = strlen(last + 1);
    r->stays = nlen > 1 && last[nlen] == '+';
    if (r->stays) last[nlen] = '\0';
    if (parse_long(last + 1, 1, &r->nth) != 0) {
        /* Name what was read as N: "task:1@0@1" reads N as "1@0", which
         * says that the rule has one '@' too many. */
        char why[96];
        snprintf(why, sizeof why, "has a malformed count N '%.40s'%s", last + 1,
                 strchr(last + 1, '@') ? " (one '@RANK' at most)" : "");
        return bad(rule, why);
    }
    r->site = (weft_fault_site_t)site;
    atomic_init(&r->seen, 0);
    *mine = at < 0 || at == rank;
    return WEFT_SUCCESS;
}

int weft_fault_create(const char *spec, int rank, int nranks, weft_fault_t **out)
{
    *out = NULL;
    if (!spec || !*spec) return WEFT_SUCCESS;
    /* strtok skips empty rules: ",,," ran with none and said nothing. */
    size_t n = strlen(spec);
    if (spec[0] == ',' || spec[n - 1] == ',' || strstr(spec, ",,")) {
        weft_error("fault_inject: '%s' has an empty rule (a comma at an end, or two in a row): "
                   "rules are SITE[:CLASS]:N[+][@RANK], separated by single commas",
                   spec);
        return WEFT_ERR_PARAM;
    }
    weft_fault_t *f = calloc(1, sizeof *f);
    char *copy = strdup(spec);
    int rc = f && copy ? WEFT_SUCCESS : WEFT_ERR_NOMEM;
    char *save = NULL;
    for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && rc == WEFT_SUCCESS;
         tok = strtok_r(NULL, ",", &save)) {
        if (f->nrules == WEFT_FAULT_MAX_RULES) {
            weft_error("fault_inject: more than %d rules", WEFT_FAULT_MAX_RULES);
            rc = WEFT_ERR_PARAM;
            break;
        }
        int mine = 0;
        rc = parse_rule(tok, rank, nranks, &f->rule[f->nrules], &mine);
        if (rc == WEFT_SUCCESS && mine) f->armed[f->rule[f->nrules++].site] = 1;
    }
    free(copy);
    if (rc != WEFT_SUCCESS || f->nrules == 0) {
        free(f);
        return rc;
    }
    *out = f;
    return WEFT_SUCCESS;
}

void weft_fault_destroy(weft_fault_t *f) { free(f); }

void weft_fault_report_unfired(const weft_fault_t *f)
{
    for (int i = 0; f && i < f->nrules; i++) {
        const weft_fault_rule_t *r = &f->rule[i];
        long seen = atomic_load(&r->seen);
        if (seen < r->nth)
            weft_warn("fault_inject: rule '%s' never fired on this rank: it counted %ld of the %ld "
                      "occurrences it waits for%s",
                      r->text, seen, r->nth,
                      r->cls[0] && seen == 0 ? " (no task of that class was counted here)"
                                             : "");
    }
}

int weft_fault_hit_slow(weft_fault_t *f, weft_fault_site_t site, const char *cls)
{
    int hit = 0;
    for (int i = 0; i < f->nrules; i++) {
        weft_fault_rule_t *r = &f->rule[i];
        if (r->site != site || (r->cls[0] && (!cls || strcmp(r->cls, cls) != 0))) continue;
        long seen = atomic_fetch_add(&r->seen, 1) + 1;
        if (seen == r->nth || (r->stays && seen > r->nth)) hit = 1;
    }
    return hit;
}

int weft_fault_copy_hit(weft_fault_t *f, int level, int by, unsigned long long key, int src,
                        int src_rank, int dst)
{
    if (!weft_fault_hit(f, WEFT_FAULT_DEVICE_COPY, NULL)) return 0;
    /* A pull from a peer's device names the peer ("from device 1 to
     * device 1" read as a copy onto itself); src is then the local device
     * the peer's memory is mapped through, not the peer's own index. */
    char from[64];
    if (src_rank >= 0)
        snprintf(from, sizeof from, "rank %d's device (mapped through device %d)", src_rank, src);
    else
        snprintf(from, sizeof from, "device %d", src);
    weft_log(level, by, "fault_inject: the copy of data %llu from %s to device %d fails (injected)",
             key, from, dst);
    return 1;
}
