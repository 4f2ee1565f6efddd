/* The JSON text of trace files: strings escaped (UTF-8 checked), and a
 * slice's argument members written as given where they parse as JSON
 * members, else kept whole as an escaped "args_raw" string (trace.h's
 * weft_trace_record contract). */
#ifndef WEFT_TRACE_JSONTEXT_H
#define WEFT_TRACE_JSONTEXT_H

#include <stdio.h>

/* str as a JSON string, quotes included (unlocked writes: the caller holds
 * the file's lock). */
void weft_trace__put_string(FILE *f, const char *str);
/* ,"args":{...} for the member text args. */
void weft_trace__put_args(FILE *f, const char *args);

#endif
