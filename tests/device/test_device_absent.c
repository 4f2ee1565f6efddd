/* Asking for devices that are absent is an error of weft_init (it returns
 * NULL after naming the problem), never a silent fallback to the host. The
 * environment of the test asks for them (tests/device/stats.cmake). */
#include <stdio.h>

#include "weft/weft.h"

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (ctx) {
        fprintf(stderr, "weft_init succeeded with %d devices: expected an error\n",
                weft_ndevices(ctx));
        int rc = weft_fini(ctx);
        (void)rc;
        printf("device_absent: FAILED\n");
        return 1;
    }
    printf("device_absent: PASSED\n");
    return 0;
}
