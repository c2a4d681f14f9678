#define _GNU_SOURCE
#include "cstatfs.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/stat.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
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

int fatchat_fresh_status(int dirfd, const char *name, struct stat *out) {
    // statx(2) through syscall(2), for the same reasons as above. AT_STATX_FORCE_SYNC makes a FUSE
    // mount ask its server rather than answer from the attributes it cached (GlusterFS keeps them 1 s).
    struct statx info;
    memset(&info, 0, sizeof info);
    if (syscall(SYS_statx, dirfd, name, AT_SYMLINK_NOFOLLOW | AT_STATX_FORCE_SYNC, STATX_BASIC_STATS, &info) != 0) {
        if (errno == ENOSYS) {
            return fstatat(dirfd, name, out, AT_SYMLINK_NOFOLLOW);
        }
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->st_dev = makedev(info.stx_dev_major, info.stx_dev_minor);
    out->st_ino = info.stx_ino;
    out->st_mode = info.stx_mode;
    out->st_nlink = info.stx_nlink;
    out->st_uid = info.stx_uid;
    out->st_gid = info.stx_gid;
    out->st_rdev = makedev(info.stx_rdev_major, info.stx_rdev_minor);
    out->st_size = (off_t)info.stx_size;
    out->st_blksize = info.stx_blksize;
    out->st_blocks = (blkcnt_t)info.stx_blocks;
    out->st_atim.tv_sec = info.stx_atime.tv_sec;
    out->st_atim.tv_nsec = info.stx_atime.tv_nsec;
    out->st_mtim.tv_sec = info.stx_mtime.tv_sec;
    out->st_mtim.tv_nsec = info.stx_mtime.tv_nsec;
    out->st_ctim.tv_sec = info.stx_ctime.tv_sec;
    out->st_ctim.tv_nsec = info.stx_ctime.tv_nsec;
    return 0;
}

int fatchat_direct_io_flag(void) {
    return O_DIRECT;
}

int fatchat_name_this_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int fatchat_use_one_malloc_arena(void) {
    return mallopt(M_ARENA_MAX, 1);
}

int fatchat_give_back_free_memory(void) {
    return malloc_trim(0);
}
