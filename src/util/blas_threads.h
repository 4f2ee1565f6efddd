/* The BLAS library's own thread count, set without linking a BLAS: libweft
 * finds OpenBLAS, MKL or BLIS in the process at run time (dlsym), so an
 * application links the BLAS it likes, or none. */
#ifndef WEFT_UTIL_BLAS_THREADS_H
#define WEFT_UTIL_BLAS_THREADS_H

/* What weft_blas_threads_single changed, to be undone by
 * weft_blas_threads_restore. */
typedef struct weft_blas_threads {
    const char *library; /* "openblas", "mkl", "blis", or NULL: none found */
    int saved;           /* the library's thread count before */
} weft_blas_threads_t;

/* Sets the thread count of the BLAS found in the process to 1 (the task
 * workers are the threads) and records the old count in *out. With no BLAS
 * loaded it changes nothing (out->library NULL). */
void weft_blas_threads_single(weft_blas_threads_t *out);
void weft_blas_threads_restore(const weft_blas_threads_t *saved);

#endif
