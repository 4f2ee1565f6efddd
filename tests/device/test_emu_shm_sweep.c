/* Emulated device memory left by a killed process (issue 13, item 11): a
 * child opens an emu device (its zone is a POSIX shared-memory segment
 * named after its pid) and is killed with SIGKILL, so nothing releases the
 * segment: it is still in /dev/shm. The next opening of an emu device on
 * the node, here by the parent, removes it, and leaves alone the segment
 * of a process that is alive (the parent's own, and one planted under the
 * pid of a live process). Owners lock their files (emu_shm.h): a file
 * named after a pid that is gone here but locked by a live process (its
 * owner in another PID namespace) stays, and an unlocked file named after
 * this very process (its pid reused, or another namespace's pid 1) is
 * removed, the name of this process's first zone among them (it made
 * weft_init fail: "shm_open: File exists"). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device/emu/emu_shm.h"
#include "util/ending.h"
#include "device/registry.h"

#include "../check.h"

/* Segments in /dev/shm whose name starts with weft-emu-<pid>-. */
static int segments_of(long pid)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "weft-emu-%ld-", pid);
    DIR *dir = opendir("/dev/shm");
    if (!dir) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(dir);
    return n;
}

static weft_devices_t *open_emu(weft_params_t **p)
{
    weft_devices_t *ds = NULL;
    int rc = weft_params_create(p);
    if (rc == 0) rc = weft_params__set(*p, "device_emu_enabled", "1");
    if (rc == 0) rc = weft_params__set(*p, "device_cuda_enabled", "0");
    if (rc == 0) rc = weft_params__set(*p, "device_emu_memory", "1M");
    if (rc == 0) rc = weft_devices_open(*p, 0, NULL, &ds);
    if (rc == 0) rc = weft_devices_make_zones(ds);
    if (rc != 0) {
        fprintf(stderr, "could not open an emu device: %s\n", weft_strerror(rc));
        exit(1);
    }
    return ds;
}

/* A segment named as the emu module names them, for a given pid. */
static void plant(long pid, const char *tail)
{
    char name[96];
    snprintf(name, sizeof name, "/weft-emu-%ld-%s", pid, tail);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
}

/* Whether the file fd has open is still the one called name. */
static int still_named(int fd, const char *name)
{
    char path[128];
    struct stat mine, named;
    snprintf(path, sizeof path, "/dev/shm%s", name);
    return fstat(fd, &mine) == 0 && stat(path, &named) == 0 && mine.st_ino == named.st_ino;
}

/* A process that makes the file called name and holds a lock on it until
 * killed. Made and locked there, and made again when it was unlinked
 * before the lock: the name holds a pid no process has, and a weft of
 * another test running beside this one sweeps such a file while nobody
 * locks it (it did between a plant here and the lock, and the child's
 * open failed: a failure of this test under load in CI). */
static pid_t hold_locked(const char *name)
{
    int ready[2];
    CHECK(pipe(ready) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        char ok = 0;
        for (int tries = 0; tries < 100 && !ok; tries++) {
            int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
            ok = fd >= 0 && flock(fd, LOCK_SH) == 0 && still_named(fd, name);
            if (!ok && fd >= 0) close(fd);
        }
        if (write(ready[1], &ok, 1) != 1) _exit(2);
        for (;;) pause();
    }
    char ok = 0;
    CHECK(read(ready[0], &ok, 1) == 1 && ok);
    close(ready[0]);
    close(ready[1]);
    return pid;
}

/* A pid no process has now: a child's, reaped. */
static long gone_pid(void)
{
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    CHECK(pid > 0 && waitpid(pid, NULL, 0) == pid);
    return (long)pid;
}

int main(void)
{
    pid_t child = fork();
    if (child == 0) {
        weft_params_t *p;
        weft_devices_t *ds = open_emu(&p);
        (void)ds;
        raise(SIGKILL); /* dies holding its segment */
        _exit(2);
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(segments_of(child) == 1); /* left behind */
    /* A live process's segment (the parent's pid is alive) must stay. */
    long live = (long)getppid();
    plant(live, "0-99");
    long gone = gone_pid();
    char held[96];
    snprintf(held, sizeof held, "/weft-emu-%ld-0-7", gone);
    pid_t holder = hold_locked(held);
    plant((long)getpid(), "0-0"); /* the name of this process's first zone */
    plant((long)getpid(), "0-55");
    weft_params_t *p;
    weft_devices_t *ds = open_emu(&p);
    CHECK(segments_of(child) == 0);    /* swept */
    CHECK(segments_of(getpid()) == 1); /* this process's own zone; the two planted gone */
    CHECK(segments_of(live) == 1);     /* alive: kept */
    CHECK(segments_of(gone) == 1);     /* its pid gone here, but locked: kept */
    /* A child the application forks inherits the table of owned files and
     * the handlers that drop them (SIGTERM's): its end drops none of its
     * parent's (it unlinked the parent's live zone). */
    pid_t forked = fork();
    if (forked == 0) {
        weft_ending_run(); /* what its SIGTERM handler runs */
        _exit(0);
    }
    CHECK(forked > 0 && waitpid(forked, NULL, 0) == forked);
    CHECK(segments_of(getpid()) == 1);
    kill(holder, SIGKILL);
    CHECK(waitpid(holder, NULL, 0) == holder);
    CHECK(shm_unlink(held) == 0);
    weft_devices_close(ds);
    weft_params_destroy(p);
    CHECK(segments_of(getpid()) == 0); /* released at close */
    char name[96];
    snprintf(name, sizeof name, "/weft-emu-%ld-0-99", live);
    CHECK(shm_unlink(name) == 0);
    return check_report("emu_shm_sweep");
}
