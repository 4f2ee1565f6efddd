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

#define WEFT_EMU_SHM_DIR "/dev/shm"
#define WEFT_EMU_SHM_NAME_MAX 64

/* One zone's file. */
typedef struct weft_emu_shm {
    char name[WEFT_EMU_SHM_NAME_MAX]; /* "/weft-emu-<pid>-<device>-<serial>": the IPC handle */
    char path[sizeof WEFT_EMU_SHM_DIR + WEFT_EMU_SHM_NAME_MAX]; /* where an end without
                                                                  weft_fini unlinks it */
    int fd; /* open while the zone lives: it holds the lock; -1 none */
} weft_emu_shm_t;

/* Makes a zone file of bytes for device type_index under a name no other
 * file has, locked as its owner's and sized, into *z (kept where it is
 * until weft_emu_shm_remove: util/ending.h holds its path). A stale file
 * with the same name is removed first. Returns 0, or -1 with errno set
 * and z->fd -1. */
int weft_emu_shm_create(int type_index, size_t bytes, weft_emu_shm_t *z);

/* Unlinks the zone's file name (the mappings stay valid), then closes its
 * descriptor, which drops the lock; z then holds none. */
void weft_emu_shm_remove(weft_emu_shm_t *z);

/* Removes the stale zone files of the node: those nobody locks whose
 * name's pid is this process's (its own are locked: a pid reused) or no
 * process's here. One whose pid is another live process here is left
 * alone even unlocked (a build of weft from before the lock). log_device:
 * the device index for the lines. */
void weft_emu_shm_sweep(int log_device);

#endif
