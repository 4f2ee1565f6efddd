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

#define SHM_DIR "/dev/shm"
/* The owner's pid first, so that a sweep can ask whether it lives. */
#define SHM_PREFIX "weft-emu-"
/* Zones a process owns at once: its devices' (one each, a context). */
#define OWNED_MAX 128

/* The paths of the process's own files, for weft_emu_shm_drop_owned: a
 * slot is 0 free, 1 being written, 2 holding a path; with the pid that
 * made it (a child forked by the application inherits the table, and its
 * end must not unlink its parent's live zones). */
static atomic_int owned_state[OWNED_MAX];
static long owned_pid[OWNED_MAX];
static char owned_path[OWNED_MAX][sizeof SHM_DIR + WEFT_EMU_SHM_NAME_MAX];

static void own(const char *name)
{
    for (int i = 0; i < OWNED_MAX; i++) {
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&owned_state[i], &free_slot, 1)) continue;
        snprintf(owned_path[i], sizeof owned_path[i], SHM_DIR "%s", name);
        owned_pid[i] = (long)getpid();
        atomic_store(&owned_state[i], 2);
        return;
    }
    /* Past OWNED_MAX an abnormal end leaves the file to the next sweep. */
}

static int owned_slot(const char *name)
{
    long me = (long)getpid();
    for (int i = 0; i < OWNED_MAX; i++)
        if (atomic_load(&owned_state[i]) == 2 && owned_pid[i] == me &&
            strcmp(owned_path[i] + sizeof SHM_DIR - 1, name) == 0)
            return i;
    return -1;
}

void weft_emu_shm_drop_owned(void)
{
    long me = (long)getpid(); /* async-signal-safe */
    for (int i = 0; i < OWNED_MAX; i++)
        if (atomic_load(&owned_state[i]) == 2 && owned_pid[i] == me) unlink(owned_path[i]);
}

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
    if (pid == (long)getpid()) return owned_slot(name) < 0 && unlocked(name);
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) return 0;
    return unlocked(name);
}

void weft_emu_shm_sweep(int log_device)
{
    DIR *dir = opendir(SHM_DIR);
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
                     SHM_DIR, name, pid);
    }
    closedir(dir);
}

/* Whether the name still leads to the file fd has open. */
static int still_named(int fd, const char *name)
{
    char path[sizeof SHM_DIR + WEFT_EMU_SHM_NAME_MAX];
    struct stat mine, named;
    snprintf(path, sizeof path, SHM_DIR "%s", name);
    return fstat(fd, &mine) == 0 && stat(path, &named) == 0 && mine.st_ino == named.st_ino &&
           mine.st_dev == named.st_dev;
}

int weft_emu_shm_create(int type_index, size_t bytes, char name[WEFT_EMU_SHM_NAME_MAX], int *fd_out)
{
    static atomic_uint serial;
    weft_ending_add(weft_emu_shm_drop_owned);
    /* Unique per process, device and zone, so that tests running side by
     * side and several contexts in one process never collide; a name
     * taken by a stale file (this pid's before, in another PID namespace
     * or before the pid was reused) is freed, one a live owner holds
     * skipped. */
    for (int tries = 0; tries < 16; tries++) {
        snprintf(name, WEFT_EMU_SHM_NAME_MAX, "/" SHM_PREFIX "%ld-%d-%u", (long)getpid(),
                 type_index, atomic_fetch_add(&serial, 1));
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 && errno == EEXIST) {
            if (owned_slot(name) < 0 && unlocked(name)) shm_unlink(name);
            continue;
        }
        if (fd < 0) return -1;
        if (flock(fd, LOCK_SH) != 0) {
            int err = errno;
            close(fd);
            shm_unlink(name);
            errno = err;
            return -1;
        }
        /* Until the lock, a sweep in another PID namespace (where this pid
         * is no process) could take the file for stale and unlink it: the
         * name must still be this file's, else another name is tried. */
        if (!still_named(fd, name)) {
            close(fd);
            continue;
        }
        if (ftruncate(fd, (off_t)bytes) != 0) {
            int err = errno;
            close(fd);
            shm_unlink(name);
            errno = err;
            return -1;
        }
        own(name);
        *fd_out = fd;
        return 0;
    }
    errno = EEXIST;
    return -1;
}

void weft_emu_shm_remove(const char *name)
{
    int i = owned_slot(name);
    if (i >= 0) atomic_store(&owned_state[i], 0);
    shm_unlink(name);
}
