/*
 * flags.c - see flags.h.
 */
#include "flags.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *flags_lease_namespace(const char *flag, const char *sa_dir, char *buf, size_t len)
{
    if (flag != NULL && flag[0] != '\0')
        return flag;
    char path[512];
    snprintf(path, sizeof(path), "%s/namespace", sa_dir);
    FILE *f = fopen(path, "re");
    if (f != NULL && len > 0) {
        size_t n = fread(buf, 1, len - 1, f);
        buf[n] = '\0';
        while (n > 0 && isspace((unsigned char)buf[n - 1]))
            buf[--n] = '\0';
        fclose(f);
        /* a namespace name is a DNS label: anything else is not one */
        int ok = n > 0 && n <= 63;
        for (size_t i = 0; i < n && ok; i++)
            ok = (buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= '0' && buf[i] <= '9') ||
                 buf[i] == '-';
        if (ok)
            return buf;
    } else if (f != NULL) {
        fclose(f);
    }
    return FLAGS_DEFAULT_LEASE_NAMESPACE;
}
