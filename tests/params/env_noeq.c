/* Runs argv[1..] with this environment plus two entries that hold no '='
 * (WEFT_CORES and WEFT_FOO), as a launcher that builds its own
 * environment may pass them; a shell cannot make such an entry. weft read
 * the name's length as 0 there and wrote past a buffer (a stranger's
 * execve). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: env_noeq PROGRAM [ARG...]\n");
        return 2;
    }
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 3, sizeof *env);
    if (!env) return 1;
    memcpy(env, environ, n * sizeof *env);
    env[n] = "WEFT_CORES";
    env[n + 1] = "WEFT_FOO";
    execve(argv[1], argv + 1, env);
    perror("env_noeq: execve");
    return 1;
}
