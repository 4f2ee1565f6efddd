/* The whole text of a file, for tests that read what weft wrote (trace
 * files): malloc'ed and NUL-terminated, NULL when it cannot be read. */
#ifndef WEFT_TESTS_FILE_TEXT_H
#define WEFT_TESTS_FILE_TEXT_H

#include <stdio.h>
#include <stdlib.h>

static inline char *test_file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = NULL;
    size_t cap = 0, len = 0, got = 0;
    do {
        if (len + 65536 > cap) {
            char *more = realloc(text, cap = 2 * cap + 65536);
            if (!more) {
                free(text);
                fclose(f);
                return NULL;
            }
            text = more;
        }
        got = fread(text + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    text[len] = '\0';
    return text;
}

#endif
