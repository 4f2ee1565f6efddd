/* The bounds of the parameter table (issue 13, item 13): every integer and
 * size parameter takes its min and max, refuses one past either end and
 * keeps its previous value then; the values that broke runs at run time
 * (comm_eager_limit=2G gave MPI_ERR_COUNT) are refused when set; weft-info
 * prints each range. The error lines (parameter, value, range) go to
 * stderr, where the ctest regular expressions of CMakeLists.txt check them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/params.h"
#include "weft/weft.h"

#include "../check.h"

static int numeric(const weft_param_def_t *d)
{
    return d->kind == WEFT_PARAM_INT || d->kind == WEFT_PARAM_SIZE;
}

static int set_num(weft_params_t *p, const char *name, int64_t v)
{
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, v);
    return weft_params__set(p, name, text);
}

/* Each end of each range is accepted, one past it refused, the value kept. */
static void test_ends(weft_params_t *p, const weft_param_def_t *d)
{
    CHECK(d->min <= d->max);
    CHECK(weft_params__set(p, d->name, d->defval) == WEFT_SUCCESS);
    int64_t dflt = weft_params_int(p, d->name);
    CHECK(dflt >= d->min && dflt <= d->max);
    CHECK(set_num(p, d->name, d->min) == WEFT_SUCCESS && weft_params_int(p, d->name) == d->min);
    CHECK(set_num(p, d->name, d->max) == WEFT_SUCCESS && weft_params_int(p, d->name) == d->max);
    if (d->min > INT64_MIN) {
        CHECK(set_num(p, d->name, d->min - 1) == WEFT_ERR_PARAM);
        CHECK(weft_params_int(p, d->name) == d->max);
    }
    if (d->max < INT64_MAX) {
        CHECK(set_num(p, d->name, d->max + 1) == WEFT_ERR_PARAM);
        CHECK(weft_params_int(p, d->name) == d->max);
    }
}

/* Ranges chosen for what the runtime carries, spot-checked by value. */
static void test_known(weft_params_t *p)
{
    CHECK(weft_params__set(p, "comm_eager_limit", "2G") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "comm_eager_limit", "64M") == WEFT_SUCCESS);
    CHECK(weft_params__set(p, "comm_eager_limit", "65537K") == WEFT_ERR_PARAM);
    CHECK(weft_params_int(p, "comm_eager_limit") == INT64_C(64) << 20);
    CHECK(weft_params__set(p, "comm_staged_chunk", "2G") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_memory_use", "0") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_memory_use", "101") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_emu_enabled", "17") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_cuda_enabled", "-2") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_emu_memory", "1K") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_workspace", "17G") == WEFT_ERR_PARAM);
    CHECK(weft_params__set(p, "device_memory_limit", "8589934591G") == WEFT_SUCCESS);
}

int main(void)
{
    weft_params_t *p = NULL;
    if (weft_params_create(&p) != WEFT_SUCCESS) {
        fprintf(stderr, "weft_params_create failed\n");
        return EXIT_FAILURE;
    }
    int bounded = 0;
    for (int i = 0; i < weft_param_count; i++) {
        if (!numeric(&weft_param_table[i])) continue;
        test_ends(p, &weft_param_table[i]);
        bounded++;
    }
    CHECK(bounded >= 20); /* every integer and size parameter of the table */
    test_known(p);
    weft_params_destroy(p);
    printf("test_params_bounds: %d parameters, %d checks, %d failures: %s\n", bounded, checks,
           failures, failures ? "FAILED" : "PASSED");
    return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
