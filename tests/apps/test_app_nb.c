/* The dense apps' tile rule without -t (apps/app_cli.h): one tile for one
 * rank with one GPU up to the app's gpu_one_tile_max, the N-based tiles
 * otherwise; the launcher's rank count read before weft_init; the prescan
 * that makes room for one tile (one execution stream, its workspace)
 * unless the user set those; and the preload's order for a one-tile
 * matrix. Needs no GPU: the rule reads only the options. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>

#include "../check.h"
#include "app_cli.h"

static void usage(FILE *out) { (void)out; }

static const app_cli_t potrf_like = {.prog = "test",
                                     .nb = 256,
                                     .gpu_nb_auto = 1,
                                     .gpu_one_tile_max = 16384,
                                     .workspace_tiles = 2.5,
                                     .usage = usage};

static appdev_t gpu(int64_t g)
{
    return (appdev_t){.prog = "test", .g = g, .dtype = WEFT_DEV_CUDA, .type = "cuda"};
}

static void clear_launcher(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                       "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

static void test_rule(void)
{
    appdev_t d = gpu(1);
    CHECK(app_cli_one_tile(&potrf_like, 4096, &d, 1));
    CHECK(app_cli_one_tile(&potrf_like, 16384, &d, 1));
    CHECK(!app_cli_one_tile(&potrf_like, 16385, &d, 1)); /* past the app's bound */
    CHECK(!app_cli_one_tile(&potrf_like, 8192, &d, 2));  /* two ranks: tiles move */
    CHECK(!app_cli_one_tile(&potrf_like, -1, &d, 1));    /* N not known */
    appdev_t two = gpu(2), emu = gpu(1);
    emu.dtype = WEFT_DEV_EMU;
    CHECK(!app_cli_one_tile(&potrf_like, 8192, &two, 1)); /* two GPUs share the work */
    CHECK(!app_cli_one_tile(&potrf_like, 8192, &emu, 1));
    app_cli_t other = potrf_like;
    other.gpu_one_tile_max = 0; /* an app that does not ask for it */
    CHECK(!app_cli_one_tile(&other, 8192, &d, 1));

    d.one_tile = 1;
    CHECK(app_cli_auto_nb(&potrf_like, 8192, &d) == 8192);
    d.one_tile = 0;
    CHECK(app_cli_auto_nb(&potrf_like, 8192, &d) == 1024);
    CHECK(app_cli_auto_nb(&potrf_like, 4096, &d) == 512);
    CHECK(app_cli_auto_nb(&potrf_like, 32768, &d) == 2048);
    CHECK(app_cli_auto_nb(&potrf_like, 8192, &emu) == 256);
}

static void test_launch_ranks(void)
{
    clear_launcher();
    CHECK(app_cli_launch_ranks() == 1);
    setenv("PMI_SIZE", "3", 1);
    CHECK(app_cli_launch_ranks() == 3);
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1); /* Open MPI's first */
    CHECK(app_cli_launch_ranks() == 2);
    setenv("OMPI_COMM_WORLD_SIZE", "garbage", 1);
    CHECK(app_cli_launch_ranks() == 3);
    clear_launcher();
}

static void unset_params(void)
{
    unsetenv("WEFT_DEVICE_STREAMS");
    unsetenv("WEFT_DEVICE_URGENT_STREAM");
    unsetenv("WEFT_DEVICE_WORKSPACE");
    unsetenv("WEFT_DEVICE_TYPE");
}

static int prescan(const char *const *words, int n, appdev_t *dev)
{
    char *argv[16];
    argv[0] = (char *)"test";
    for (int i = 0; i < n; i++) argv[i + 1] = (char *)words[i];
    return app_cli_prescan(&potrf_like, n + 1, argv, dev);
}

static int env_is(const char *var, const char *value)
{
    const char *v = getenv(var);
    return v != NULL && strcmp(v, value) == 0;
}

static void test_prescan(void)
{
    appdev_t dev;
    /* Alone, one GPU, N = 8192: one tile, one stream, its workspace. */
    clear_launcher();
    unset_params();
    const char *one[] = {"-N", "8192", "-g", "1"};
    CHECK(prescan(one, 4, &dev) == 0);
    CHECK(dev.one_tile == 1);
    CHECK(env_is("WEFT_DEVICE_STREAMS", "1") && env_is("WEFT_DEVICE_URGENT_STREAM", "0"));
    char ws[32];
    snprintf(ws, sizeof ws, "%lld", (long long)(2.5 * 8192.0 * 8192.0 * 8.0) + (1 << 20));
    CHECK(env_is("WEFT_DEVICE_WORKSPACE", ws));

    /* The user's streams stay; -t keeps the tiles. */
    unset_params();
    const char *mine[] = {"-N", "8192", "-g", "1", "--weft-device_streams=3"};
    CHECK(prescan(mine, 5, &dev) == 0 && dev.one_tile == 1);
    CHECK(getenv("WEFT_DEVICE_STREAMS") == NULL && env_is("WEFT_DEVICE_URGENT_STREAM", "0"));
    unset_params();
    const char *tiled[] = {"-N", "8192", "-g", "1", "-t", "1024"};
    CHECK(prescan(tiled, 6, &dev) == 0 && dev.one_tile == 0);
    CHECK(getenv("WEFT_DEVICE_STREAMS") == NULL);

    /* Under a launcher of 2 ranks: tiles. */
    unset_params();
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    CHECK(prescan(one, 4, &dev) == 0 && dev.one_tile == 0);
    CHECK(getenv("WEFT_DEVICE_STREAMS") == NULL);
    clear_launcher();
    unset_params();
    unsetenv("WEFT_DEVICE_CUDA_ENABLED");
}

static void test_preload_order(void)
{
    app_opts_t o = {.n = 8192, .nb = 8192, .p = 1, .q = 1};
    CHECK(app_preload_order(&o) == 8192);
    o.nb = 10000; /* -t past N */
    CHECK(app_preload_order(&o) == 8192);
    o = (app_opts_t){.n = 16384, .nb = 1024, .p = 2, .q = 1};
    CHECK(app_preload_order(&o) == 5 * 1024);
}

int main(void)
{
    test_rule();
    test_launch_ranks();
    test_prescan();
    test_preload_order();
    return check_report("app_cli_nb");
}
