/* weft on a communicator of the application's, for a program in which weft
 * is one part of a larger MPI run: coupled codes, ensembles of independent
 * runs (MPI_COMM_SELF), the group of ranks that hold the GPUs. Apart from
 * weft.h because it needs <mpi.h>. */
#ifndef WEFT_MPI_H
#define WEFT_MPI_H

#include <mpi.h>

#include <weft/weft.h>

#ifdef __cplusplus
extern "C" {
#endif

/* weft_init on the ranks of comm instead of MPI_COMM_WORLD: every rank of
 * comm calls it (a rank that never does leaves the others waiting in the
 * first step, which no watchdog covers), and weft's ranks are comm's
 * (weft_rank, WEFT_ON_RANK, owners, the ranks named in messages and in a
 * trace's peers). MPI is started (MPI_Init_thread with
 * MPI_THREAD_MULTIPLE, else weft_init_comm fails on every rank of comm and
 * says so), by the application, which finalizes it after the last
 * weft_fini, or by an earlier weft_init, in which case MPI ends with the
 * last live context of the process, this one included (so a program
 * that calls MPI itself starts MPI itself). The first step duplicates
 * comm (a collective on it: no other thread of the application may be in
 * a collective on comm meanwhile; threads may make contexts on different
 * communicators at once); everything after is as weft_init (parameters
 * from the environment and the --weft- words of argv, which the first
 * context made from that argv takes off it: threads that make contexts at
 * once each give their own argv, or the words land in whichever comes
 * first on each rank; the agreement after each step).
 * Contexts on disjoint communicators run independently; a failure in one
 * is reported on its ranks only. Log lines ("weft[N]") and
 * trace files (PREFIX.rankN.json) carry the process's rank N in
 * MPI_COMM_WORLD, so that two groups' rank 0 are told apart. A node's
 * cores and devices are dealt among the context's ranks on it, as if
 * they were the node's only processes, device memory included (each
 * context's ranks divide a shared device between themselves only): where
 * other processes of the job (another group's context, the application's
 * own) run on the node, bind the ranks (mpiexec --bind-to core: weft keeps
 * a binding) and give each its devices or share (parameters cores and
 * device_memory_limit, CUDA_VISIBLE_DEVICES).
 * NULL after an error line on this rank, without a collective, for
 * MPI_COMM_NULL (the rank is in no context: the others go on without it),
 * an intercommunicator, or MPI not started or finalized (both alike on
 * every rank of comm). Refused (NULL) from a task body. */
WEFT_API weft_context_t *weft_init_comm(MPI_Comm comm, int *argc, char ***argv);

#ifdef __cplusplus
}
#endif

#endif
