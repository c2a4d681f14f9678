#ifndef FATCHAT_CSTATFS_H
#define FATCHAT_CSTATFS_H

#include <sys/stat.h>

/// The `f_type` magic of the filesystem holding `path`, from statfs(2); 0 when the call fails.
unsigned long fatchat_filesystem_type(const char *path);

/// renameat2(2) with RENAME_NOREPLACE: renames only if `newpath` does not exist. Returns 0 or -1 with errno
/// (EEXIST when it exists; EINVAL or ENOSYS where the filesystem or kernel lacks the flag).
int fatchat_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// fstatat(2) of `name` in `dirfd`, not following a symlink, but with statx(2)'s AT_STATX_FORCE_SYNC:
/// a network filesystem asks its server instead of answering from its attribute cache. Returns 0 or -1 with errno.
int fatchat_fresh_status(int dirfd, const char *name, struct stat *out);

/// O_DIRECT, which Swift's Glibc module leaves out (its value differs between architectures).
int fatchat_direct_io_flag(void);

/// pthread_setname_np(3) of the calling thread, which Swift's Glibc module leaves out; `name` must be at most
/// 15 bytes. Returns 0 or an error number.
int fatchat_name_this_thread(const char *name);

/// mallopt(3) M_ARENA_MAX = 1: every thread allocates from the main arena. Returns 1 on success.
int fatchat_use_one_malloc_arena(void);

/// malloc_trim(3) with no padding: free heap pages go back to the system. Returns 1 if any did.
int fatchat_give_back_free_memory(void);

#endif
