/* Reading one parameter's text as its kind: the five kinds' parsers, the
 * normalized text a value keeps, and the range text errors and the listing
 * show. Internal to the parameter registry (params.c). */
#ifndef WEFT_PARAMS_PARAMS_PARSE_H
#define WEFT_PARAMS_PARAMS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "params/params.h"

/* Room for the reason a text was refused. */
#define WEFT_PARAMS_WHY_LEN 256

/* A fresh NUL-ended copy of s[0..len), NULL without memory. */
char *weft_params__text_dup(const char *s, size_t len);

/* 1 or 0 for a boolean word (1|0|true|false|on|off|yes|no, any case), -1
 * for anything else. */
int weft_params__bool_word(const char *s);

/* Reads text as parameter d's kind: *num, and *kept the text to show (a
 * normalized spelling, malloc'd); or WEFT_ERR_PARAM with why filled
 * (WEFT_PARAMS_WHY_LEN bytes), or WEFT_ERR_NOMEM. */
int weft_params__parse(const weft_param_def_t *d, const char *text, int64_t *num, char **kept,
                       char *why);

/* "[lo, hi]" of a SIZE parameter with its sizes in K/M/G. */
void weft_params__range_text(const weft_param_def_t *d, char *buf, size_t len);

#endif
