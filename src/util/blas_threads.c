/* BLAS thread control by symbol lookup (util/blas_threads.h): no BLAS is a
 * link dependency of libweft (issue 15 item 11). */
#include "util/blas_threads.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The libraries' setters and getters differ in the integer they take: int
 * for OpenBLAS and MKL, BLIS's dim_t (int64_t in its default builds). */
typedef void (*set_int_fn)(int);
typedef int (*get_int_fn)(void);
typedef void (*set_i64_fn)(int64_t);
typedef int64_t (*get_i64_fn)(void);

/* A function pointer from dlsym goes through memcpy: ISO C has no cast
 * between object and function pointers. */
static int lookup(const char *name, void *fn, size_t size)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    if (sym == NULL) return 0;
    memcpy(fn, &sym, size);
    return 1;
}

static int set_count(const char *library, int n)
{
    set_int_fn set_int;
    set_i64_fn set_i64;
    if (library[0] == 'o' && lookup("openblas_set_num_threads", &set_int, sizeof set_int)) {
        set_int(n);
        return 1;
    }
    if (library[0] == 'm' && lookup("MKL_Set_Num_Threads", &set_int, sizeof set_int)) {
        set_int(n);
        return 1;
    }
    if (library[0] == 'b' && lookup("bli_thread_set_num_threads", &set_i64, sizeof set_i64)) {
        set_i64(n);
        return 1;
    }
    return 0;
}

void weft_blas_threads_single(weft_blas_threads_t *out)
{
    get_int_fn get_int;
    get_i64_fn get_i64;
    out->library = NULL;
    out->saved = 1;
    if (lookup("openblas_get_num_threads", &get_int, sizeof get_int)) {
        out->library = "openblas";
        out->saved = get_int();
    } else if (lookup("MKL_Get_Max_Threads", &get_int, sizeof get_int)) {
        out->library = "mkl";
        out->saved = get_int();
    } else if (lookup("bli_thread_get_num_threads", &get_i64, sizeof get_i64)) {
        out->library = "blis";
        out->saved = (int)get_i64();
    }
    if (out->library != NULL && !set_count(out->library, 1)) out->library = NULL;
}

void weft_blas_threads_restore(const weft_blas_threads_t *saved)
{
    if (saved->library != NULL) (void)set_count(saved->library, saved->saved);
}
