#include "cstatfs.h"

#include <sys/vfs.h>

unsigned long fatchat_filesystem_type(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) {
        return 0;
    }
    return (unsigned long)info.f_type;
}
