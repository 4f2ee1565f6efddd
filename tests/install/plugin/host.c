/* A host program that does not link weft: it loads a plugin that does
 * (plugin.c) with dlopen, runs it, unloads it with dlclose, and ends.
 * "own": one cycle, weft starting and ending MPI, then the process exits
 * (a handler weft registered at exit pointed into the unloaded library:
 * SIGSEGV at exit). "comm": the host starts MPI, two cycles on its
 * MPI_COMM_WORLD, then the host's MPI_Finalize (it called a callback of
 * the unloaded library: SIGSEGV). libweft stays loaded once loaded. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

typedef int (*plugin_run_fn)(int on_comm, int *argc, char ***argv);

/* One load, call and unload of the plugin: its result, or -1. */
static int cycle(const char *path, int on_comm, int *argc, char ***argv)
{
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (so == NULL) {
        fprintf(stderr, "plugin host: %s\n", dlerror());
        return -1;
    }
    plugin_run_fn run;
    void *sym = dlsym(so, "plugin_run");
    memcpy(&run, &sym, sizeof run);
    int rc = sym ? run(on_comm, argc, argv) : -1;
    dlclose(so);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s PLUGIN own|comm [--weft-...]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int on_comm = strcmp(argv[2], "comm") == 0, rank = 0, provided, rc = 0;
    int wargc = argc - 2; /* weft reads the words after the mode */
    char **wargv = argv + 2;
    if (on_comm) {
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    int cycles = on_comm ? 2 : 1;
    for (int i = 0; i < cycles && rc == 0; i++) rc = cycle(path, on_comm, &wargc, &wargv);
    if (on_comm) MPI_Finalize();
    printf("plugin host %s rank %d: %d cycle%s: %s\n", argv[2], rank, cycles, cycles > 1 ? "s" : "",
           rc == 0 ? "ok" : "FAILED");
    fflush(stdout);
    return rc != 0;
}
