/* Collections (issue 15 item 3): a vector of blocks, matrices placed by a
 * user distribution (2D block-cyclic through weft_dist_block_cyclic_rank
 * and a skewed one with home devices), and tiles of struct elements whose
 * type and size a body sees. Checked against direct computations: the
 * owner and device of every tile, the values after tasks, each rank's
 * task count and each device's. Bad input: no distribution, a rank or
 * device out of range (named tile), struct sizes 0 and 70000. With
 * --skew 1, rank 1's distribution differs: named at the wait on every
 * rank. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "elapsed.h"
#include "weft/weft.h"

#define VN 23
#define VB 5
#define MT 5
#define NT 3

static int R, me, G, skew;

/* flow 0: x (RW), value 0: i. x[e] = 2 x[e] + i for every element. */
static int scale(weft_task_t *t)
{
    int i;
    if (weft_task_value_get(t, 0, &i, sizeof i) != 0) return -1;
    double *x = weft_task_ptr(t, 0);
    int64_t ld = weft_task_ld(t, 0);
    for (int c = 0; c < weft_task_cols(t, 0); c++)
        for (int r = 0; r < weft_task_rows(t, 0); r++) x[r + c * ld] = 2 * x[r + c * ld] + i;
    return 0;
}

static const weft_task_class_t scale_class = {.name = "scale", .body = {[WEFT_DEV_CPU] = scale}};

static void vector(weft_context_t *ctx)
{
    double x[VN];
    for (int e = 0; e < VN; e++) x[e] = e;
    weft_matrix_t *V = weft_vector_wrap(ctx, WEFT_DOUBLE, x, VN, VB);
    REQUIRE(V != NULL);
    int nb = weft_matrix_mt(V), mine = 0;
    CHECK(nb == (VN + VB - 1) / VB && weft_matrix_nt(V) == 1);
    CHECK(weft_matrix_tile_rows(V, nb - 1) == VN - (nb - 1) * VB);
    weft_stats_t s0, s1;
    CHECK(weft_stats_get(ctx, &s0) == 0);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "vector");
    int idx[VN];
    for (int i = 0; i < nb; i++) {
        idx[i] = i;
        CHECK(weft_matrix_tile_rank(V, i, 0) == i % R);
        mine += i % R == me;
        CHECK(weft_insert_task(tp, &scale_class, WEFT_RW | WEFT_AFFINITY, weft_tile(V, i, 0),
                               WEFT_VALUE, &idx[i], sizeof idx[i], 0) == 0);
    }
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    CHECK(weft_stats_get(ctx, &s1) == 0 && s1.tasks_run - s0.tasks_run == mine);
    for (int e = 0; e < VN; e++)
        if ((e / VB) % R == me) CHECK(x[e] == 2.0 * e + e / VB);
    weft_matrix_free(V);
}

static int skewed_rank(int i, int j, void *arg)
{
    (void)arg;
    return (i + 2 * j + (skew && me == 1)) % R;
}

static int skewed_device(int i, int j, void *arg)
{
    (void)arg;
    return 1 + (i + j) % G;
}

/* The same tasks on a matrix placed by dist; owners from want_rank. */
static void placed(weft_context_t *ctx, const weft_dist_t *dist, weft_tile_map_fn want_rank,
                   void *want_arg)
{
    static double mem[MT * 4 * NT * 4];
    memset(mem, 0, sizeof mem);
    weft_matrix_t *A =
        weft_matrix_wrap_dist(ctx, WEFT_DOUBLE, mem, MT * 4, MT * 4, NT * 4, 4, 4, dist);
    REQUIRE(A != NULL);
    int64_t per_dev[17] = {0}, before[17] = {0}, mine = 0;
    weft_device_counters_t c;
    for (int d = 1; d <= G && d < 17; d++)
        if (weft_device_counters_get(ctx, d, &c) == 0) before[d] = c.tasks;
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "placed");
    int one = 1;
    for (int j = 0; j < NT; j++)
        for (int i = 0; i < MT; i++) {
            int owner = want_rank(i, j, want_arg);
            CHECK(weft_matrix_tile_rank(A, i, j) == owner);
            if (owner == me && dist->device && G > 0) {
                CHECK(weft_data_device(weft_tile(A, i, j)) == skewed_device(i, j, NULL));
                per_dev[skewed_device(i, j, NULL)]++;
            }
            mine += owner == me;
            CHECK(weft_insert_task(tp, &scale_class, WEFT_RW | WEFT_AFFINITY, weft_tile(A, i, j),
                                   WEFT_VALUE, &one, sizeof one, 0) == 0);
        }
    int w = weft_taskpool_wait(tp);
    weft_taskpool_free(tp);
    if (skew) {
        printf("test_collections rank %d: wait=%d\n", me, w);
        weft_matrix_free(A);
        return;
    }
    CHECK(w == 0);
    for (int j = 0; j < NT; j++)
        for (int i = 0; i < MT; i++) {
            if (want_rank(i, j, want_arg) != me) continue;
            int64_t ld = 0;
            double *p = weft_data_host_ptr(weft_tile(A, i, j), &ld);
            CHECK(p == mem + i * 4 + j * 4 * ld && p[0] == 1 && p[3 + 3 * ld] == 1); /* 2*0 + 1 */
        }
    for (int d = 1; d <= G && d < 17 && dist->device; d++)
        CHECK(weft_device_counters_get(ctx, d, &c) == 0 && c.tasks - before[d] == per_dev[d]);
    weft_matrix_free(A);
}

typedef struct particle {
    int id;
    float mass;
    double pos[2];
} particle_t;

/* flow 0: particles (W). Sets them and checks what the body sees. */
static int make_particles(weft_task_t *t)
{
    if (weft_task_elem_size(t, 0) != sizeof(particle_t) ||
        weft_task_type(t, 0) != weft_dtype_struct(sizeof(particle_t)) || weft_task_rows(t, 0) != 3)
        return -1;
    particle_t *p = weft_task_ptr(t, 0);
    for (int k = 0; k < 3; k++) p[k] = (particle_t){k, 1.5f * k, {k, -k}};
    return 0;
}

/* flow 0: particles (R), flow 1: total mass (W, a double). */
static int total_mass(weft_task_t *t)
{
    if (weft_task_elem_size(t, 0) != sizeof(particle_t) || weft_task_elem_size(t, 1) != 8)
        return -1;
    const particle_t *p = weft_task_ptr(t, 0);
    double *m = weft_task_ptr(t, 1);
    *m = 0;
    for (int k = 0; k < weft_task_rows(t, 0); k++) *m += p[k].mass + p[k].id + p[k].pos[0];
    return 0;
}

static const weft_task_class_t make_class = {.name = "make",
                                             .body = {[WEFT_DEV_CPU] = make_particles}};
static const weft_task_class_t mass_class = {.name = "mass", .body = {[WEFT_DEV_CPU] = total_mass}};

/* Struct tiles made on rank 0, read on the last rank. */
static void structs(weft_context_t *ctx)
{
    weft_data_t *p = weft_data_new(ctx, weft_dtype_struct(sizeof(particle_t)), 3, 1, 0);
    weft_data_t *m = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, R - 1);
    REQUIRE(p && m);
    weft_taskpool_t *tp = weft_taskpool_new(ctx, "structs");
    CHECK(weft_insert_task(tp, &make_class, WEFT_W, p, 0) == 0);
    CHECK(weft_insert_task(tp, &mass_class, WEFT_R, p, WEFT_W | WEFT_AFFINITY, m, 0) == 0);
    CHECK(weft_taskpool_wait(tp) == 0);
    weft_taskpool_free(tp);
    if (me == R - 1) {
        double *v = weft_data_host_ptr(m, NULL);
        CHECK(v && *v == (0 + 1.5 + 3.0) + (0 + 1 + 2) + (0 + 1 + 2));
    }
    weft_data_release(p);
    weft_data_release(m);
}

static int bad_rank(int i, int j, void *arg)
{
    (void)arg;
    return i == 1 && j == 2 ? R : 0;
}

static void bad_input(weft_context_t *ctx)
{
    weft_dist_t bad = {.rank = bad_rank}, none = {0};
    weft_grid_t zero = {0, 2};
    weft_dist_t cyclic_zero = {.rank = weft_dist_block_cyclic_rank, .arg = &zero};
    weft_dist_t cyclic_null = {.rank = weft_dist_block_cyclic_rank};
    capture_begin();
    /* A bad grid for weft's own rank function divided by zero. */
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, &cyclic_zero) == NULL);
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, &cyclic_null) == NULL);
    CHECK(weft_dist_block_cyclic_rank(0, 0, NULL) == -1);
    CHECK(weft_dist_block_cyclic_rank(-1, 0, &(weft_grid_t){1, 1}) == -1);
    /* Ranks past INT_MAX: the product wrapped to rank 1 (undefined too). */
    CHECK(weft_dist_block_cyclic_rank(2, 1431655765, &(weft_grid_t){3, 1431655766}) == -1);
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 10, 7, 4, 4, R, 1);
    CHECK(weft_matrix_tile_rows(A, 2) == 2 && weft_matrix_tile_cols(A, 1) == 3);
    CHECK(weft_matrix_tile_rows(A, 3) == -1 && weft_matrix_tile_cols(A, -1) == -1);
    weft_matrix_free(A);
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, NULL) == NULL);
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, &none) == NULL);
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, &bad) == NULL);
    CHECK(weft_data_new(ctx, weft_dtype_struct(0), 1, 1, 0) == NULL);
    CHECK(weft_data_new(ctx, weft_dtype_struct(70000), 1, 1, 0) == NULL);
    /* Past int: 2^32 + 8 bytes made a valid 8-byte type (a stranger's). */
    CHECK(weft_data_new(ctx, weft_dtype_struct(((size_t)1 << 32) + 8), 1, 1, 0) == NULL);
    CHECK(weft_data_new(ctx, (weft_dtype_t)-1, 1, 1, 0) == NULL);
    CHECK(weft_vector_new(ctx, WEFT_DOUBLE, 0, 4) == NULL);
    double x = 0;
    CHECK(weft_data_register(ctx, (weft_dtype_t)99, &x, 1, 1, 1, 0) == NULL);
    CHECK(weft_data_new(ctx, WEFT_DOUBLE, -3, 1, 0) == NULL);
    capture_end();
    CHECK(captured("weft_matrix_new_dist: no rank function in the weft_dist_t"));
    CHECK(captured("weft_matrix_new_dist: weft_dist_block_cyclic_rank's arg is no weft_grid_t"));
    CHECK(captured("weft_dist_block_cyclic_rank: arg is NULL"));
    CHECK(captured("weft_matrix_tile_rows: tile row 3 outside [0, 3)"));
    CHECK(captured("weft_matrix_tile_cols: tile column -1 outside [0, 2)"));
    CHECK(
        captured("weft_matrix_new_dist: the distribution's rank function gives tile (1, 2) rank"));
    /* The call and the argument are named (it was "data K: invalid type or
     * size 1 x 1" for a type that is no weft_dtype_t), a struct's size out
     * of range as such ("matrix: unknown element type 131072" before). */
    CHECK(captured("weft_data_new: element type 65536 is weft_dtype_struct(0): a struct element "
                   "holds 1 to 65535 bytes"));
    CHECK(captured("weft_data_new: element type 135536 is weft_dtype_struct(70000)"));
    CHECK(captured(
        "weft_data_new: element type 1073807360 is weft_dtype_struct(1073741824 or more)"));
    CHECK(captured("weft_data_new: element type -1 is not a weft_dtype_t"));
    CHECK(captured("weft_data_register: element type 99 is not a weft_dtype_t"));
    CHECK(captured("weft_data_new: a tile of -3 x 1 elements: rows and cols must be positive"));
    /* Named by the call (a stranger's report: "matrix: size 0 x 1"). */
    CHECK(captured("weft_vector_new: size 0 x 1 must be positive (no empty matrix or vector)"));
    CHECK(weft_dtype_size(WEFT_INT32) == 4 && weft_dtype_size(WEFT_INT64) == 8);
    CHECK(weft_dtype_size(weft_dtype_struct(24)) == 24 && weft_dtype_size((weft_dtype_t)99) == 0);
}

/* The reflected deal against its rule written out: rows over 2 and 3
 * grid rows, columns over 2, and its refusals. */
static void reflected_deal(weft_context_t *ctx)
{
    static const int rows2[] = {0, 1, 1, 0, 0, 1, 1, 0, 0}, rows3[] = {0, 1, 2, 2, 1, 0, 0, 1, 2};
    for (int i = 0; i < 9; i++) {
        CHECK(weft_dist_block_reflected_rank(i, 0, &(weft_grid_t){2, 1}) == rows2[i]);
        CHECK(weft_dist_block_reflected_rank(i, 0, &(weft_grid_t){3, 1}) == rows3[i]);
        /* 3 x 2: rank = grid row * Q + grid column. */
        for (int j = 0; j < 5; j++)
            CHECK(weft_dist_block_reflected_rank(i, j, &(weft_grid_t){3, 2}) ==
                  rows3[i] * 2 + rows2[j]);
        CHECK(weft_dist_block_reflected_rank(i, i + 3, &(weft_grid_t){1, 1}) == 0);
    }
    weft_grid_t zero = {2, 0};
    weft_dist_t refl_zero = {.rank = weft_dist_block_reflected_rank, .arg = &zero};
    capture_begin();
    CHECK(weft_matrix_new_dist(ctx, WEFT_DOUBLE, 8, 12, 4, 4, &refl_zero) == NULL);
    CHECK(weft_dist_block_reflected_rank(0, 0, NULL) == -1);
    CHECK(weft_dist_block_reflected_rank(0, -2, &(weft_grid_t){1, 1}) == -1);
    CHECK(weft_dist_block_reflected_rank(2, 1431655765, &(weft_grid_t){3, 1431655766}) == -1);
    capture_end();
    CHECK(captured("weft_matrix_new_dist: weft_dist_block_reflected_rank's arg is no weft_grid_t"));
    CHECK(captured("weft_dist_block_reflected_rank: arg is NULL"));
    CHECK(captured("weft_dist_block_reflected_rank: tile (0, -2) on a 1 x 1 grid"));
    CHECK(captured("weft_dist_block_reflected_rank: tile (2, 1431655765) on a 3 x 1431655766"));
}

/* weft_data_key gives the K that messages say ("data K"): a matrix's
 * tiles in a run column by column, and the number a refusal names. */
static void data_keys(weft_context_t *ctx)
{
    weft_matrix_t *A = weft_matrix_new(ctx, WEFT_DOUBLE, 8, 8, 4, 4, R, 1);
    REQUIRE(A != NULL);
    long long k0 = weft_data_key(weft_tile(A, 0, 0));
    CHECK(k0 >= 0 && weft_data_key(weft_tile(A, 1, 0)) == k0 + 1 &&
          weft_data_key(weft_tile(A, 0, 1)) == k0 + 2 &&
          weft_data_key(weft_tile(A, 1, 1)) == k0 + 3);
    weft_taskpool_t *a = weft_taskpool_new(ctx, "keyed_a"), *b = weft_taskpool_new(ctx, "keyed_b");
    int one = 1;
    CHECK(weft_insert_task(a, &scale_class, WEFT_RW, weft_tile(A, 0, 1), WEFT_VALUE, &one,
                           sizeof one, 0) == 0);
    capture_begin();
    CHECK(weft_insert_task(b, &scale_class, WEFT_RW, weft_tile(A, 0, 1), WEFT_VALUE, &one,
                           sizeof one, 0) < 0);
    CHECK(weft_data_key(NULL) < 0);
    capture_end();
    char said[96];
    snprintf(said, sizeof said, "insert scale: data %lld is used by taskpool \"keyed_a\"", k0 + 2);
    CHECK(captured(said));
    CHECK(captured("weft_data_key"));
    CHECK(weft_taskpool_wait(a) == 0 && weft_taskpool_wait(b) == 0);
    weft_taskpool_free(a);
    weft_taskpool_free(b);
    weft_matrix_free(A);
}

int main(int argc, char **argv)
{
    elapsed_start();
    weft_context_t *ctx = weft_init(&argc, &argv);
    if (!ctx) return 2;
    R = weft_nranks(ctx), me = weft_rank(ctx), G = weft_ndevices(ctx);
    skew = argc > 2 && !strcmp(argv[1], "--skew") && atoi(argv[2]);
    weft_dist_t skewed = {.rank = skewed_rank, .device = skewed_device};
    if (skew) {
        placed(ctx, &skewed, skewed_rank, NULL);
        int f = weft_fini(ctx);
        printf("test_collections rank %d: fini=%d\n", me, f);
        return f != 0;
    }
    vector(ctx);
    weft_grid_t g = {R % 2 ? R : 2, R % 2 ? 1 : R / 2};
    weft_dist_t cyclic = {.rank = weft_dist_block_cyclic_rank, .arg = &g};
    placed(ctx, &cyclic, weft_dist_block_cyclic_rank, &g);
    weft_dist_t refl = {.rank = weft_dist_block_reflected_rank, .arg = &g};
    placed(ctx, &refl, weft_dist_block_reflected_rank, &g);
    reflected_deal(ctx);
    data_keys(ctx);
    placed(ctx, &skewed, skewed_rank, NULL);
    structs(ctx);
    bad_input(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("test_collections");
}
