/* Loaded with LD_PRELOAD into one rank: failures that rank's process meets
 * in its libraries, where fault_inject cannot reach (MPI, the C library).
 * Nothing fails before the program calls weft_test_preload_arm (found by
 * dlsym), so that weft_init's own calls and allocations, whatever they are,
 * neither fail nor count. Environment:
 * - WEFT_TEST_IALLREDUCE_FAIL=N: the N-th MPI_Iallreduce (1-based) since
 *   the arming returns
 *   MPI_ERR_OTHER without joining the collective, as Open MPI does when it
 *   cannot build the operation's schedule (out of memory): this rank sees
 *   the error, the others wait in the collective;
 * - WEFT_TEST_ABORT_EXITS=1: MPI_Abort calls exit(code) instead, as Open
 *   MPI's did when its own abort ran out of memory;
 * - WEFT_TEST_ALIGNED_ALLOC_FAIL=1: every aligned_alloc since the arming
 *   returns NULL (ENOMEM), as under a memory limit.
 * Every other call goes to the library: MPI through its profiling names,
 * aligned_alloc through the next definition. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static int env_is(const char *name, int value)
{
    const char *v = getenv(name);
    return v && atoi(v) == value;
}

static atomic_int armed, iallreduce_calls;

__attribute__((visibility("default"))) void weft_test_preload_arm(void)
{
    atomic_store(&iallreduce_calls, 0);
    atomic_store(&armed, 1);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, MPI_Request *req)
{
    const char *at = getenv("WEFT_TEST_IALLREDUCE_FAIL");
    if (at && atomic_load(&armed) && atomic_fetch_add(&iallreduce_calls, 1) + 1 == atoi(at))
        return MPI_ERR_OTHER;
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, req);
}

int MPI_Abort(MPI_Comm comm, int code)
{
    if (env_is("WEFT_TEST_ABORT_EXITS", 1)) exit(code);
    return PMPI_Abort(comm, code);
}

/* Exported despite the build's hidden default (mpi.h marks MPI's own). */
__attribute__((visibility("default"))) void *aligned_alloc(size_t align, size_t size)
{
    if (atomic_load(&armed) && env_is("WEFT_TEST_ALIGNED_ALLOC_FAIL", 1)) {
        errno = ENOMEM;
        return NULL;
    }
    void *(*next)(size_t, size_t);
    void *sym = dlsym(RTLD_NEXT, "aligned_alloc");
    memcpy(&next, &sym, sizeof next); /* an object pointer's bytes, as POSIX allows */
    return next ? next(align, size) : NULL;
}
