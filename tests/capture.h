/* Captures what the library prints on stderr between capture_begin and
 * capture_end, so that a test can check the wording of an error message
 * itself (and fail when it is missing) while the lines still reach the
 * test log. */
#ifndef WEFT_TESTS_CAPTURE_H
#define WEFT_TESTS_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int capture_saved_fd = -1;
static FILE *capture_file;
static char capture_text[16384];

static inline void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    if (!capture_file) return;
    capture_saved_fd = dup(2);
    dup2(fileno(capture_file), 2);
}

/* The text captured (also echoed to the real stderr). */
static inline const char *capture_end(void)
{
    capture_text[0] = '\0';
    if (!capture_file) return capture_text;
    fflush(stderr);
    dup2(capture_saved_fd, 2);
    close(capture_saved_fd);
    rewind(capture_file);
    size_t n = fread(capture_text, 1, sizeof capture_text - 1, capture_file);
    capture_text[n] = '\0';
    fclose(capture_file);
    capture_file = NULL;
    fputs(capture_text, stderr);
    return capture_text;
}

/* 1 when the captured text holds `needle`. */
static inline int captured(const char *needle) { return strstr(capture_text, needle) != NULL; }

#endif
