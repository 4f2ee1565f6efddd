/* The cuBLAS and cuSOLVER entry points that the apps' and tests' CUDA
 * bodies call, defined here under their own names and passed on to the
 * libraries, which are opened at the first call instead of linked.
 *
 * Why: linking cuBLAS costs every process 0.4 s of CPU and 200 MB of
 * memory at start (cuBLASLt's initialisers run at load), on machines with
 * no GPU too: each rank of weft-potrf -N 100 paid it, and the test suite
 * paid it in every one of its ~1000 app processes. libweft itself opens
 * both libraries only when a CUDA device opens (src/device/cuda/cuda_libs.c)
 * and by the same soname, so by the time a body runs they are loaded and
 * the dlopen here finds that copy.
 *
 * The wrappers' signatures are the headers' (a definition that disagrees
 * with cublas_v2.h or cusolverDn.h does not compile). They are local to
 * the program (the build's default visibility is hidden), so cuSOLVER's
 * own calls into cuBLAS never land here. A library that cannot be opened,
 * or lacks an entry point, is said once on stderr and its calls fail with
 * its NOT_INITIALIZED status, which the bodies turn into a task error; the
 * other library's calls still work. */
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* Each call: its library (blas or solver), return type, name, parameters
 * and the arguments that pass them on. */
#define CUDA_CALLS(X)                                                                              \
    X(blas, cublasStatus_t, cublasDgemm_v2,                                                        \
      (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,          \
       const double *alpha, const double *a, int lda, const double *b, int ldb,                    \
       const double *beta, double *c, int ldc),                                                    \
      (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))                                   \
    X(blas, cublasStatus_t, cublasDgemmBatched,                                                    \
      (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,          \
       const double *alpha, const double *const a[], int lda, const double *const b[], int ldb,    \
       const double *beta, double *const c[], int ldc, int count),                                 \
      (h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, count))                            \
    X(blas, cublasStatus_t, cublasDgeam,                                                           \
      (cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,                 \
       const double *alpha, const double *a, int lda, const double *beta, const double *b,         \
       int ldb, double *c, int ldc),                                                               \
      (h, ta, tb, m, n, alpha, a, lda, beta, b, ldb, c, ldc))                                      \
    X(blas, cublasStatus_t, cublasDscal_v2,                                                        \
      (cublasHandle_t h, int n, const double *alpha, double *x, int incx), (h, n, alpha, x, incx)) \
    X(blas, cublasStatus_t, cublasDsyrk_v2,                                                        \
      (cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t, int n, int k,                 \
       const double *alpha, const double *a, int lda, const double *beta, double *c, int ldc),     \
      (h, uplo, t, n, k, alpha, a, lda, beta, c, ldc))                                             \
    X(blas, cublasStatus_t, cublasDtrmm_v2,                                                        \
      (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t t,        \
       cublasDiagType_t diag, int m, int n, const double *alpha, const double *a, int lda,         \
       const double *b, int ldb, double *c, int ldc),                                              \
      (h, side, uplo, t, diag, m, n, alpha, a, lda, b, ldb, c, ldc))                               \
    X(blas, cublasStatus_t, cublasDtrsm_v2,                                                        \
      (cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo, cublasOperation_t t,        \
       cublasDiagType_t diag, int m, int n, const double *alpha, const double *a, int lda,         \
       double *b, int ldb),                                                                        \
      (h, side, uplo, t, diag, m, n, alpha, a, lda, b, ldb))                                       \
    X(blas, cublasStatus_t, cublasDtpttr,                                                          \
      (cublasHandle_t h, cublasFillMode_t uplo, int n, const double *ap, double *a, int lda),      \
      (h, uplo, n, ap, a, lda))                                                                    \
    X(blas, cublasStatus_t, cublasDtrttp,                                                          \
      (cublasHandle_t h, cublasFillMode_t uplo, int n, const double *a, int lda, double *ap),      \
      (h, uplo, n, a, lda, ap))                                                                    \
    X(solver, cusolverStatus_t, cusolverDnCreateParams, (cusolverDnParams_t * p), (p))             \
    X(solver, cusolverStatus_t, cusolverDnDestroyParams, (cusolverDnParams_t p), (p))              \
    X(solver, cusolverStatus_t, cusolverDnDpotrf_bufferSize,                                       \
      (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double *a, int lda, int *lwork),        \
      (h, uplo, n, a, lda, lwork))                                                                 \
    X(solver, cusolverStatus_t, cusolverDnDpotrf,                                                  \
      (cusolverDnHandle_t h, cublasFillMode_t uplo, int n, double *a, int lda, double *work,       \
       int lwork, int *info),                                                                      \
      (h, uplo, n, a, lda, work, lwork, info))                                                     \
    X(solver, cusolverStatus_t, cusolverDnDgetrf_bufferSize,                                       \
      (cusolverDnHandle_t h, int m, int n, double *a, int lda, int *lwork),                        \
      (h, m, n, a, lda, lwork))                                                                    \
    X(solver, cusolverStatus_t, cusolverDnDgetrf,                                                  \
      (cusolverDnHandle_t h, int m, int n, double *a, int lda, double *work, int *ipiv,            \
       int *info),                                                                                 \
      (h, m, n, a, lda, work, ipiv, info))                                                         \
    X(solver, cusolverStatus_t, cusolverDnDgeqrf_bufferSize,                                       \
      (cusolverDnHandle_t h, int m, int n, double *a, int lda, int *lwork),                        \
      (h, m, n, a, lda, lwork))                                                                    \
    X(solver, cusolverStatus_t, cusolverDnDgeqrf,                                                  \
      (cusolverDnHandle_t h, int m, int n, double *a, int lda, double *tau, double *work,          \
       int lwork, int *info),                                                                      \
      (h, m, n, a, lda, tau, work, lwork, info))                                                   \
    X(solver, cusolverStatus_t, cusolverDnXlarft_bufferSize,                                       \
      (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverDirectMode_t direct,                    \
       cusolverStorevMode_t storev, int64_t n, int64_t k, cudaDataType tv, const void *v,          \
       int64_t ldv, cudaDataType ttau, const void *tau, cudaDataType tt, void *t, int64_t ldt,     \
       cudaDataType tc, size_t *dev_bytes, size_t *host_bytes),                                    \
      (h, p, direct, storev, n, k, tv, v, ldv, ttau, tau, tt, t, ldt, tc, dev_bytes, host_bytes))  \
    X(solver, cusolverStatus_t, cusolverDnXlarft,                                                  \
      (cusolverDnHandle_t h, cusolverDnParams_t p, cusolverDirectMode_t direct,                    \
       cusolverStorevMode_t storev, int64_t n, int64_t k, cudaDataType tv, const void *v,          \
       int64_t ldv, cudaDataType ttau, const void *tau, cudaDataType tt, void *t, int64_t ldt,     \
       cudaDataType tc, void *dev_work, size_t dev_bytes, void *host_work, size_t host_bytes),     \
      (h, p, direct, storev, n, k, tv, v, ldv, ttau, tau, tt, t, ldt, tc, dev_work, dev_bytes,     \
       host_work, host_bytes))

#define CUDA_CALL_SLOT(lib, ret, name, params, args) ret(*name) params;
static struct {
    CUDA_CALLS(CUDA_CALL_SLOT)
    const char *(*cublasGetStatusString)(cublasStatus_t);
} calls;
#undef CUDA_CALL_SLOT

enum { CUDA_LIB_blas, CUDA_LIB_solver };
static pthread_once_t calls_once = PTHREAD_ONCE_INIT;
static atomic_int calls_ready[2]; /* per library, 1: its every slot filled; 0: not (yet) */

/* The soname first (the copy libweft or the application opened), then the
 * file this build linked against. */
static void *cuda_calls_open(const char *what, const char *soname, const char *path)
{
    void *so = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
    if (so == NULL) so = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (so == NULL)
        fprintf(stderr, "weft app: cannot load %s (%s nor %s): %s\n", what, soname, path,
                dlerror());
    return so;
}

/* dlsym's object pointer is copied into the function pointer's bytes, the
 * way POSIX allows. */
static int cuda_calls_find(void *so, const char *name, void *slot, size_t size)
{
    void *fn = so != NULL ? dlsym(so, name) : NULL;
    if (fn == NULL) {
        if (so != NULL) fprintf(stderr, "weft app: no %s in the library loaded\n", name);
        return 0;
    }
    memcpy(slot, &fn, size);
    return 1;
}

static void cuda_calls_load(void)
{
    void *blas = cuda_calls_open("cuBLAS", WEFT_APP_CUBLAS_SONAME, WEFT_APP_CUBLAS_PATH);
    void *solver = cuda_calls_open("cuSOLVER", WEFT_APP_CUSOLVER_SONAME, WEFT_APP_CUSOLVER_PATH);
    int found[2] = {1, 1};
#define CUDA_CALL_FIND(lib, ret, name, params, args)                                               \
    found[CUDA_LIB_##lib] &= cuda_calls_find(lib, #name, &calls.name, sizeof calls.name);
    CUDA_CALLS(CUDA_CALL_FIND)
#undef CUDA_CALL_FIND
    found[CUDA_LIB_blas] &=
        cuda_calls_find(blas, "cublasGetStatusString", &calls.cublasGetStatusString,
                        sizeof calls.cublasGetStatusString);
    for (int i = 0; i < 2; i++)
        atomic_store_explicit(&calls_ready[i], found[i], memory_order_release);
}

static int cuda_calls_ready(int lib)
{
    if (atomic_load_explicit(&calls_ready[lib], memory_order_acquire)) return 1;
    (void)pthread_once(&calls_once, cuda_calls_load);
    return atomic_load_explicit(&calls_ready[lib], memory_order_acquire);
}

#define CUDA_CALL_FAIL_blas CUBLAS_STATUS_NOT_INITIALIZED
#define CUDA_CALL_FAIL_solver CUSOLVER_STATUS_NOT_INITIALIZED
#define CUDA_CALL_DEFINE(lib, ret, name, params, args)                                             \
    ret name params                                                                                \
    {                                                                                              \
        return cuda_calls_ready(CUDA_LIB_##lib) ? calls.name args : CUDA_CALL_FAIL_##lib;          \
    }
CUDA_CALLS(CUDA_CALL_DEFINE)
#undef CUDA_CALL_DEFINE

const char *cublasGetStatusString(cublasStatus_t status)
{
    return cuda_calls_ready(CUDA_LIB_blas) ? calls.cublasGetStatusString(status)
                                           : "cuBLAS could not be loaded";
}
