/* The context's small public getters and its parameters after weft_init
 * (weft_param_set, weft_param_get_int). */
#include <string.h>

#include "runtime/lifecycle.h"

#include "util/log.h"

/* The parameters weft_param_set may change after weft_init: those read at
 * each wait or by the call that uses them, and those copied into the
 * context here (copied again after each set). The others shape what
 * weft_init built (workers, devices, the comm engine, the trace, the fault
 * rules): set later, they would change nothing. */
static const char *const live_params[] = {"debug_verbose",  "leak_report",       "show_stats",
                                          "sched_window",   "progress",          "watchdog_s",
                                          "watchdog_abort", "redux_lanes",       "check_reads",
                                          "check_writes",   "sched_pending_max", "halt_wait_s"};

void weft_runtime_apply_live_params(weft_context_t *ctx)
{
    weft_log_set_level((int)weft_params_int(ctx->params, "debug_verbose"));
    ctx->leak_report = (int)weft_params_int(ctx->params, "leak_report");
    ctx->show_stats = (int)weft_params_int(ctx->params, "show_stats");
    ctx->insert_window = (long)weft_params_int(ctx->params, "sched_window");
    ctx->insert_max = (long)weft_params_int(ctx->params, "sched_pending_max");
    atomic_store(&ctx->check_reads, (int)weft_params_int(ctx->params, "check_reads"));
    atomic_store(&ctx->check_writes, (int)weft_params_int(ctx->params, "check_writes"));
}

int weft_rank(const weft_context_t *ctx)
{
    return weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_rank", 1) ? ctx->rank : -1;
}

int weft_nranks(const weft_context_t *ctx)
{
    return weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_nranks", 1) ? ctx->nranks : -1;
}

int weft_ncores(const weft_context_t *ctx)
{
    return weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_ncores", 1) ? ctx->ncores : -1;
}

int weft_ndevices(const weft_context_t *ctx)
{
    return weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_ndevices", 1) ? ctx->ndevices : -1;
}

int weft_param_set(weft_context_t *ctx, const char *name, const char *value)
{
    if (!weft_handle_check_main(ctx, WEFT_HANDLE_CONTEXT, "weft_param_set", 1))
        return WEFT_ERR_INVALID;
    if (!name || !value) {
        weft_error("weft_param_set: argument %d (the %s) is NULL", name ? 3 : 2,
                   name ? "value" : "parameter's name");
        return WEFT_ERR_PARAM;
    }
    const weft_param_def_t *def = weft_params_find(name);
    int live = 0;
    for (size_t i = 0; def && i < sizeof live_params / sizeof live_params[0]; i++)
        live |= strcmp(def->name, live_params[i]) == 0;
    if (def && !live) {
        weft_error("weft_param_set: parameter %s is read by weft_init only: setting it now would "
                   "change nothing; set it before weft_init (env WEFT_<NAME> or --weft-%s=%s)",
                   def->name, def->name, value);
        return WEFT_ERR_PARAM;
    }
    int rc = weft_params__set(ctx->params, name, value);
    if (rc == WEFT_SUCCESS) weft_runtime_apply_live_params(ctx);
    return rc;
}

int weft_param_get_int(const weft_context_t *ctx, const char *name, int64_t *out)
{
    if (!weft_handle_check(ctx, WEFT_HANDLE_CONTEXT, "weft_param_get_int", 1))
        return WEFT_ERR_INVALID;
    if (!name || !out) {
        weft_error("weft_param_get_int: argument %d (the %s) is NULL", name ? 3 : 2,
                   name ? "output" : "parameter's name");
        return WEFT_ERR_PARAM;
    }
    const weft_param_def_t *def = weft_params_find(name);
    if (!def) {
        weft_error("unknown parameter '%s' (run weft-info for the list)", name);
        return WEFT_ERR_PARAM;
    }
    if (def->kind == WEFT_PARAM_STRING) {
        weft_error("weft_param_get_int: parameter %s is a string, not a number", name);
        return WEFT_ERR_PARAM;
    }
    *out = weft_params_int(ctx->params, name);
    return WEFT_SUCCESS;
}
