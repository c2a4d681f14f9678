#ifndef FATCHAT_CSTATFS_H
#define FATCHAT_CSTATFS_H

/// The `f_type` magic of the filesystem holding `path`, from statfs(2); 0 when the call fails.
unsigned long fatchat_filesystem_type(const char *path);

#endif
