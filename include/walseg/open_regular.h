// Opening an existing name only if it is a regular file, without opening anything else.
//
// open(2) of a device node runs its driver's open routine (a tape rewinds, a watchdog starts),
// and of a FIFO waits for a writer, before any fstat can tell that the name is not a file
// walseg may use (break-it round 18: walseg.lock, --json and --ack-log were opened O_RDWR
// first and checked after). The name is found with O_PATH | O_NOFOLLOW, which opens nothing,
// checked with fstat, and only then reopened as that same inode through /proc/self/fd, so a
// name re-pointed in between is not followed. Where /proc is not mounted it is reopened by
// name with O_NOFOLLOW and the inode compared: a name re-pointed in that window to another
// regular file is refused (EAGAIN), though a device put there would have been opened.
//
// Thread-safety: none needed (no shared state).
#pragma once

#include <sys/stat.h>

namespace walseg {

struct RegularOpen {
  int fd = -1;               ///< the open file (the caller owns it), or -1
  int err = 0;               ///< errno of the step that failed (ENOENT: no such name); 0 else
  bool not_regular = false;  ///< the name exists and is not a regular file (st says what)
  struct stat st{};          ///< what the name is (of the open file when fd >= 0)
};

/// Entry `name` of the directory `dirfd`, opened with `flags` | O_CLOEXEC (O_CREAT, O_EXCL
/// and O_TRUNC are dropped: only an existing file is opened, and never truncated) when it is
/// a regular file. A symbolic link is not followed (not_regular, S_ISLNK(st.st_mode)) unless
/// follow_links, for a file the user names (a settings file linked into conf.d): then what
/// it points to is checked and opened. Retries EINTR. No failpoint is consulted: callers that
/// count opens wrap it.
RegularOpen open_if_regular(int dirfd, const char* name, int flags, bool follow_links = false);

}  // namespace walseg
