/* Named runtime parameters. Each has a default, may be set by the env
 * variable WEFT_<NAME> (upper case) and then by --weft-<name>=<value> on the
 * command line; weft-info lists them. The list of parameters lives in one
 * table (params_table.c): adding a parameter is one line there. */
#ifndef WEFT_PARAMS_PARAMS_H
#define WEFT_PARAMS_PARAMS_H

#include <stdint.h>
#include <stdio.h>

typedef enum weft_param_kind {
    WEFT_PARAM_INT,   /* decimal integer within [min, max] */
    WEFT_PARAM_BOOL,  /* 0/1, true/false, on/off, yes/no */
    WEFT_PARAM_SIZE,  /* bytes within [min, max], optional K/M/G suffix (powers of 1024) */
    WEFT_PARAM_ENUM,  /* one of the '|'-separated choices */
    WEFT_PARAM_STRING /* free text */
} weft_param_kind_t;

typedef struct weft_param_def {
    const char *name; /* lower case, [a-z0-9_] */
    weft_param_kind_t kind;
    const char *defval;  /* default, in the same syntax as user input */
    int64_t min, max;    /* INT and SIZE: the values the runtime can carry */
    const char *choices; /* ENUM only, e.g. "auto|on|off" */
    const char *help;    /* one line */
} weft_param_def_t;

typedef struct weft_params weft_params_t;

/* A set of values, every parameter at its default. */
int weft_params_create(weft_params_t **out) __attribute__((warn_unused_result));
void weft_params_destroy(weft_params_t *p);

/* Applies env WEFT_<NAME> then --weft-<name>=<value> / --weft-<name> <value>
 * options, removing the latter from argv (argc adjusted). An unknown
 * --weft- option or a malformed value returns WEFT_ERR_PARAM after logging
 * an error that names the option and the expected form. */
int weft_params_load(weft_params_t *p, int *argc, char ***argv) __attribute__((warn_unused_result));

/* The words of argv: *argc of them, or fewer when a NULL comes first; 0
 * when argc, argv or *argv is NULL. */
int weft_params_argv_words(const int *argc, char **const *argv);

/* Sets one parameter from text; WEFT_ERR_PARAM on unknown name or bad value
 * (malformed, or a number outside the parameter's [min, max]: the error
 * names the parameter, the value and the range). */
int weft_params__set(weft_params_t *p, const char *name, const char *value)
    __attribute__((warn_unused_result));

/* Typed reads. Asking for an unknown name or a wrong kind is a programming
 * error (assert). ENUM values read as their index in the choices list and
 * as text with weft_params_str. */
int64_t weft_params_int(const weft_params_t *p, const char *name);
const char *weft_params_str(const weft_params_t *p, const char *name);
/* Any parameter's value as the user wrote it (or its default), for messages. */
const char *weft_params_text(const weft_params_t *p, const char *name);
/* 1 if the user set it (env or command line), 0 if still the default. */
int weft_params_is_set(const weft_params_t *p, const char *name);

/* One line per parameter: name, value, default, help. */
void weft_params_print(const weft_params_t *p, FILE *out);

/* The table entry of a parameter, or NULL for an unknown name (a '-' in
 * name matches '_'). For code that takes names from users, such as
 * weft_param_set, to tell "unknown" from "malformed" and check the kind. */
const weft_param_def_t *weft_params_find(const char *name);

/* The table itself. */
extern const weft_param_def_t weft_param_table[];
extern const int weft_param_count;

#endif
