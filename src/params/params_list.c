/* weft_params_list: the registry behind weft-info, reachable through the
 * public API so that the tool needs no internal header. */
#include "params/params.h"
#include "weft/weft.h"

WEFT_API int weft_params_list(int *argc, char ***argv, FILE *out)
{
    weft_params_t *p;
    int rc = weft_params_create(&p);
    if (rc != WEFT_SUCCESS) return rc;
    rc = weft_params_load(p, argc, argv);
    if (rc == WEFT_SUCCESS && out != NULL) {
        fprintf(out, "# name, value, default, help; set with env WEFT_<NAME> or "
                     "--weft-<name>=<value>\n");
        weft_params_print(p, out);
    }
    weft_params_destroy(p);
    return rc;
}
