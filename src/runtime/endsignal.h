/* A rank ended by the launcher (SIGTERM, as mpirun ends the others when
 * one rank aborts the job) says so in a line of its own. Process-wide. */
#ifndef WEFT_RUNTIME_ENDSIGNAL_H
#define WEFT_RUNTIME_ENDSIGNAL_H

/* Installs the line's handler unless SIGTERM has a handler already. */
void weft_endsignal_install(int rank);

/* Restores SIGTERM's action from before the install. */
void weft_endsignal_remove(void);

#endif
