/* Byte counts in the statistics' lines, in MiB as scripts parse them. */
#ifndef WEFT_UTIL_MIB_H
#define WEFT_UTIL_MIB_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    char s[32];
} weft_mib_text_t;

/* One decimal, as always; a count that it would show as 0.0 gets the
 * decimals that show its first two digits (4 KiB: "0.0039"): a device
 * capped at 4 KiB read "peak 0.0 of 0.0 MiB". Plain digits, never an
 * exponent, so a pattern [0-9.]+ still reads it. Used inside one printf
 * call's arguments (the text lives to the end of the full expression). */
static inline weft_mib_text_t weft_mib_text(int64_t bytes)
{
    weft_mib_text_t t;
    double v = (double)bytes / (1024.0 * 1024.0);
    int decimals = 1;
    if (v > 0 && v < 0.05)
        for (double least = 1; decimals < 7 && v < least; least /= 10) decimals++;
    snprintf(t.s, sizeof t.s, "%.*f", decimals, v);
    return t;
}

#endif
