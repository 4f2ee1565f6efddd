/*
 * apps/cuda_calls: the CUDA bodies' cuBLAS and cuSOLVER entry points,
 * opened at the first call instead of linked. Needs no GPU (the calls made
 * here run on the host):
 * - neither library is in the process before the first call;
 * - a call loads both (each found by its soname afterwards, the name
 *   libweft opens for its devices' handles) and reaches the library's own
 *   code: its status string (the wrapper's own failure would read "could
 *   not be loaded") and a cuSOLVER parameter object made and destroyed;
 *   cuBLAS refusing a NULL handle is checked too, though a wrapper that
 *   failed would return the same status.
 */
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <stdio.h>
#include <string.h>

#include "../check.h"
#include "../loaded_lib.h"

int main(void)
{
    CHECK(!loaded_lib(WEFT_TEST_CUBLAS_SONAME));
    CHECK(!loaded_lib(WEFT_TEST_CUSOLVER_SONAME));

    const char *s = cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE);
    CHECK(s != NULL && strstr(s, "cuBLAS could not be loaded") == NULL);
    printf("cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE): %s\n", s ? s : "(null)");
    CHECK(loaded_lib(WEFT_TEST_CUBLAS_SONAME));
    CHECK(loaded_lib(WEFT_TEST_CUSOLVER_SONAME));

    /* cuBLAS's own check of its handle, not the wrapper's failure (which
     * would be NOT_INITIALIZED too): the scalar is read only past it. */
    double one = 1.0, x = 2.0;
    cublasStatus_t bs = cublasDscal(NULL, 1, &one, &x, 1);
    CHECK(bs != CUBLAS_STATUS_SUCCESS);
    CHECK(x == 2.0);

    cusolverDnParams_t p = NULL;
    CHECK(cusolverDnCreateParams(&p) == CUSOLVER_STATUS_SUCCESS);
    CHECK(p != NULL);
    if (p != NULL) CHECK(cusolverDnDestroyParams(p) == CUSOLVER_STATUS_SUCCESS);
    return check_report("app_cuda_calls");
}
