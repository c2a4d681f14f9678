#define _GNU_SOURCE
#include "cstatfs.h"

#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

unsigned long fatchat_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) {
        return 0;
    }
    return (unsigned long)info.f_type;
}

int fatchat_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    // Called through syscall(2): Swift cannot call a variadic C function, and older glibc lacks the wrapper.
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}
