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
 *   returns NULL (ENOMEM), as under a memory limit;
 * - WEFT_TEST_TAG_UB=N (armed or not): MPI_TAG_UB reads N, as with an MPI
 *   that has few tags (the standard's least is 32767);
 * - WEFT_TEST_TAG_CHECK=T (armed or not): the receives of tags >= T are
 *   followed until MPI_Testsome sees them end, and one posted while
 *   another from the same rank with the same tag is still posted (either
 *   may get the other's message) ends the job, saying so.
 * Every other call goes to the library: MPI through its profiling names,
 * aligned_alloc through the next definition. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
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

int MPI_Comm_get_attr(MPI_Comm comm, int key, void *value, int *flag)
{
    static int tag_ub;
    int rc = PMPI_Comm_get_attr(comm, key, value, flag);
    const char *ub = getenv("WEFT_TEST_TAG_UB");
    if (rc == MPI_SUCCESS && key == MPI_TAG_UB && ub && *flag) {
        tag_ub = atoi(ub);
        *(int **)value = &tag_ub;
    }
    return rc;
}

/* The receives followed (WEFT_TEST_TAG_CHECK): posted and not seen ending. */
typedef struct {
    MPI_Request req;
    MPI_Comm comm;
    int source, tag;
} posted_t;

static pthread_mutex_t posted_lock = PTHREAD_MUTEX_INITIALIZER;
static posted_t *posted;
static size_t nposted, posted_cap;

static int tag_checked(int tag)
{
    const char *from = getenv("WEFT_TEST_TAG_CHECK");
    return from && tag >= atoi(from);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    int rc = PMPI_Irecv(buf, count, type, source, tag, comm, req);
    if (rc != MPI_SUCCESS || !tag_checked(tag)) return rc;
    pthread_mutex_lock(&posted_lock);
    for (size_t i = 0; i < nposted; i++) {
        int same = MPI_UNEQUAL;
        if (posted[i].source == source && posted[i].tag == tag)
            PMPI_Comm_compare(posted[i].comm, comm, &same);
        if (same == MPI_IDENT) {
            int me = 0;
            PMPI_Comm_rank(MPI_COMM_WORLD, &me);
            fprintf(stderr,
                    "fail_preload: rank %d posted a receive of tag %d from rank %d while "
                    "another of that tag from that rank is still posted\n",
                    me, tag, source);
            fflush(stderr);
            PMPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
    if (nposted == posted_cap) {
        posted_cap = posted_cap ? 2 * posted_cap : 1024;
        posted = realloc(posted, posted_cap * sizeof *posted);
        if (!posted) PMPI_Abort(MPI_COMM_WORLD, 4);
    }
    posted[nposted++] = (posted_t){*req, comm, source, tag};
    pthread_mutex_unlock(&posted_lock);
    return rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *done, int idx[], MPI_Status statuses[])
{
    if (!getenv("WEFT_TEST_TAG_CHECK")) return PMPI_Testsome(n, reqs, done, idx, statuses);
    /* The handles before the call: those that end are set to NULL. */
    MPI_Request *before = malloc((size_t)(n > 0 ? n : 1) * sizeof *before);
    if (!before) PMPI_Abort(MPI_COMM_WORLD, 4);
    memcpy(before, reqs, (size_t)n * sizeof *before);
    int rc = PMPI_Testsome(n, reqs, done, idx, statuses);
    pthread_mutex_lock(&posted_lock);
    for (int k = 0; *done != MPI_UNDEFINED && k < *done; k++)
        for (size_t i = 0; i < nposted; i++)
            if (posted[i].req == before[idx[k]]) {
                posted[i] = posted[--nposted];
                break;
            }
    pthread_mutex_unlock(&posted_lock);
    free(before);
    return rc;
}
