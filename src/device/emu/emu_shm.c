/* The files of emulated device memory in /dev/shm (emu_shm.h). */
#include "device/emu/emu_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/ending.h"
#include "util/log.h"

/* The owner's pid first, so that a sweep can ask whether it lives. */
#define SHM_PREFIX "weft-emu-"

/* Whether nobody holds the lock of the file called name (its owner ended):
 * a try at the exclusive lock, given back at once. */
static int unlocked(const char *name)
{
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) return 0; /* gone, or another user's */
    int free_lock = flock(fd, LOCK_EX | LOCK_NB) == 0;
    close(fd);
    return free_lock;
}

/* Whether the file called name (pid: its name's) has no owner (the
 * rule of weft_emu_shm_sweep). */
static int stale(const char *name, long pid)
{
    /* This process's own zones are locked through their own descriptors,
     * which a second open's exclusive try runs into. */
    if (pid != (long)getpid() && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) return 0;
    return unlocked(name);
}

void weft_emu_shm_sweep(int log_device)
{
    DIR *dir = opendir(WEFT_EMU_SHM_DIR);
    if (!dir) return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        long pid = 0;
        char name[300];
        if (strncmp(e->d_name, SHM_PREFIX, sizeof SHM_PREFIX - 1) != 0 ||
            sscanf(e->d_name + sizeof SHM_PREFIX - 1, "%ld-", &pid) != 1 || pid <= 0)
            continue;
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (stale(name, pid) && shm_unlink(name) == 0)
            weft_log(WEFT_LOG_INFO, log_device,
                     "emu: removed %s%s, left by process %ld, which ended without removing it",
                     WEFT_EMU_SHM_DIR, name, pid);
    }
    closedir(dir);
}

/* Whether path still leads to the file fd has open. */
static int still_named(int fd, const char *path)
{
    struct stat mine, named;
    return fstat(fd, &mine) == 0 && stat(path, &named) == 0 && mine.st_ino == named.st_ino &&
           mine.st_dev == named.st_dev;
}

int weft_emu_shm_create(int type_index, size_t bytes, weft_emu_shm_t *z)
{
    static atomic_uint serial;
    z->fd = -1;
    /* Unique per process, device and zone, so that tests running side by
     * side and several contexts in one process never collide; a name
     * taken by a stale file (this pid's before, in another PID namespace
     * or before the pid was reused) is freed, one a live owner holds
     * skipped. */
    for (int tries = 0; tries < 16; tries++) {
        snprintf(z->name, sizeof z->name, "/" SHM_PREFIX "%ld-%d-%u", (long)getpid(), type_index,
                 atomic_fetch_add(&serial, 1));
        snprintf(z->path, sizeof z->path, WEFT_EMU_SHM_DIR "%s", z->name);
        int fd = shm_open(z->name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 && errno == EEXIST) {
            if (unlocked(z->name)) shm_unlink(z->name);
            continue;
        }
        if (fd < 0) return -1;
        if (flock(fd, LOCK_SH) != 0) {
            int err = errno;
            close(fd);
            shm_unlink(z->name);
            errno = err;
            return -1;
        }
        /* Until the lock, a sweep in another PID namespace (where this pid
         * is no process) could take the file for stale and unlink it: the
         * name must still be this file's, else another name is tried. */
        if (!still_named(fd, z->path)) {
            close(fd);
            continue;
        }
        if (ftruncate(fd, (off_t)bytes) != 0) {
            int err = errno;
            close(fd);
            shm_unlink(z->name);
            errno = err;
            return -1;
        }
        z->fd = fd;
        weft_ending_unlink(z->path);
        return 0;
    }
    errno = EEXIST;
    return -1;
}

void weft_emu_shm_remove(weft_emu_shm_t *z)
{
    if (z->fd < 0) return;
    weft_ending_forget(z->path);
    /* Unlinked before the lock goes with the descriptor. */
    shm_unlink(z->name);
    close(z->fd);
    z->fd = -1;
}
