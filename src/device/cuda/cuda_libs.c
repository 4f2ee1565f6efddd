/* CUDA module: the cuBLAS and cuSOLVER handles of each execution stream,
 * and their errors turned into weft statuses.
 *
 * Both libraries are opened with dlopen when the first CUDA device opens,
 * not linked: loading them costs every process 0.4-0.7 s of CPU at start
 * (cuBLAS pulls in cuBLASLt, half a gigabyte whose initialisers run at
 * load), which a CUDA build of weft would otherwise charge to runs without
 * a GPU and to each rank of a test suite. An application whose own bodies
 * call cuBLAS has them loaded already; dlopen then finds the same copy. */
#include "device/cuda/cuda_libs.h"

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "util/log.h"

/* The entry points weft calls, by their exported names (cublas_v2.h maps
 * cublasCreate and friends to the _v2 symbols). */
typedef struct {
    cublasStatus_t (*blas_create)(cublasHandle_t *);
    cublasStatus_t (*blas_set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*blas_destroy)(cublasHandle_t);
    const char *(*blas_status_string)(cublasStatus_t);
    const char *(*blas_status_name)(cublasStatus_t);
    cusolverStatus_t (*solver_create)(cusolverDnHandle_t *);
    cusolverStatus_t (*solver_set_stream)(cusolverDnHandle_t, cudaStream_t);
    cusolverStatus_t (*solver_destroy)(cusolverDnHandle_t);
} cuda_libs_t;

static cuda_libs_t libs;
static int libs_rc = WEFT_ERR_INTERNAL;
static pthread_once_t libs_once = PTHREAD_ONCE_INIT;

/* Opens the first of names[0], names[1] (either may be NULL) that loads;
 * on failure logs both and the loader's reason for the last. */
static void *cuda_lib_open(const char *what, const char *const names[2])
{
    const char *why = "no file name";
    for (int i = 0; i < 2; i++) {
        if (names[i] == NULL || names[i][0] == '\0') continue;
        void *so = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (so != NULL) return so;
        why = dlerror();
    }
    weft_log(WEFT_LOG_ERROR, -1, "CUDA devices need %s for their streams: cannot load %s%s%s (%s)",
             what, names[0] ? names[0] : "", names[0] && names[1] ? " nor " : "",
             names[1] ? names[1] : "", why ? why : "?");
    return NULL;
}

/* Each entry point: in which library (0 cuBLAS, 1 cuSOLVER), its name,
 * its slot. dlsym's object pointer is copied into the function pointer's
 * bytes, the way POSIX allows. */
static const struct {
    int solver;
    const char *name;
    size_t at;
} cuda_syms[] = {
    {0, "cublasCreate_v2", offsetof(cuda_libs_t, blas_create)},
    {0, "cublasSetStream_v2", offsetof(cuda_libs_t, blas_set_stream)},
    {0, "cublasDestroy_v2", offsetof(cuda_libs_t, blas_destroy)},
    {0, "cublasGetStatusString", offsetof(cuda_libs_t, blas_status_string)},
    {0, "cublasGetStatusName", offsetof(cuda_libs_t, blas_status_name)},
    {1, "cusolverDnCreate", offsetof(cuda_libs_t, solver_create)},
    {1, "cusolverDnSetStream", offsetof(cuda_libs_t, solver_set_stream)},
    {1, "cusolverDnDestroy", offsetof(cuda_libs_t, solver_destroy)},
};
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers fit in a void *");

/* Loads cuBLAS from the first of blas[0..1] that loads and cuSOLVER alike,
 * and fills *out with their entry points. */
static int cuda_libs_load(const char *const blas[2], const char *const solver[2], cuda_libs_t *out)
{
    void *so[2] = {cuda_lib_open("cuBLAS", blas), cuda_lib_open("cuSOLVER", solver)};
    if (so[0] == NULL || so[1] == NULL) return WEFT_ERR_INTERNAL;
    for (size_t i = 0; i < sizeof cuda_syms / sizeof cuda_syms[0]; i++) {
        void *fn = dlsym(so[cuda_syms[i].solver], cuda_syms[i].name);
        if (fn == NULL) {
            weft_log(WEFT_LOG_ERROR, -1, "%s has no %s: not the %s weft was built for",
                     cuda_syms[i].solver ? "cuSOLVER" : "cuBLAS", cuda_syms[i].name,
                     cuda_syms[i].solver ? "cuSOLVER " WEFT_CUSOLVER_SONAME
                                         : "cuBLAS " WEFT_CUBLAS_SONAME);
            return WEFT_ERR_INTERNAL;
        }
        memcpy((char *)out + cuda_syms[i].at, &fn, sizeof fn);
    }
    return WEFT_SUCCESS;
}

static void cuda_libs_load_once(void)
{
    /* The soname first, so that the copy an application linked is the one
     * found; then the file the build linked against. */
    const char *const blas[2] = {WEFT_CUBLAS_SONAME, WEFT_CUBLAS_PATH};
    const char *const solver[2] = {WEFT_CUSOLVER_SONAME, WEFT_CUSOLVER_PATH};
    libs_rc = cuda_libs_load(blas, solver, &libs);
}

int weft_cuda__libs_try(const char *blas, const char *solver)
{
    const char *const b[2] = {blas ? blas : WEFT_CUBLAS_SONAME, blas ? NULL : WEFT_CUBLAS_PATH};
    const char *const s[2] = {solver ? solver : WEFT_CUSOLVER_SONAME,
                              solver ? NULL : WEFT_CUSOLVER_PATH};
    cuda_libs_t tried;
    return cuda_libs_load(b, s, &tried);
}

static int cuda_dev_index(const weft_device_t *dev) { return dev ? dev->index : -1; }

static int cuda_check_blas(const weft_device_t *dev, cublasStatus_t st, const char *call)
{
    if (st == CUBLAS_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (%s)", call,
             libs.blas_status_string(st), libs.blas_status_name(st));
    if (st == CUBLAS_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUBLAS_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

/* cuSOLVER has no status strings of its own. */
static const char *cuda_solver_message(cusolverStatus_t st)
{
    switch (st) {
    case CUSOLVER_STATUS_NOT_INITIALIZED:
        return "the cuSOLVER library was not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED:
        return "resource allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE:
        return "an unsupported value or parameter was passed";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
        return "the device does not support this operation";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
        return "the GPU program failed to execute";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
        return "an internal cuSOLVER operation failed";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
        return "not supported";
    case CUSOLVER_STATUS_INVALID_WORKSPACE:
        return "invalid workspace";
    default:
        return "cuSOLVER error";
    }
}

static int cuda_check_solver(const weft_device_t *dev, cusolverStatus_t st, const char *call)
{
    if (st == CUSOLVER_STATUS_SUCCESS) return WEFT_SUCCESS;
    weft_log(WEFT_LOG_ERROR, cuda_dev_index(dev), "%s failed: %s (cusolverStatus_t %d)", call,
             cuda_solver_message(st), (int)st);
    if (st == CUSOLVER_STATUS_ALLOC_FAILED) return WEFT_ERR_DEVMEM;
    return st == CUSOLVER_STATUS_INVALID_VALUE ? WEFT_ERR_INVALID : WEFT_ERR_INTERNAL;
}

int weft_cuda__libs_open(const weft_device_t *dev, void *stream, void **blas, void **solver)
{
    (void)pthread_once(&libs_once, cuda_libs_load_once);
    if (libs_rc != WEFT_SUCCESS) return libs_rc;
    cublasHandle_t b = NULL;
    cusolverDnHandle_t s = NULL;
    int rc = cuda_check_blas(dev, libs.blas_create(&b), "cublasCreate");
    if (rc == WEFT_SUCCESS) {
        *blas = b;
        rc = cuda_check_blas(dev, libs.blas_set_stream(b, stream), "cublasSetStream");
    }
    if (rc == WEFT_SUCCESS) rc = cuda_check_solver(dev, libs.solver_create(&s), "cusolverDnCreate");
    if (rc == WEFT_SUCCESS) {
        *solver = s;
        rc = cuda_check_solver(dev, libs.solver_set_stream(s, stream), "cusolverDnSetStream");
    }
    return rc;
}

void weft_cuda__libs_close(const weft_device_t *dev, void *blas, void *solver)
{
    if (solver != NULL)
        (void)cuda_check_solver(dev, libs.solver_destroy(solver), "cusolverDnDestroy");
    if (blas != NULL) (void)cuda_check_blas(dev, libs.blas_destroy(blas), "cublasDestroy");
}
