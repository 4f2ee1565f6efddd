/* The JSON text of trace files (jsontext.h): the string escaper and the
 * check that a slice's argument text is JSON members. */
#include "trace/jsontext.h"

#include <stddef.h>
#include <string.h>

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF), 0 when there is none. Names cut at
 * their field size may end inside a sequence; JSON readers reject that. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * invalid UTF-8 replaced by U+FFFD. The caller holds f's lock. */
void weft_trace__put_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    putc_unlocked('"', f);
    while (*s) {
        size_t n = utf8_len(s);
        if (*s == '"' || *s == '\\') {
            putc_unlocked('\\', f);
            putc_unlocked(*s, f);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
        } else if (n == 0) {
            fputs("\\ufffd", f);
            n = 1;
        } else {
            fwrite(s, 1, n, f);
        }
        s += n;
    }
    putc_unlocked('"', f);
}

static size_t skip_ws(const char *s, size_t i)
{
    while (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') i++;
    return i;
}

/* Index after the JSON string starting at s[i], 0 when it is not one. */
static size_t scan_string(const char *s, size_t i)
{
    if (s[i++] != '"') return 0;
    for (;;) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"') return i + 1;
        if (c < 0x20) return 0; /* also the end of s: unterminated */
        if (c == '\\') {
            c = (unsigned char)s[++i];
            if (c == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!s[i + k] || !strchr("0123456789abcdefABCDEF", s[i + k])) return 0;
                i += 4;
            } else if (!c || !strchr("\"\\/bfnrt", c)) {
                return 0;
            }
            i++;
            continue;
        }
        size_t n = utf8_len((const unsigned char *)s + i);
        if (!n) return 0;
        i += n;
    }
}

static size_t scan_digits(const char *s, size_t i)
{
    size_t j = i;
    while (s[j] >= '0' && s[j] <= '9') j++;
    return j > i ? j : 0;
}

/* Index after the JSON number starting at s[i], 0 when it is not one
 * (printf's "inf" and "nan" are not). */
static size_t scan_number(const char *s, size_t i)
{
    if (s[i] == '-') i++;
    if (s[i] == '0')
        i++;
    else if (!(i = scan_digits(s, i)))
        return 0;
    if (s[i] == '.' && !(i = scan_digits(s, i + 1))) return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        i++;
        if (s[i] == '+' || s[i] == '-') i++;
        if (!(i = scan_digits(s, i))) return 0;
    }
    return i;
}

static size_t scan_scalar(const char *s, size_t i)
{
    static const char *const words[] = {"true", "false", "null"};
    if (s[i] == '"') return scan_string(s, i);
    for (int w = 0; w < 3; w++)
        if (strncmp(s + i, words[w], strlen(words[w])) == 0) return i + strlen(words[w]);
    return scan_number(s, i);
}

/* Length of the longest prefix of args made of whole "key":scalar members,
 * strlen(args) when all of it is. Args are formatted by callers at record
 * time and may be cut or carry an unescaped string; checking here, once per
 * slice at write time, keeps the file valid without costing the hot path. */
static size_t args_valid_prefix(const char *args)
{
    size_t good = 0, i = skip_ws(args, 0);
    if (!args[i]) return i;
    for (;;) {
        size_t end;
        if (!(i = scan_string(args, i))) return good;
        i = skip_ws(args, i);
        if (args[i] != ':') return good;
        if (!(end = scan_scalar(args, skip_ws(args, i + 1)))) return good;
        i = skip_ws(args, end);
        if (!args[i]) return i;
        /* A member counts once a comma follows it: with an unescaped quote
         * inside a string, "who":"a"b" scans as "who":"a" and then fails,
         * and that first part is not what the caller meant. */
        if (args[i] != ',') return good;
        good = end;
        i = skip_ws(args, i + 1);
    }
}

void weft_trace__put_args(FILE *f, const char *args)
{
    size_t good = args_valid_prefix(args);
    fputs(",\"args\":{", f);
    fwrite(args, 1, good, f);
    if (args[good]) {
        fputs(good ? ",\"args_raw\":" : "\"args_raw\":", f);
        weft_trace__put_string(f, args);
    }
    putc_unlocked('}', f);
}
