/* weft_param_set on a started context. A parameter that only weft_init
 * reads (cores, the devices, the comm engine's sizes, fault_inject, the
 * trace) is refused with WEFT_ERR_PARAM and a message saying to set it
 * before weft_init: before, the call returned 0 and changed nothing (a
 * fault rule set this way never fired, a comm_eager_limit set on one rank
 * looked applied). The parameters a context reads later take effect:
 * debug_verbose silences a warning at once, redux_lanes is read back. NULL
 * arguments are refused, not dereferenced. */
#include "../check.h"
#include "weft/weft.h"

static void refused(weft_context_t *ctx, const char *name, const char *value)
{
    int64_t before = 0, after = -1;
    int kind_int = weft_param_get_int(ctx, name, &before) == 0;
    capture_begin();
    int rc = weft_param_set(ctx, name, value);
    capture_end();
    CHECK(rc == WEFT_ERR_PARAM);
    char line[200];
    snprintf(line, sizeof line, "weft_param_set: parameter %s is read by weft_init only", name);
    CHECK(captured(line));
    if (kind_int) CHECK(weft_param_get_int(ctx, name, &after) == 0 && after == before);
}

static void live(weft_context_t *ctx)
{
    int64_t v = 0;
    CHECK(weft_param_set(ctx, "redux_lanes", "7") == 0);
    CHECK(weft_param_get_int(ctx, "redux_lanes", &v) == 0 && v == 7);
    /* debug_verbose=0 keeps only errors: a warning is silent at once. */
    CHECK(weft_param_set(ctx, "debug_verbose", "0") == 0);
    weft_data_t *d = weft_data_new(ctx, WEFT_DOUBLE, 1, 1, 0);
    REQUIRE(d != NULL);
    void *p = NULL;
    CHECK(weft_data_host_acquire(d, WEFT_W, &p, NULL) == 0);
    capture_begin();
    weft_data_release(d); /* warns: still acquired */
    capture_end();
    CHECK(!captured("was still acquired by the host"));
    CHECK(weft_param_set(ctx, "debug_verbose", "1") == 0);
    /* A bad value of a live parameter is still refused by its range. */
    capture_begin();
    CHECK(weft_param_set(ctx, "watchdog_s", "-1") == WEFT_ERR_PARAM);
    capture_end();
    CHECK(captured("parameter watchdog_s: -1 is outside the allowed range [0, 86400]"));
}

static void null_args(weft_context_t *ctx)
{
    int64_t v = 0;
    capture_begin();
    CHECK(weft_param_set(ctx, NULL, "1") == WEFT_ERR_PARAM);
    CHECK(weft_param_set(ctx, "watchdog_s", NULL) == WEFT_ERR_PARAM);
    CHECK(weft_param_get_int(ctx, NULL, &v) == WEFT_ERR_PARAM);
    CHECK(weft_param_get_int(ctx, "cores", NULL) == WEFT_ERR_PARAM);
    capture_end();
    CHECK(captured("weft_param_set: argument 2 (the parameter's name) is NULL"));
    CHECK(captured("weft_param_set: argument 3 (the value) is NULL"));
    CHECK(captured("weft_param_get_int: argument 3 (the output) is NULL"));
}

int main(int argc, char **argv)
{
    weft_context_t *ctx = weft_init(&argc, &argv);
    REQUIRE(ctx != NULL);
    refused(ctx, "cores", "3");
    refused(ctx, "comm_eager_limit", "5");
    refused(ctx, "fault_inject", "task:1");
    refused(ctx, "device_emu_enabled", "2");
    refused(ctx, "trace", "/tmp/x");
    live(ctx);
    null_args(ctx);
    CHECK(weft_fini(ctx) == 0);
    return check_report("params_set_live");
}
