/* The files of /dev/shm that hold emulated device memory: made, found
 * stale, removed. A zone's file has a name other ranks of the node open
 * (its IPC handle) and lives until unlinked, so a process that ends
 * without its weft_fini leaves it behind, holding memory of the node. Each
 * owner holds a shared flock on its file for as long as the zone exists:
 * the kernel drops it when the process ends however it ends, so a file
 * nobody locks has no owner, whatever its name's pid says (a pid seen
 * from another PID namespace, or one reused since, told wrong both
 * ways). */
#ifndef WEFT_DEVICE_EMU_EMU_SHM_H
#define WEFT_DEVICE_EMU_EMU_SHM_H

#include <stddef.h>

#define WEFT_EMU_SHM_NAME_MAX 64

/* Makes a zone file of bytes for device type_index under a name no other
 * file has ("/weft-emu-<pid>-<device>-<serial>", into name), locked as
 * its owner's and sized; *fd is kept open by the caller until
 * weft_emu_shm_remove (it holds the lock). A stale file with the same name
 * is removed first. Returns 0 or -1 with errno set (the log names it). */
int weft_emu_shm_create(int type_index, size_t bytes, char name[WEFT_EMU_SHM_NAME_MAX], int *fd);

/* Unlinks the process's own file name (the mappings stay valid). */
void weft_emu_shm_remove(const char *name);

/* Removes the stale zone files of the node: those nobody locks whose
 * name's pid is this process's (not one of its own zones: a pid reused)
 * or no process's here. One whose pid is another live process here is
 * left alone even unlocked (a build of weft from before the lock).
 * log_device: the device index for the lines. */
void weft_emu_shm_sweep(int log_device);

/* Async-signal-safe: unlinks every file name the process owns, for an end
 * that skips weft_fini (MPI_Abort, SIGTERM, an exit with a live context):
 * the zones' memory then goes back to the node with the process. */
void weft_emu_shm_drop_owned(void);

#endif
