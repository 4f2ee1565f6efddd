/* A rank ended by the launcher (SIGTERM, as mpirun ends the others when
 * one rank aborts the job) says so in a line of its own. Process-wide. */
#ifndef WEFT_RUNTIME_ENDSIGNAL_H
#define WEFT_RUNTIME_ENDSIGNAL_H

/* Installs the handler on each ending signal whose action is the default;
 * once installed, a call only names rank in the line. Called before
 * MPI_Init where weft starts MPI: a library MPI loads may put its own
 * handlers there (LLVM's, through Open MPI's components, on Ubuntu 24.04),
 * which restore the one they found before they end the process. */
void weft_endsignal_install(int rank);

/* Restores SIGTERM's action from before the install. */
void weft_endsignal_remove(void);

#endif
