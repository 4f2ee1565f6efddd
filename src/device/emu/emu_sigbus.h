/* Emulated device memory is files of /dev/shm, sized but not filled when
 * made: a page first touched once that file system is full cannot be
 * backed, and the kernel ends the process with SIGBUS, which said nothing
 * of why (a stranger filled /dev/shm under a running emu job). The zones
 * and their mappings in other ranks are watched: a SIGBUS inside one
 * writes a line naming the cause before the process ends by the signal as
 * it would have. */
#ifndef WEFT_DEVICE_EMU_SIGBUS_H
#define WEFT_DEVICE_EMU_SIGBUS_H

#include <stddef.h>

/* Watches [base, base + bytes); the handler is installed with the first
 * watch, in front of the action it finds (the default, MPI's or the
 * application's, which then runs as before), unless SIGBUS is ignored. */
void weft_emu_sigbus_watch(void *base, size_t bytes);

/* Stops watching the mapping at base (before it is unmapped). */
void weft_emu_sigbus_unwatch(void *base);

#endif
