/* weft-info: lists every runtime parameter with its value (after the env
 * and the --weft- options given here), its default and one line of help;
 * --version: the library's version and modules, and the headers'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

static void usage(FILE *out, const char *prog)
{
    fprintf(out,
            "usage: %s [--weft-<name>=<value> ...] | --version\n"
            "Lists weft's runtime parameters: name, value, default, help.\n"
            "A parameter is set by env WEFT_<NAME> (upper case), then by\n"
            "--weft-<name>=<value> or --weft-<name> <value> on the command line;\n"
            "giving options here shows the values they would produce. Each value\n"
            "is checked against its range here; combinations (sim_rank without\n"
            "sim_nranks) and what depends on the run (devices, ranks) only by\n"
            "weft_init. --version prints the library's version and the modules\n"
            "it was built with, and the version of the headers this program was\n"
            "compiled with.\n",
            prog);
}

static int wants(int argc, char **argv, const char *a, const char *b)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], a) == 0 || (b && strcmp(argv[i], b) == 0)) return 1;
    return 0;
}

/* The library's line, then the headers' version when it differs. */
static int print_version(void)
{
    int major, minor, patch;
    printf("%s\n", weft_version(&major, &minor, &patch));
    if (major != WEFT_VERSION_MAJOR || minor != WEFT_VERSION_MINOR || patch != WEFT_VERSION_PATCH)
        printf("compiled with the headers of weft %d.%d.%d\n", WEFT_VERSION_MAJOR,
               WEFT_VERSION_MINOR, WEFT_VERSION_PATCH);
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    const char *prog = argc > 0 ? argv[0] : "weft-info";
    if (wants(argc, argv, "--help", "-h")) {
        usage(stdout, prog);
        return EXIT_SUCCESS;
    }
    if (wants(argc, argv, "--version", NULL)) return print_version();
    /* Check on a copy of argv first, so that a stray argument is refused
     * before anything is listed; the listing then reads the real argv. */
    char **copy = malloc(((size_t)argc + 1) * sizeof *copy);
    if (copy == NULL) return EXIT_FAILURE;
    memcpy(copy, argv, ((size_t)argc + 1) * sizeof *copy);
    int nleft = argc;
    int rc = weft_params_list(&nleft, &copy, NULL);
    if (rc == WEFT_SUCCESS && nleft > 1) {
        fprintf(stderr, "%s: unknown argument '%s'\n", prog, copy[1]);
        usage(stderr, prog);
        rc = WEFT_ERR_INVALID;
    }
    free(copy);
    if (rc == WEFT_SUCCESS) rc = weft_params_list(&argc, &argv, stdout);
    return rc == WEFT_SUCCESS ? EXIT_SUCCESS : (rc == WEFT_ERR_INVALID ? 2 : EXIT_FAILURE);
}
