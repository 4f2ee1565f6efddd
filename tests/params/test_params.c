/* Unit tests of the parameter registry (src/params): defaults, env and
 * command line, the parsing of each kind and the errors. The expected error
 * lines go to stderr; the test checks the status codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "weft/weft.h"

#include "../check.h"

static weft_params_t *fresh(void)
{
    weft_params_t *p = NULL;
    if (weft_params_create(&p) != WEFT_SUCCESS) {
        fprintf(stderr, "weft_params_create failed\n");
        exit(EXIT_FAILURE);
    }
    return p;
}

/* Loads argv words (NULL-terminated) into p; returns the status and leaves
 * the remaining words in *argc / argv. */
static int load(weft_params_t *p, int *argc, char **argv)
{
    *argc = 0;
    while (argv[*argc] != NULL) (*argc)++;
    char **av = argv;
    return weft_params_load(p, argc, &av);
}

static void test_table(void)
{
    for (int i = 0; i < weft_param_count; i++) {
        const char *n = weft_param_table[i].name;
        CHECK(strspn(n, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(n));
        CHECK(weft_param_table[i].help != NULL && weft_param_table[i].help[0] != '\0');
        CHECK(weft_params_find(n) == &weft_param_table[i]); /* names are unique */
    }
    CHECK(weft_params_find("nonexistent") == NULL);
    CHECK(weft_params_find("debug-verbose") == weft_params_find("debug_verbose"));
}

static void test_defaults(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params_int(p, "cores") == 0);
    CHECK(weft_params_int(p, "bind") == 1);
    CHECK(weft_params_int(p, "debug_verbose") == 1);
    CHECK(weft_params_int(p, "show_stats") == 0);
    CHECK(weft_params_int(p, "device_type") == 0);
    CHECK(strcmp(weft_params_str(p, "device_type"), "cuda") == 0);
    CHECK(weft_params_int(p, "device_cuda_enabled") == 0);
    CHECK(weft_params_int(p, "device_memory_use") == 90);
    CHECK(weft_params_int(p, "device_memory_limit") == 0);
    CHECK(weft_params_int(p, "comm_eager_limit") == 64 * 1024);
    CHECK(weft_params_is_set(p, "cores") == 0);
    weft_params_destroy(p);
}

static void test_env(void)
{
    weft_params_t *p = fresh();
    char *argv[] = {"prog", NULL};
    int argc;
    setenv("WEFT_CORES", "8", 1);
    setenv("WEFT_DEVICE_TYPE", "emu", 1);
    setenv("WEFT_SOME_OTHER_TOOL", "zzz", 1); /* not ours: ignored */
    CHECK(load(p, &argc, argv) == WEFT_SUCCESS);
    CHECK(argc == 1 && argv[1] == NULL);
    CHECK(weft_params_int(p, "cores") == 8);
    CHECK(weft_params_is_set(p, "cores") == 1);
    CHECK(weft_params_int(p, "device_type") == 1);
    CHECK(weft_params_is_set(p, "bind") == 0);

    /* The command line beats the env. */
    char *argv2[] = {"prog", "--weft-cores=3", NULL};
    CHECK(load(p, &argc, argv2) == WEFT_SUCCESS);
    CHECK(weft_params_int(p, "cores") == 3);

    /* A known name with a malformed value is an error, and changes nothing. */
    setenv("WEFT_CORES", "abc", 1);
    CHECK(load(p, &argc, argv) == WEFT_ERR_PARAM);
    CHECK(weft_params_int(p, "cores") == 3);
    unsetenv("WEFT_CORES");
    unsetenv("WEFT_DEVICE_TYPE");
    unsetenv("WEFT_SOME_OTHER_TOOL");
    weft_params_destroy(p);
}

static void test_argv_removal(void)
{
    weft_params_t *p = fresh();
    char *argv[] = {"prog",
                    "a",
                    "--weft-cores=5",
                    "b",
                    "--weft-debug_verbose",
                    "2",
                    "c",
                    "--weft-device-emu-enabled",
                    "4",
                    NULL};
    int argc;
    CHECK(load(p, &argc, argv) == WEFT_SUCCESS);
    CHECK(argc == 4);
    CHECK(strcmp(argv[0], "prog") == 0 && strcmp(argv[1], "a") == 0);
    CHECK(strcmp(argv[2], "b") == 0 && strcmp(argv[3], "c") == 0);
    CHECK(argv[4] == NULL);
    CHECK(weft_params_int(p, "cores") == 5);
    CHECK(weft_params_int(p, "debug_verbose") == 2);
    CHECK(weft_params_int(p, "device_emu_enabled") == 4);
    CHECK(weft_params_is_set(p, "debug_verbose") == 1);

    /* Words after "--" belong to the application. */
    char *argv2[] = {"prog", "--", "--weft-cores=7", NULL};
    CHECK(load(p, &argc, argv2) == WEFT_SUCCESS);
    CHECK(argc == 3 && weft_params_int(p, "cores") == 5);

    /* The two-word form needs its second word. */
    char *argv3[] = {"prog", "x", "--weft-cores", NULL};
    CHECK(load(p, &argc, argv3) == WEFT_ERR_PARAM);
    char *argv4[] = {"prog", "--weft-cores", "--weft-bind", NULL};
    CHECK(load(p, &argc, argv4) == WEFT_ERR_PARAM);
    /* Nor an application's option: "--weft-trace --check" took --check as
     * the trace's path (the check never ran); "-1" is a value. */
    char *argv4a[] = {"prog", "--weft-trace", "--check", NULL};
    CHECK(load(p, &argc, argv4a) == WEFT_ERR_PARAM);
    char *argv4b[] = {"prog", "--weft-trace", "-N", "5", NULL};
    CHECK(load(p, &argc, argv4b) == WEFT_ERR_PARAM);
    char *argv4c[] = {"prog", "--weft-device_cuda_enabled", "-1", NULL};
    CHECK(load(p, &argc, argv4c) == WEFT_SUCCESS && argc == 1);
    CHECK(weft_params_int(p, "device_cuda_enabled") == -1);

    /* A count larger than the words (kept from before an earlier load
     * removed words of the same array): the words end at the NULL. It
     * crashed in strcmp. */
    char *argv5[] = {"prog", "--weft-cores=6", NULL, NULL, NULL};
    argc = 4;
    char **av = argv5;
    CHECK(weft_params_load(p, &argc, &av) == WEFT_SUCCESS);
    CHECK(argc == 1 && argv5[1] == NULL && weft_params_int(p, "cores") == 6);
    weft_params_destroy(p);
}

static void test_bool(void)
{
    weft_params_t *p = fresh();
    int argc;
    char *argv[] = {"prog", "--weft-show_stats", "input.dat", NULL};
    CHECK(load(p, &argc, argv) == WEFT_SUCCESS);
    CHECK(argc == 2 && strcmp(argv[1], "input.dat") == 0 && argv[2] == NULL);
    CHECK(weft_params_int(p, "show_stats") == 1);

    char *argv2[] = {"prog", "--weft-bind", "off", "--weft-leak_report=No", "--weft-show_stats",
                     NULL};
    CHECK(load(p, &argc, argv2) == WEFT_SUCCESS);
    CHECK(argc == 1 && argv2[1] == NULL);
    CHECK(weft_params_int(p, "bind") == 0);
    CHECK(weft_params_int(p, "leak_report") == 0);
    CHECK(weft_params_int(p, "show_stats") == 1);

    CHECK(weft_params__set(p, "sched_steal", "true") == WEFT_SUCCESS);
    CHECK(weft_params_int(p, "sched_steal") == 1);
    CHECK(weft_params__set(p, "sched_steal", "maybe") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "sched_steal", "2") == WEFT_ERR_PARAM);
    weft_params_destroy(p);
}

static void test_size(void)
{
    static const struct {
        const char *text;
        int64_t bytes;
    } good[] = {{"0", 0},
                {"123", 123},
                {"64K", 64 << 10},
                {"64k", 64 << 10},
                {"4M", 4 << 20},
                {"4MiB", 4 << 20},
                {"2G", INT64_C(2) << 30},
                {"2gib", INT64_C(2) << 30},
                {"3KiB", 3 << 10},
                {"1T", INT64_C(1) << 40},
                {"2TiB", INT64_C(2) << 40},
                {"8589934591G", INT64_C(8589934591) << 30}};
    static const char *bad[] = {"-1",
                                "12X",
                                "",
                                "K",
                                "1.5M",
                                " 12",
                                "12 ",
                                "+5",
                                "4MB",
                                "99999999999999999999",
                                "8589934592G",
                                "8388608T",
                                "9223372036854775808"};
    weft_params_t *p = fresh();
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        CHECK(weft_params__set(p, "device_memory_limit", good[i].text) == WEFT_SUCCESS);
        CHECK(weft_params_int(p, "device_memory_limit") == good[i].bytes);
    }
    CHECK(weft_params__set(p, "device_memory_limit", "1M") == WEFT_SUCCESS);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(weft_params__set(p, "device_memory_limit", bad[i]) == WEFT_ERR_PARAM);
        CHECK(weft_params_int(p, "device_memory_limit") == 1 << 20); /* unchanged */
    }
    weft_params_destroy(p);
}

static void test_enum(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params__set(p, "device_type", "emu") == WEFT_SUCCESS);
    CHECK(weft_params_int(p, "device_type") == 1);
    CHECK(strcmp(weft_params_str(p, "device_type"), "emu") == 0);
    CHECK(weft_params__set(p, "device_type", "CUDA") == WEFT_SUCCESS);
    CHECK(weft_params_int(p, "device_type") == 0);
    CHECK(strcmp(weft_params_str(p, "device_type"), "cuda") == 0);
    CHECK(weft_params__set(p, "device_type", "x") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_type", "cud") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_type", "") == WEFT_ERR_PARAM);
    CHECK(weft_params_int(p, "device_type") == 0);
    weft_params_destroy(p);
}

static void test_int_range(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params__set(p, "cores", "4096") == WEFT_SUCCESS);
    CHECK(weft_params__set(p, "cores", "99999") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "cores", "-1") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "cores", "abc") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "cores", "12abc") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "cores", "") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "cores", "99999999999999999999999") == WEFT_ERR_PARAM);
    CHECK(weft_params_int(p, "cores") == 4096);
    CHECK(weft_params__set(p, "device_cuda_enabled", "-1") == WEFT_SUCCESS);
    CHECK(weft_params__set(p, "device_cuda_enabled", "-2") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_memory_use", "0") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_memory_use", "100") == WEFT_SUCCESS);
    CHECK(weft_params_int(p, "device_memory_use") == 100);
    weft_params_destroy(p);
}

static void test_unknown(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params__set(p, "cores", "2") == WEFT_SUCCESS);
    int argc;
    char *argv[] = {"prog", "--weft-cores=6", "--weft-foo=1", "x", NULL};
    CHECK(load(p, &argc, argv) == WEFT_ERR_PARAM);
    /* A failed load changes neither the values nor argv. */
    CHECK(weft_params_int(p, "cores") == 2);
    CHECK(strcmp(argv[1], "--weft-cores=6") == 0 && strcmp(argv[2], "--weft-foo=1") == 0);
    CHECK(argv[4] == NULL);
    CHECK(weft_params__set(p, "foo", "1") == WEFT_ERR_PARAM);
    weft_params_destroy(p);
}

static void test_is_set(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params_is_set(p, "device_memory_use") == 0);
    /* Setting a parameter to its default still counts as set. */
    CHECK(weft_params__set(p, "device_memory_use", "90") == WEFT_SUCCESS);
    CHECK(weft_params_is_set(p, "device_memory_use") == 1);
    CHECK(weft_params_is_set(p, "cores") == 0);
    weft_params_destroy(p);
}

/* The listing: one line per parameter, starting with its name. */
static void test_print(void)
{
    weft_params_t *p = fresh();
    CHECK(weft_params__set(p, "cores", "12") == WEFT_SUCCESS);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f == NULL) return;
    weft_params_print(p, f);
    rewind(f);
    char line[4096]; /* a help text may be long (fault_inject's lists every site) */
    int lines = 0, saw_cores = 0;
    while (fgets(line, sizeof line, f) != NULL && lines < weft_param_count) {
        CHECK(strchr(line, '\n') != NULL); /* whole */
        CHECK(strncmp(line, weft_param_table[lines].name, strlen(weft_param_table[lines].name)) ==
              0);
        if (strncmp(line, "cores ", 6) == 0) saw_cores = strstr(line, " 12 ") != NULL;
        lines++;
    }
    CHECK(lines == weft_param_count);
    CHECK(saw_cores);
    fclose(f);
    weft_params_destroy(p);

    int argc = 2;
    char *argv[] = {"prog", "--weft-cores=1", NULL};
    char **av = argv;
    CHECK(weft_params_list(&argc, &av, NULL) == WEFT_SUCCESS);
    CHECK(argc == 1 && argv[1] == NULL);
}

int main(void)
{
    test_table();
    test_defaults();
    test_env();
    test_argv_removal();
    test_bool();
    test_size();
    test_enum();
    test_int_range();
    test_unknown();
    test_is_set();
    test_print();
    if (failures != 0) {
        fprintf(stderr, "test_params: %d checks failed\n", failures);
        return EXIT_FAILURE;
    }
    printf("test_params: all checks passed\n");
    return EXIT_SUCCESS;
}
