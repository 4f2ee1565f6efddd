/* weft_params_list: the registry behind weft-info, reachable through the
 * public API so that the tool needs no internal header. */
#include <limits.h>

#include "params/params.h"
#include "util/fault.h"
#include "weft/weft.h"

/* fault_inject is a string to the table; its rules are read at weft_init.
 * Read them here too, so that weft-info refuses a rule weft_init would
 * (the number of ranks is not known here: any rank passes). */
static int check_fault_rules(const weft_params_t *p)
{
    weft_fault_t *f = NULL;
    int rc = weft_fault_create(weft_params_str(p, "fault_inject"), 0, INT_MAX, &f);
    weft_fault_destroy(f);
    return rc;
}

WEFT_API int weft_params_list(int *argc, char ***argv, FILE *out)
{
    weft_params_t *p;
    int rc = weft_params_create(&p);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_params_load(p, argc, argv);
    if (rc == WEFT_SUCCESS) rc = check_fault_rules(p);
    if (rc == WEFT_SUCCESS && out != NULL) {
        fprintf(out, "# name, value, default, help; set with env WEFT_<NAME> or "
                     "--weft-<name>=<value>\n");
        weft_params_print(p, out);
    }
    weft_params_destroy(p);
    return rc;
}
