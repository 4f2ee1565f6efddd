/* weft_init on ranks given different parameters: the ranks where it fails
 * and the others must all get NULL, each printing the failing rank's
 * message (checked by run_expect.sh), and return within 10 s. With no
 * failure the context must come up and go down cleanly. */
#include <stdio.h>
#include <stdlib.h>

#include "elapsed.h"
#include "weft/weft.h"

int main(int argc, char **argv)
{
    elapsed_start();
    int rank = elapsed_rank();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) {
        printf("test_init_fail rank %d: weft_init returned NULL\n", rank);
        return 2;
    }
    int rc = weft_fini(ctx);
    printf("test_init_fail rank %d: weft_init returned a context, weft_fini %d\n", rank, rc);
    return rc != 0;
}
