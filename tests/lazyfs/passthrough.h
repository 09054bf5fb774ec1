// walseg_lazyfs's pass-through mode (passthrough.cpp): mounts `mountpoint` over `backing`,
// answering "stats" on the control socket, until unmounted (fusermount3 -u) or signalled.
#pragma once

#include <string>

struct fuse_args;

namespace lazyfs {

/// args: libfuse options (fsname, allow_other, -d); returns the exit status.
int run_passthrough(fuse_args* args, const std::string& mountpoint, const std::string& backing, bool no_fallocate,
                    const std::string& control_path);

}  // namespace lazyfs
