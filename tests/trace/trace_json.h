/* A JSON reader for trace files (Chrome trace format), shared by the
 * recorder's unit test (test_trace.c) and the checker of real runs
 * (trace_check.c). It checks the whole syntax (strings down to escapes and
 * UTF-8) and collects each event's fields by track, so that the checks are
 * on what Perfetto would see; C rather than python, which CI machines may
 * lack. Static functions: each program includes it once. */
#ifndef WEFT_TESTS_TRACE_JSON_H
#define WEFT_TESTS_TRACE_JSON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"

#define MAX_TRACKS 256

typedef struct event {
    char ph[8], name[128], cat[32], argname[128], arg_raw[256], arg_transport[16];
    double pid, tid, ts, dur, arg_key, arg_bytes, arg_peer;
    int has_ts, has_dur, has_raw;
} event_t;

/* A "net send" or "net recv" slice: one end of a transfer. */
#define MAX_NET 8192
typedef struct net_end {
    int send, peer, taken;
    double key, bytes;
    char transport[16];
} net_end_t;

/* What a file holds, by track (tid). */
typedef struct summary {
    int nevents, meta_process, meta_sort;
    char process_name[128], unit[16];
    int64_t x_count[MAX_TRACKS], cat_task, cat_evict, cat_api, negative_ts;
    /* Slices that start inside an earlier one of their track and end after
     * every earlier one: overlapping without nesting, which viewers draw
     * wrongly. */
    int64_t crossed;
    double max_end[MAX_TRACKS];
    char track_name[MAX_TRACKS][128];
    double last_ts[MAX_TRACKS];
    int ts_order_ok, pid_ok, rank;
    event_t last; /* the last "X" event, for the edge-case checks */
    net_end_t net[MAX_NET];
    int nnet, net_overflow;
} summary_t;

typedef enum { OBJ_ROOT, OBJ_EVENT, OBJ_ARGS, OBJ_OTHER } obj_kind_t;

typedef struct jp {
    const char *s;
    size_t i;
    int depth;
    summary_t *sum;
} jp_t;

/* Where a scalar value is kept, if anywhere. */
typedef struct target {
    char *str;
    size_t strsz;
    double *num;
} target_t;

static int jp_value(jp_t *p, obj_kind_t kind, event_t *ev, const target_t *t);

static void jp_ws(jp_t *p)
{
    while (p->s[p->i] && strchr(" \t\r\n", p->s[p->i])) p->i++;
}

static int is_cont(unsigned char c) { return c >= 0x80 && c <= 0xBF; }

/* A well-formed UTF-8 sequence (RFC 3629) starting at s: its length, or 0. */
static int utf8_seq(const unsigned char *s)
{
    if (s[0] >= 0xC2 && s[0] <= 0xDF) return is_cont(s[1]) ? 2 : 0;
    if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F)) return 0;
        return is_cont(s[1]) && is_cont(s[2]) ? 3 : 0;
    }
    if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        if ((s[0] == 0xF0 && s[1] < 0x90) || (s[0] == 0xF4 && s[1] > 0x8F)) return 0;
        return is_cont(s[1]) && is_cont(s[2]) && is_cont(s[3]) ? 4 : 0;
    }
    return 0;
}

/* A string; its text (escapes kept as written, cut to outsz) into out. */
static int jp_string(jp_t *p, char *out, size_t outsz)
{
    size_t n = 0;
    if (p->s[p->i++] != '"') return 0;
    for (;;) {
        unsigned char c = (unsigned char)p->s[p->i];
        int len = 1;
        if (c == '"') break;
        if (c < 0x20) return 0;
        if (c == '\\') {
            char e = p->s[p->i + 1];
            if (!e || !strchr("\"\\/bfnrtu", e)) return 0;
            len = 2;
            for (int k = 0; e == 'u' && k < 4; k++, len++)
                if (!p->s[p->i + 2 + k] || !strchr("0123456789abcdefABCDEF", p->s[p->i + 2 + k]))
                    return 0;
        } else if (c >= 0x80 && !(len = utf8_seq((const unsigned char *)p->s + p->i))) {
            return 0;
        }
        for (int k = 0; k < len; k++, p->i++)
            if (out && n + 1 < outsz) out[n++] = p->s[p->i];
    }
    p->i++;
    if (out) out[n] = '\0';
    return 1;
}

static const char *digits(const char *s)
{
    while (*s >= '0' && *s <= '9') s++;
    return s;
}

static int jp_number(jp_t *p, double *out)
{
    const char *s = p->s + p->i, *start = s;
    if (*s == '-') s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        s = digits(s);
    else
        return 0;
    if (*s == '.') {
        if (digits(s + 1) == s + 1) return 0;
        s = digits(s + 1);
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (digits(s) == s) return 0;
        s = digits(s);
    }
    if (out) *out = strtod(start, NULL);
    p->i += (size_t)(s - start);
    return 1;
}

#define KEEP_STR(t, field) ((t)->str = (field), (t)->strsz = sizeof(field))

/* Where the value of member key of a kind-object goes, and the kind of
 * object (or array element) that value is. */
static obj_kind_t route(obj_kind_t kind, const char *key, event_t *ev, summary_t *sum, target_t *t)
{
    memset(t, 0, sizeof *t);
    if (kind == OBJ_ROOT) {
        if (strcmp(key, "displayTimeUnit") == 0) KEEP_STR(t, sum->unit);
        return strcmp(key, "traceEvents") == 0 ? OBJ_EVENT : OBJ_OTHER;
    }
    if (kind == OBJ_ARGS) {
        if (strcmp(key, "name") == 0) KEEP_STR(t, ev->argname);
        if (strcmp(key, "key") == 0) t->num = &ev->arg_key;
        if (strcmp(key, "bytes") == 0) t->num = &ev->arg_bytes;
        if (strcmp(key, "peer") == 0) t->num = &ev->arg_peer;
        if (strcmp(key, "transport") == 0) KEEP_STR(t, ev->arg_transport);
        if (strcmp(key, "args_raw") == 0) KEEP_STR(t, ev->arg_raw), ev->has_raw = 1;
        return OBJ_OTHER;
    }
    if (kind != OBJ_EVENT) return OBJ_OTHER;
    if (strcmp(key, "args") == 0) return OBJ_ARGS;
    if (strcmp(key, "ph") == 0) KEEP_STR(t, ev->ph);
    if (strcmp(key, "name") == 0) KEEP_STR(t, ev->name);
    if (strcmp(key, "cat") == 0) KEEP_STR(t, ev->cat);
    if (strcmp(key, "pid") == 0) t->num = &ev->pid;
    if (strcmp(key, "tid") == 0) t->num = &ev->tid;
    if (strcmp(key, "ts") == 0) t->num = &ev->ts, ev->has_ts = 1;
    if (strcmp(key, "dur") == 0) t->num = &ev->dur, ev->has_dur = 1;
    return OBJ_OTHER;
}

static void record_event(summary_t *sum, const event_t *ev);

/* An object; an event object collects its fields and is counted at its end. */
static int jp_object(jp_t *p, obj_kind_t kind, event_t *ev)
{
    event_t mine = {.tid = -1};
    if (kind == OBJ_EVENT) ev = &mine;
    p->i++;
    jp_ws(p);
    if (p->s[p->i] == '}') return p->i++, 1;
    for (;;) {
        char key[64];
        target_t t;
        jp_ws(p);
        if (!jp_string(p, key, sizeof key)) return 0;
        jp_ws(p);
        if (p->s[p->i++] != ':') return 0;
        jp_ws(p);
        if (!jp_value(p, route(kind, key, ev, p->sum, &t), ev, &t)) return 0;
        jp_ws(p);
        char c = p->s[p->i++];
        if (c == '}') break;
        if (c != ',') return 0;
    }
    if (kind == OBJ_EVENT) record_event(p->sum, ev);
    return 1;
}

/* Arrays pass their element kind down: the traceEvents array holds events. */
static int jp_array(jp_t *p, obj_kind_t elem)
{
    static const target_t none;
    p->i++;
    jp_ws(p);
    if (p->s[p->i] == ']') return p->i++, 1;
    for (;;) {
        jp_ws(p);
        if (!jp_value(p, elem, NULL, &none)) return 0;
        jp_ws(p);
        char c = p->s[p->i++];
        if (c == ']') return 1;
        if (c != ',') return 0;
    }
}

static int jp_value(jp_t *p, obj_kind_t kind, event_t *ev, const target_t *t)
{
    static const char *const words[] = {"true", "false", "null"};
    char c = p->s[p->i];
    int ok = 0;
    if (++p->depth > 32) return 0;
    if (c == '{')
        ok = jp_object(p, kind, ev);
    else if (c == '[')
        ok = jp_array(p, kind == OBJ_EVENT ? OBJ_EVENT : OBJ_OTHER);
    else if (c == '"')
        ok = jp_string(p, t->str, t->strsz);
    else if (c == '-' || (c >= '0' && c <= '9'))
        ok = jp_number(p, t->num);
    for (int w = 0; w < 3 && !ok && c >= 'a' && c <= 'z'; w++)
        if (strncmp(p->s + p->i, words[w], strlen(words[w])) == 0) ok = 1, p->i += strlen(words[w]);
    p->depth--;
    return ok;
}

static void record_event(summary_t *sum, const event_t *ev)
{
    int tid = (int)ev->tid;
    sum->nevents++;
    if ((int)ev->pid != sum->rank) sum->pid_ok = 0;
    if (tid < 0 || tid >= MAX_TRACKS) return;
    if (strcmp(ev->ph, "M") == 0) {
        if (strcmp(ev->name, "process_name") == 0)
            sum->meta_process++,
                snprintf(sum->process_name, sizeof sum->process_name, "%s", ev->argname);
        else if (strcmp(ev->name, "thread_name") == 0)
            snprintf(sum->track_name[tid], sizeof sum->track_name[tid], "%s", ev->argname);
        else if (strcmp(ev->name, "thread_sort_index") == 0)
            sum->meta_sort++;
        return;
    }
    if (strcmp(ev->ph, "X") != 0 || !ev->has_ts || !ev->has_dur || ev->dur < 0) return;
    if (sum->x_count[tid] > 0 && ev->ts < sum->last_ts[tid]) sum->ts_order_ok = 0;
    if (sum->x_count[tid] > 0 && ev->ts < sum->max_end[tid] && ev->ts + ev->dur > sum->max_end[tid])
        sum->crossed++;
    if (sum->x_count[tid] == 0 || ev->ts + ev->dur > sum->max_end[tid])
        sum->max_end[tid] = ev->ts + ev->dur;
    sum->last_ts[tid] = ev->ts;
    sum->x_count[tid]++;
    sum->cat_task += strcmp(ev->cat, "task") == 0;
    sum->cat_evict += strcmp(ev->cat, "evict") == 0;
    sum->cat_api += strcmp(ev->cat, "api") == 0;
    sum->negative_ts += ev->ts < 0;
    sum->last = *ev;
    int send = strcmp(ev->name, "net send") == 0;
    if (!send && strcmp(ev->name, "net recv") != 0) return;
    if (sum->nnet == MAX_NET) {
        sum->net_overflow = 1;
        return;
    }
    net_end_t *e = &sum->net[sum->nnet++];
    *e = (net_end_t){send, (int)ev->arg_peer, 0, ev->arg_key, ev->arg_bytes, ""};
    snprintf(e->transport, sizeof e->transport, "%s", ev->arg_transport);
}

/* Parse the whole file at path; 0 when it is not exactly one JSON value. */
static int parse_file(const char *path, int rank, summary_t *sum)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    REQUIRE(buf && fread(buf, 1, (size_t)len, f) == (size_t)len);
    buf[len] = '\0';
    fclose(f);
    memset(sum, 0, sizeof *sum);
    sum->ts_order_ok = sum->pid_ok = 1;
    sum->rank = rank;
    jp_t p = {.s = buf, .sum = sum};
    static const target_t none;
    jp_ws(&p);
    int ok = p.s[p.i] == '{' && jp_value(&p, OBJ_ROOT, NULL, &none);
    jp_ws(&p);
    ok = ok && p.i == (size_t)len;
    free(buf);
    return ok;
}

#endif
