// CrashModel: from a recorded list of io-layer mutations (walseg/io_record.h), the directory
// contents a power cut after any prefix of them may leave (unsynced data lost, kept or
// torn per 4 kB block, unsynced names lost; the method of LevelDB's fault_injection_test and RocksDB's FaultInjectionTestFS,
// per 4 kB block as SQLite's crash VFS tears per sector, with ALICE's view of directory
// operations as a separately persisted log).
//
// The model, per file (followed by identity through renames):
//   - bytes written after the file's last successful fsync/fdatasync may be lost, kept or
//     torn: each 4 kB block independently shows its synced content or the content after any
//     prefix of the unsynced writes that touched it (writeback of a page at some moment);
//   - the size is any one the file had since that sync, or between two successive ones while
//     it grew;
//   - writes through an O_DSYNC/O_SYNC descriptor are durable when they return (data and the
//     size reaching them); O_DIRECT writes are not durable before the next sync (the device
//     cache);
//   - a sync covers only the events recorded before it was called (io_record's covers_before);
//   - a failed sync makes nothing durable, and what it should have covered stays not durable
//     after any later sync of the file (Linux marks the pages clean: the first failure is final).
// Per directory: a create, rename, link, unlink or mkdir not followed by an fsync of that
// directory may be lost, independently of the others (or, in a random state, as a prefix); a
// rename is atomic: the file is under the old name or the new one, never both or neither.
// The model's root (the directory the workload ran in) is taken to exist durably.
//
// Use: construct over the events, advance(n) to the cut after the first n events, then
// choose() a state (all lost, all kept, or seeded random) and build() it; a choice's signature
// identifies its content, so duplicates can be skipped before anything is built.
// Not for: modelling reordering between files beyond what the rules above allow (each file
// and each directory is chosen independently), sub-4 kB tears, stale device blocks, or
// cross-directory renames (reported as inconsistencies).
// Thread-safety: none; one model per thread. Lifetime: the event list passed to the
// constructor must outlive the model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "walseg/io_record.h"

namespace walseg_crash {

using walseg::io_record::Event;
using walseg::io_record::Op;

/// The unit in which an unsynced write is kept or lost.
inline constexpr std::uint64_t kTearBlockBytes = 4096;

enum class Mode { kAllLost, kAllKept, kRandom };
std::string_view to_string(Mode m);

/// Content of one file in a crash state: exactly `bytes.size()` bytes long.
struct FileImage {
  std::vector<std::byte> bytes;
};

/// One name of a file in a crash state.
struct StateFile {
  std::string path;         ///< relative to the model's root
  std::size_t inode = 0;    ///< names with the same inode are hard links of one file
  /// The file got its newest name by a rename or link (not created under it), and at that
  /// moment every write, truncate and fallocate of it was durable (the install protocol).
  bool renamed_when_durable = false;
};

struct CrashState {
  std::vector<std::string> dirs;  ///< relative to the root, parents first; the root excluded
  std::vector<StateFile> files;
  std::map<std::size_t, FileImage> images;  ///< per inode
  /// Some file shows unsynced writes out of order (a block kept while an earlier write's
  /// block was lost): possible after a power cut, impossible after writeback in order.
  bool torn = false;
  /// Some file has a size it never had: inside the range one write grew it by (the size
  /// updated part of the way), which a filesystem that logs sizes per block would not leave.
  bool odd_size = false;
  /// Some directory kept a later unsynced operation while losing an earlier one.
  bool names_reordered = false;
};

/// What a state is made of, before its bytes are built.
struct Choice {
  struct Inode {
    std::size_t id = 0;
    std::uint64_t size = 0;
    /// Blocks that show unsynced writes: (block number, how many of the pending writes
    /// touching it are applied).
    std::vector<std::pair<std::uint64_t, std::uint32_t>> blocks;
    bool torn = false;  ///< not what the first k operations alone would leave, for any k
    bool odd_size = false;  ///< a size inside one write's growth (CrashState::odd_size)
  };
  std::vector<std::string> dirs;
  std::vector<StateFile> files;
  std::vector<Inode> inodes;
  bool names_reordered = false;
  /// Equal signatures mean equal contents (same durable bases, same choices).
  std::uint64_t signature = 0;
};

class CrashModel {
 public:
  /// root: the directory the workload ran in, spelled as the library was given it.
  CrashModel(const std::vector<Event>& events, std::string root);

  /// Takes the tree under root on disk, as it is now, as the durable initial state (call
  /// before advance; for workloads that start from files made before recording began).
  void load_existing();

  /// Applies events up to (not including) index n; n only grows.
  void advance(std::size_t n);
  std::size_t applied() const { return applied_; }

  Choice choose(Mode mode, std::mt19937_64& rng) const;
  CrashState build(const Choice& c) const;

  /// Events the model could not follow (an unknown file, a cross-directory rename, a name
  /// that is not where the record says): the record or the model is incomplete.
  const std::vector<std::string>& inconsistencies() const { return inconsistencies_; }

 private:
  struct Pending {
    std::uint32_t event;
    bool forced;    ///< durable on return (O_DSYNC)
    bool poisoned;  ///< a failed sync should have covered it: never made durable
  };
  struct Inode {
    std::vector<std::byte> base;     ///< durable content (its size is the durable size)
    std::vector<std::byte> current;  ///< what a reader sees now
    std::vector<Pending> pending;    ///< not yet durable, in order
    std::uint64_t version = 0;       ///< bumped when base changes
    bool renamed_when_durable = false;
  };
  struct Node {
    bool is_dir = false;
    std::size_t id = 0;
    bool operator==(const Node&) const = default;
  };
  enum class NsKind { kCreate, kRename, kLink, kUnlink, kExchange };
  struct NsOp {
    std::uint32_t event;
    NsKind kind;
    std::string name, name2;
    Node node;
    Node node2{};  ///< kExchange: the file name2 held
  };
  struct Dir {
    std::string rel;
    std::map<std::string, Node> base, current;
    std::vector<NsOp> pending;
    std::uint64_t version = 0;
  };

  void apply_event(std::size_t i);
  void on_open(std::size_t i, const Event& e);
  void on_data(std::size_t i, const Event& e);
  void on_sync(const Event& e);
  void on_names(std::size_t i, const Event& e);
  void on_dir_fsync(const Event& e);
  static void apply_ns(const NsOp& op, std::map<std::string, Node>& names);
  bool split(const std::string& path, std::size_t* dir, std::string* name);
  std::size_t* inode_of(const Event& e);
  void inconsistent(std::size_t i, const std::string& what);

  std::map<std::string, Node> choose_names(const Dir& d, Mode mode, std::mt19937_64& rng, bool* reordered) const;
  Choice::Inode choose_inode(std::size_t id, Mode mode, std::mt19937_64& rng) const;
  std::map<std::uint64_t, std::vector<std::uint32_t>> touched_blocks(const Inode& f) const;
  std::vector<std::uint64_t> size_history(const Inode& f) const;
  bool in_order(const Inode& f, const std::map<std::uint64_t, std::vector<std::uint32_t>>& touched,
                const std::vector<std::pair<std::uint64_t, std::uint32_t>>& blocks) const;

  const std::vector<Event>& events_;
  std::string root_;
  std::size_t applied_ = 0;
  std::vector<Inode> inodes_;
  std::vector<Dir> dirs_;                        ///< dirs_[0] is the root
  std::map<std::string, std::size_t> dir_by_rel_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> inode_by_identity_;
  std::vector<std::string> inconsistencies_;
};

/// Applies the content change of event e (a write, truncate, fallocate or truncating open) to
/// `image`, only inside [lo, hi) for its bytes, and to its size unless keep_size.
void apply_to_image(const Event& e, std::vector<std::byte>& image, std::uint64_t lo = 0,
                    std::uint64_t hi = ~std::uint64_t{0}, bool keep_size = false);

/// Writes the state under `dir` (removed first, then recreated) as real files, so that the
/// library reopens them: all-zero 4 kB blocks become holes, hard links stay hard links.
void materialise(const CrashState& s, const std::string& dir);

/// One line per file of the state (path, size, inode): for a reproduction message.
std::string describe(const CrashState& s);

}  // namespace walseg_crash
