// FUSE low-level operations of walseg_lazyfs's in-memory mode: each request is handed to MemFs
// (mem_fs.h) and its result turned into the reply.
//
// Kernel caching is switched off wherever it could outlive a drop(): every file is opened with
// direct_io (no page cache: each read and write reaches MemFs, so a read after a drop sees the
// durable copy), and entry and attribute timeouts are 0 (every path lookup and stat asks
// again, so a name undone by a drop is gone at once). flock and POSIX locks are not
// implemented, so the kernel keeps them itself for this mount, which is enough for walseg's
// DirLock (flock between processes on one machine).
#include "ll_ops.h"

#include <cerrno>
#include <memory>
#include <vector>

#include "mem_fs.h"

namespace lazyfs {
namespace {

MemFs& fs(fuse_req_t req) { return *static_cast<MemFs*>(fuse_req_userdata(req)); }

void reply_entry(fuse_req_t req, int r, const struct stat& st) {
  if (r != 0) {
    fuse_reply_err(req, -r);
    return;
  }
  fuse_entry_param e{};
  e.ino = st.st_ino;
  e.generation = 1;  // inode numbers are never reused
  e.attr = st;
  fuse_reply_entry(req, &e);
}

void reply_attr(fuse_req_t req, int r, const struct stat& st) {
  if (r != 0) fuse_reply_err(req, -r);
  else fuse_reply_attr(req, &st, 0);
}

void op_init(void*, fuse_conn_info* conn) {
  // Without FUSE_CAP_ASYNC_DIO: the kernel's asynchronous direct I/O path (taken by io_uring
  // and AIO) reports a short write as EIO, so ENOSPC at the capacity would reach walseg as
  // "Input/output error"; the synchronous path returns the short count, as a disk does.
  conn->want &= ~(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_POSIX_LOCKS | FUSE_CAP_ASYNC_DIO);
  conn->max_write = 1 << 20;  // 1 MiB requests: zero_write's 1 MiB iovecs go in one piece
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  struct stat st;
  int r = fs(req).lookup(parent, name, &st);
  reply_entry(req, r, st);
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  fs(req).forget(ino, n);
  fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* list) {
  for (size_t i = 0; i < count; ++i) fs(req).forget(list[i].ino, list[i].nlookup);
  fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  struct stat st;
  int r = fs(req).getattr(ino, &st);
  reply_attr(req, r, st);
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  struct stat st;
  int r = fs(req).setattr(ino, *attr, to_set, &st);
  reply_attr(req, r, st);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  struct stat st;
  int r = fs(req).mkdir(parent, name, mode & ~ctx->umask, ctx->uid, ctx->gid, &st);
  reply_entry(req, r, st);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_reply_err(req, -fs(req).unlink(parent, name));
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_reply_err(req, -fs(req).rmdir(parent, name));
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent, const char* newname,
               unsigned int flags) {
  fuse_reply_err(req, -fs(req).rename(parent, name, newparent, newname, flags));
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char* newname) {
  struct stat st;
  int r = fs(req).link(ino, newparent, newname, &st);
  reply_entry(req, r, st);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, fuse_file_info* fi) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  struct stat st;
  std::uint64_t fh = 0;
  int r = fs(req).create(parent, name, mode & ~ctx->umask, fi->flags, ctx->uid, ctx->gid, &st, &fh);
  if (r != 0) {
    fuse_reply_err(req, -r);
    return;
  }
  fuse_entry_param e{};
  e.ino = st.st_ino;
  e.generation = 1;
  e.attr = st;
  fi->fh = fh;
  fi->direct_io = 1;
  if (fuse_reply_create(req, &e, fi) != 0) fs(req).release(fh);  // the opener is gone (killed)
}

void op_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  std::uint64_t fh = 0;
  int r = fs(req).open(ino, fi->flags, &fh);
  if (r != 0) {
    fuse_reply_err(req, -r);
    return;
  }
  fi->fh = fh;
  fi->direct_io = 1;
  if (fuse_reply_open(req, fi) != 0) fs(req).release(fh);
}

void op_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  std::vector<std::byte> buf;
  int r = fs(req).read(fi->fh, static_cast<std::uint64_t>(off), size, &buf);
  if (r != 0) fuse_reply_err(req, -r);
  else fuse_reply_buf(req, reinterpret_cast<const char*>(buf.data()), buf.size());
}

void op_write(fuse_req_t req, fuse_ino_t, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  long r = fs(req).write(fi->fh, static_cast<std::uint64_t>(off), buf, size);
  if (r < 0) fuse_reply_err(req, static_cast<int>(-r));
  else fuse_reply_write(req, static_cast<size_t>(r));
}

void op_flush(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }

void op_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  fs(req).release(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsync(fuse_req_t req, fuse_ino_t, int datasync, fuse_file_info* fi) {
  fuse_reply_err(req, -fs(req).fsync(fi->fh, datasync != 0));
}

// A directory handle holds a snapshot of the names, so that readdir's offsets stay valid
// while the directory changes.
void op_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto entries = std::make_unique<std::vector<DirEntry>>();
  int r = fs(req).readdir(ino, entries.get());
  if (r != 0) {
    fuse_reply_err(req, -r);
    return;
  }
  fi->fh = reinterpret_cast<std::uint64_t>(entries.get());
  if (fuse_reply_open(req, fi) == 0) entries.release();
}

void op_readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  const auto& entries = *reinterpret_cast<std::vector<DirEntry>*>(fi->fh);
  std::vector<char> buf(size);
  std::size_t used = 0;
  for (std::size_t i = static_cast<std::size_t>(off); i < entries.size(); ++i) {
    std::size_t need = fuse_add_direntry(req, buf.data() + used, size - used, entries[i].name.c_str(),
                                         &entries[i].st, static_cast<off_t>(i + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void op_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete reinterpret_cast<std::vector<DirEntry>*>(fi->fh);
  fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  fuse_reply_err(req, -fs(req).fsyncdir(ino));
}

void op_statfs(fuse_req_t req, fuse_ino_t) {
  struct statvfs st;
  fs(req).statfs(&st);
  fuse_reply_statfs(req, &st);
}

void op_fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t off, off_t len, fuse_file_info* fi) {
  fuse_reply_err(req, -fs(req).fallocate(fi->fh, mode, static_cast<std::uint64_t>(off),
                                         static_cast<std::uint64_t>(len)));
}

}  // namespace

fuse_lowlevel_ops mem_fs_ops() {
  fuse_lowlevel_ops o{};
  o.init = op_init;
  o.lookup = op_lookup;
  o.forget = op_forget;
  o.forget_multi = op_forget_multi;
  o.getattr = op_getattr;
  o.setattr = op_setattr;
  o.mkdir = op_mkdir;
  o.unlink = op_unlink;
  o.rmdir = op_rmdir;
  o.rename = op_rename;
  o.link = op_link;
  o.create = op_create;
  o.open = op_open;
  o.read = op_read;
  o.write = op_write;
  o.flush = op_flush;
  o.release = op_release;
  o.fsync = op_fsync;
  o.opendir = op_opendir;
  o.readdir = op_readdir;
  o.releasedir = op_releasedir;
  o.fsyncdir = op_fsyncdir;
  o.statfs = op_statfs;
  o.fallocate = op_fallocate;
  return o;
}

}  // namespace lazyfs
