/*
 * errmsg.h - the one way a function reports what went wrong into its
 * caller's buffer (char *err, size_t errlen: curl's and git's habit, what
 * every parser and loader here takes), so each module does not carry its
 * own printf wrapper.
 */
#ifndef OTA_ERRMSG_H
#define OTA_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Writes the printf-style message into err (cut to errlen - 1 bytes and
 * NUL-terminated; nothing when errlen is 0) and returns -1, so a failing
 * path reads `return errmsg_set(err, errlen, "...", ...);`. */
int errmsg_set(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* errmsg_set with the arguments as a va_list, for a module's own wrapper
 * that adds a prefix or marks its state failed. */
int errmsg_vset(char *err, size_t errlen, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#endif
