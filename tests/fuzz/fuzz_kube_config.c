/*
 * fuzz_kube_config.c - the kubeconfig reader (kube/kube_config.c) on any
 * file: kube_config_load_file() is the entry point, so each input is written
 * to a file of this process's own (memfd, no disk) and loaded from
 * /proc/self/fd.
 *
 * Properties: no crash, leak or undefined behaviour; an error has a
 * one-line message; a success has a server.  Paths named inside the file
 * are not read at load time (the token file only by kube_config_token(),
 * which is not called), so an input cannot make the harness read the disk.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "kube_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("kubeconfig", 0);
        FUZZ_CHECK(fd >= 0, "memfd_create failed");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size, "write failed");
    kube_config c;
    char err[256] = "";
    int rc = kube_config_load_file(&c, path, err, sizeof(err));
    if (rc != 0)
        FUZZ_CHECK(err[0] != '\0' && strchr(err, '\n') == NULL, "message \"%s\"", err);
    kube_config_free(&c);
    return 0;
}
