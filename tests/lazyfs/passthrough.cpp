// walseg_lazyfs --passthrough: every call goes straight to a backing directory (no buffering in
// this program, and no page cache in the kernel for the mount: direct_io), so that benchmarks
// and tests can run walseg on a real disk behind FUSE, optionally with fallocate refused
// (--no-fallocate: EOPNOTSUPP, as NFS before 4.2 answers). There is no power-cut model here:
// drop, persist, fail-fsync and capacity are the in-memory mode's (mem_fs.h).
//
// O_DIRECT is not passed to the backing file: FUSE hands this program its data in buffers of
// its own, not aligned for the backing filesystem's O_DIRECT, so the backing write is buffered
// and only fsync/fdatasync (passed through) make it durable, as for O_DIRECT writes (durable only after the next flush).
// O_DSYNC and O_SYNC are passed through. Locks are kept by the kernel (not implemented here).
// Uses libfuse's high-level (path) API, single-threaded; the state lives for the mount.
#include "passthrough.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#define FUSE_USE_VERSION 35
#include <fuse3/fuse.h>

#include <fmt/format.h>

#include "control.h"

namespace lazyfs {
namespace {

struct PassState {
  std::string root;
  bool no_fallocate = false;
  std::atomic<std::uint64_t> writes{0}, bytes{0}, fsyncs{0}, dir_fsyncs{0}, fallocates_refused{0};
};

PassState& state() { return *static_cast<PassState*>(fuse_get_context()->private_data); }
std::string real(const char* path) { return state().root + path; }
int result(int r) { return r < 0 ? -errno : r; }

// Files made for another user belong to that user, as on a local filesystem.
void own(const std::string& path) {
  const fuse_context* c = fuse_get_context();
  if (c->uid != 0 || c->gid != 0) (void)::lchown(path.c_str(), c->uid, c->gid);
}

void* pt_init(fuse_conn_info* conn, fuse_config* cfg) {
  cfg->use_ino = 1;
  cfg->hard_remove = 1;  // an unlinked open file is not renamed to .fuse_hidden*
  cfg->direct_io = 1;
  cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 0;
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_POSIX_LOCKS | FUSE_CAP_ASYNC_DIO);
  conn->max_write = 1 << 20;
  return fuse_get_context()->private_data;
}

// A handle is used only when there is no path (an unlinked open file): directories are not
// opened here, so a directory's fi->fh is no descriptor.
bool by_handle(const char* path, const fuse_file_info* fi) { return path == nullptr && fi != nullptr; }

int pt_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  return result(by_handle(path, fi) ? ::fstat(static_cast<int>(fi->fh), st) : ::lstat(real(path).c_str(), st));
}

int pt_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags) {
  DIR* d = ::opendir(real(path).c_str());
  if (d == nullptr) return -errno;
  while (struct dirent* e = ::readdir(d)) {
    struct stat st{};
    st.st_ino = e->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(e->d_type));
    if (fill(buf, e->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) break;
  }
  ::closedir(d);
  return 0;
}

int pt_mkdir(const char* path, mode_t mode) {
  int r = result(::mkdir(real(path).c_str(), mode));
  if (r == 0) own(real(path));
  return r;
}

int pt_unlink(const char* path) { return result(::unlink(real(path).c_str())); }
int pt_rmdir(const char* path) { return result(::rmdir(real(path).c_str())); }
int pt_link(const char* from, const char* to) { return result(::link(real(from).c_str(), real(to).c_str())); }

int pt_rename(const char* from, const char* to, unsigned int flags) {
  return result(static_cast<int>(
      ::syscall(SYS_renameat2, AT_FDCWD, real(from).c_str(), AT_FDCWD, real(to).c_str(), flags)));
}

int pt_chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  return result(by_handle(path, fi) ? ::fchmod(static_cast<int>(fi->fh), mode) : ::chmod(real(path).c_str(), mode));
}

int pt_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info* fi) {
  return result(by_handle(path, fi) ? ::fchown(static_cast<int>(fi->fh), uid, gid) : ::lchown(real(path).c_str(), uid, gid));
}

int pt_truncate(const char* path, off_t size, fuse_file_info* fi) {
  return result(fi != nullptr ? ::ftruncate(static_cast<int>(fi->fh), size) : ::truncate(real(path).c_str(), size));
}

int pt_utimens(const char* path, const struct timespec ts[2], fuse_file_info* fi) {
  return result(by_handle(path, fi) ? ::futimens(static_cast<int>(fi->fh), ts)
                              : ::utimensat(AT_FDCWD, real(path).c_str(), ts, AT_SYMLINK_NOFOLLOW));
}

int pt_create(const char* path, mode_t mode, fuse_file_info* fi) {
  int fd = ::open(real(path).c_str(), (fi->flags & ~O_DIRECT) | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  own(real(path));
  fi->fh = static_cast<std::uint64_t>(fd);
  return 0;
}

int pt_open(const char* path, fuse_file_info* fi) {
  int fd = ::open(real(path).c_str(), (fi->flags & ~O_DIRECT) | O_CLOEXEC);
  if (fd < 0) return -errno;
  fi->fh = static_cast<std::uint64_t>(fd);
  return 0;
}

int pt_read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  return result(static_cast<int>(::pread(static_cast<int>(fi->fh), buf, size, off)));
}

int pt_write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  ssize_t r = ::pwrite(static_cast<int>(fi->fh), buf, size, off);
  if (r < 0) return -errno;
  ++state().writes;
  state().bytes += static_cast<std::uint64_t>(r);
  return static_cast<int>(r);
}

int pt_statfs(const char* path, struct statvfs* st) { return result(::statvfs(real(path).c_str(), st)); }
int pt_release(const char*, fuse_file_info* fi) { return result(::close(static_cast<int>(fi->fh))); }

int pt_fsync(const char*, int datasync, fuse_file_info* fi) {
  ++state().fsyncs;
  int fd = static_cast<int>(fi->fh);
  return result(datasync != 0 ? ::fdatasync(fd) : ::fsync(fd));
}

int pt_fsyncdir(const char* path, int, fuse_file_info*) {
  int fd = ::open(real(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int r = result(::fsync(fd));
  ::close(fd);
  ++state().dir_fsyncs;
  return r;
}

int pt_fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
  if (state().no_fallocate) {
    ++state().fallocates_refused;
    return -EOPNOTSUPP;
  }
  return result(::fallocate(static_cast<int>(fi->fh), mode, off, len));
}

fuse_operations passthrough_ops() {
  fuse_operations o{};
  o.init = pt_init;
  o.getattr = pt_getattr;
  o.readdir = pt_readdir;
  o.mkdir = pt_mkdir;
  o.unlink = pt_unlink;
  o.rmdir = pt_rmdir;
  o.rename = pt_rename;
  o.link = pt_link;
  o.chmod = pt_chmod;
  o.chown = pt_chown;
  o.truncate = pt_truncate;
  o.utimens = pt_utimens;
  o.create = pt_create;
  o.open = pt_open;
  o.read = pt_read;
  o.write = pt_write;
  o.statfs = pt_statfs;
  o.release = pt_release;
  o.fsync = pt_fsync;
  o.fsyncdir = pt_fsyncdir;
  o.fallocate = pt_fallocate;
  return o;
}

std::string answer(PassState& s, const std::string& line) {
  if (line == "stats" || line == "ping")
    return fmt::format("ok mode=passthrough writes={} bytes_written={} fsyncs={} dir_fsyncs={} "
                       "fallocates_refused={}",
                       s.writes.load(), s.bytes.load(), s.fsyncs.load(), s.dir_fsyncs.load(),
                       s.fallocates_refused.load());
  return "error \"" + line + "\" needs the in-memory mode (mount without --passthrough)";
}

}  // namespace

int run_passthrough(fuse_args* args, const std::string& mountpoint, const std::string& backing, bool no_fallocate,
                    const std::string& control_path) {
  PassState s;
  s.root = backing;
  s.no_fallocate = no_fallocate;
  fuse_operations ops = passthrough_ops();
  fuse* f = fuse_new(args, &ops, sizeof ops, &s);
  if (f == nullptr) return 1;
  int rc = 1;
  if (fuse_mount(f, mountpoint.c_str()) == 0) {
    if (fuse_set_signal_handlers(fuse_get_session(f)) == 0) {
      if (auto ctl = start_control(control_path, [&s](const std::string& line) { return answer(s, line); }))
        rc = fuse_loop(f) == 0 ? 0 : 1;
      fuse_remove_signal_handlers(fuse_get_session(f));
    }
    fuse_unmount(f);
  }
  fuse_destroy(f);
  return rc;
}

}  // namespace lazyfs
