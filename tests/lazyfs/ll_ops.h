// The FUSE low-level operation table of walseg_lazyfs's in-memory mode (ll_ops.cpp); the
// session's userdata must be the MemFs (mem_fs.h) it serves, alive until the session ends.
#pragma once

#define FUSE_USE_VERSION 35
#include <fuse3/fuse_lowlevel.h>

namespace lazyfs {

fuse_lowlevel_ops mem_fs_ops();

}  // namespace lazyfs
