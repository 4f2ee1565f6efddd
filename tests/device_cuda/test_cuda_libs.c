/*
 * cuBLAS and cuSOLVER are loaded by the CUDA module when its first device
 * opens, not linked into libweft (device/cuda/cuda_libs.c). Needs no GPU:
 * - the libraries weft was built against load and have every entry point;
 * - a library that cannot be found is named in the error, with the
 *   loader's reason, and the call fails;
 * - a file without the entry points (libm in cuSOLVER's place) is refused
 *   naming the missing symbol;
 * - libweft itself does not pull either library into the process at start.
 */
#include <stdio.h>
#include <string.h>

#include "device/cuda/cuda_libs.h"
#include "weft/weft.h"

#include "../check.h"
#include "../loaded_lib.h"

int main(void)
{
    /* The test program links weft's objects statically and no cuBLAS, so
     * nothing has loaded them before the first try. */
    CHECK(!loaded_lib(WEFT_TEST_CUBLAS_SONAME));
    CHECK(!loaded_lib(WEFT_TEST_CUSOLVER_SONAME));

    capture_begin();
    int rc = weft_cuda__libs_try("libweft-no-such-blas.so.7", NULL);
    const char *text = capture_end();
    CHECK(rc < 0);
    CHECK(strstr(text, "CUDA devices need cuBLAS") != NULL);
    CHECK(strstr(text, "cannot load libweft-no-such-blas.so.7") != NULL);

    capture_begin();
    rc = weft_cuda__libs_try(NULL, "libm.so.6");
    text = capture_end();
    CHECK(rc < 0);
    CHECK(strstr(text, "cuSOLVER has no cusolverDnCreate") != NULL);

    CHECK(weft_cuda__libs_try(NULL, NULL) == WEFT_SUCCESS);
    CHECK(loaded_lib(WEFT_TEST_CUBLAS_SONAME));
    CHECK(loaded_lib(WEFT_TEST_CUSOLVER_SONAME));
    return check_report("cuda_libs");
}
