/* util/fault.h: the rule parser. "N+" fails every occurrence from the
 * N-th on. A class name may hold ':' and '@' (the
 * rank is only a last '@' followed by digits and no ':'); a rule for this
 * rank arms its site, one for another rank does not; malformed rules are
 * refused. */
#include "../check.h"
#include "util/fault.h"
#include "weft/weft.h"

static weft_fault_t *parse(const char *spec, int rank)
{
    weft_fault_t *f = NULL;
    CHECK(weft_fault_create(spec, rank, 2, &f) == WEFT_SUCCESS);
    return f;
}

static void check_refused(const char *spec)
{
    weft_fault_t *f = (weft_fault_t *)1;
    CHECK(weft_fault_create(spec, 0, 2, &f) == WEFT_ERR_PARAM);
    CHECK(f == NULL);
}

int main(void)
{
    weft_fault_t *f = parse("task:a:b:2", 0);
    CHECK(f && f->nrules == 1 && strcmp(f->rule[0].cls, "a:b") == 0 && f->rule[0].nth == 2);
    CHECK(!weft_fault_hit(f, WEFT_FAULT_TASK, "a:b") && weft_fault_hit(f, WEFT_FAULT_TASK, "a:b"));
    weft_fault_destroy(f);

    f = parse("task:a@b:2", 0);
    CHECK(f && strcmp(f->rule[0].cls, "a@b") == 0 && f->rule[0].nth == 2);
    weft_fault_destroy(f);

    f = parse("task:x@y:3@1", 1); /* class "x@y", rank 1 */
    CHECK(f && strcmp(f->rule[0].cls, "x@y") == 0 && f->rule[0].nth == 3);
    CHECK(f->armed[WEFT_FAULT_TASK]);
    weft_fault_destroy(f);
    CHECK(parse("task:x@y:3@1", 0) == NULL); /* not this rank's: nothing armed */

    f = parse("comm_post:1,task:1@0", 0);
    CHECK(f && f->nrules == 2 && f->rule[1].cls[0] == '\0');
    weft_fault_destroy(f);

    /* "N+": the N-th occurrence and every later one; "+" alone is no count. */
    f = parse("comm_post:2+@1", 1);
    CHECK(f && f->rule[0].nth == 2 && f->rule[0].stays);
    CHECK(!weft_fault_hit(f, WEFT_FAULT_COMM_POST, NULL));
    for (int i = 0; i < 5; i++) CHECK(weft_fault_hit(f, WEFT_FAULT_COMM_POST, NULL));
    weft_fault_destroy(f);
    f = parse("task:c+:1", 0); /* a '+' in a class name is the class's */
    CHECK(f && strcmp(f->rule[0].cls, "c+") == 0 && !f->rule[0].stays);
    CHECK(weft_fault_hit(f, WEFT_FAULT_TASK, "c+") && !weft_fault_hit(f, WEFT_FAULT_TASK, "c+"));
    weft_fault_destroy(f);
    check_refused(",,,"); /* empty rules: strtok skipped them, no rule and no word */
    check_refused("task:1,");
    check_refused(",task:1");
    check_refused("task:1,,comm_post:1");
    check_refused("task:+");
    check_refused("task:1++");
    check_refused("task:2@2");        /* rank 2 of 2 */
    check_refused("task:2@x");        /* rank not a number: "2@x" is no count */
    check_refused("bogus:1");         /* unknown site */
    check_refused("task");            /* no count */
    check_refused("task:0");          /* count below 1 */
    check_refused("comm_post:cls:1"); /* a class on a site without classes */
    check_refused("task::1");         /* empty class */
    /* A rule that never fired is said at the end (a PASSED run would
     * otherwise read as a fault tolerated); one that fired is not. */
    f = parse("task:nosuch:1,task:2", 0);
    CHECK(!weft_fault_hit(f, WEFT_FAULT_TASK, "other") && weft_fault_hit(f, WEFT_FAULT_TASK, "x"));
    capture_begin();
    weft_fault_report_unfired(f);
    const char *said = capture_end();
    CHECK(strstr(said, "rule 'task:nosuch:1' never fired on this rank: it counted 0 of the 1 "
                       "occurrences it waits for (no task of that class was counted here)") != NULL);
    CHECK(strstr(said, "'task:2'") == NULL);
    weft_fault_destroy(f);

    /* mpi_coll on one rank alone would leave the others in the next
     * collective: a hang. Every rank fails it, or none. */
    f = parse("mpi_coll:2", 0);
    CHECK(f && f->armed[WEFT_FAULT_MPI_COLL]);
    weft_fault_destroy(f);
    capture_begin();
    check_refused("mpi_coll:2@1");
    CHECK(strstr(capture_end(), "gives a rank to the site mpi_coll") != NULL);

    capture_begin();
    check_refused("task:a:b:1@9");
    CHECK(strstr(capture_end(), "names rank 9, but the run has 2 ranks") != NULL);
    return check_report("util_fault");
}
