// SPDX-License-Identifier: Apache-2.0
/*
 * Linked only into the cross-built tiltd (scripts/cross-build), never into the host build.
 *
 * Why: Debian's static Swift runtime (swiftlang from sid) was compiled against glibc 2.38+.
 * With C23 on, glibc 2.38 headers redirect strtol() and friends to __isoc23_strtol() (which also
 * accepts a "0b" prefix), and the runtime calls strlcpy()/strlcat(), new in glibc 2.38. Debian 12
 * and Raspberry Pi OS bookworm ship glibc 2.36, so the linker would either fail or give the binary
 * GLIBC_2.38 symbol versions that the Pi's loader refuses. Defining them here resolves the
 * references inside the binary, against glibc 2.36's own functions.
 *
 * The __isoc23_* forms differ from the classic ones only for "0b"/"0B" binary literals with base
 * 0 or 2; nothing in the runtime parses those, so the classic functions are used as they are.
 * scripts/cross-build fails the build if any symbol newer than GLIBC_2.36 is still referenced.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The set the runtime's static libraries reference (aarch64-linux-gnu-nm -u on its .a files). */
long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
long long __isoc23_strtoll(const char *s, char **end, int base) { return strtoll(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }

int __isoc23_sscanf(const char *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsscanf(s, fmt, ap);
    va_end(ap);
    return n;
}

/* BSD semantics, as glibc 2.38 implements them: copy/append at most size-1 bytes, always
 * terminate when size > 0, and return the length the full result would have had. */
size_t strlcpy(char *dst, const char *src, size_t size) {
    size_t len = strlen(src);
    if (size > 0) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

size_t strlcat(char *dst, const char *src, size_t size) {
    size_t used = strnlen(dst, size);
    if (used == size) return size + strlen(src);
    return used + strlcpy(dst + used, src, size - used);
}
