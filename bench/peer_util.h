/* What the two cuSOLVER peers of weft-potrf (cusolver_potrf.c and
 * cusolvermg_potrf.c) share: checks of CUDA and cuSOLVER calls that print
 * the failed call and return 1 from the calling function, and the parser
 * of their numeric options. Define PEER_NAME (the program's name) before
 * including it. Header-only, plain C. */
#ifndef WEFT_BENCH_PEER_UTIL_H
#define WEFT_BENCH_PEER_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PEER_NAME
#error "define PEER_NAME before including peer_util.h"
#endif

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, PEER_NAME ": %s failed: %s\n", #call, cudaGetErrorString(e_));         \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define SOLVER_OK(call)                                                                            \
    do {                                                                                           \
        cusolverStatus_t s_ = (call);                                                              \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                       \
            fprintf(stderr, PEER_NAME ": %s failed: status %d\n", #call, (int)s_);                 \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* A whole unsigned decimal number in *v; -1 when s is anything else. */
static inline int parse_u64(const char *s, uint64_t *v)
{
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] < '0' || s[0] > '9') return -1;
    *v = x;
    return 0;
}

#endif
