// SegmentBook: the segment manager's books, as a value. Which segments of the WAL's directory
// exist and in which state, with the rules over them (what is ready ahead, what a retire
// takes, what a timeline change does, which future name is free) as pure methods, so that they
// are tested without I/O (tests/segment_book_test.cpp). The manager fills it once from the
// directory scan, under its DirLock, and keeps it under its mutex.
//
//   ready        complete segments of the current timeline, each with whether it was recycled
//                (holds an earlier segment's WAL, which must never be read as records), whether it is zeroed (made
//                by this manager with a method that leaves zeros and not handed out since), and
//                which file it is (made, recycled or found as that file: the writer writes into no other);
//   in progress  segment numbers being created or recycled into, on the current timeline;
//   others       segments of other timelines: never handed out, retired like old ones.
//
// Not for: files, names or I/O (the manager). Thread-safety: none; the owner serialises.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "walseg/file_identity.h"
#include "walseg/segment_name.h"

namespace walseg {

class SegmentBook {
 public:
  struct Entry {
    bool recycled = false;
    bool zeroed = false;
    FileIdentity file;  ///< unknown where the books lost it (a put_back, a timeline switch)
  };

  explicit SegmentBook(TimeLineId timeline = 1) : timeline_(timeline) {}
  TimeLineId timeline() const { return timeline_; }

  /// A segment found or made: ready if of the current timeline, else among the others.
  void add(const SegmentName& s, Entry e);
  void add(const SegmentName& s) { add(s, Entry{}); }
  /// Ready on the current timeline.
  bool has(SegNo segno) const { return ready_.count(segno) != 0; }
  /// Being created or recycled into.
  bool busy(SegNo segno) const { return in_progress_.count(segno) != 0; }
  /// Either: a name the pool must not make.
  bool present(SegNo segno) const { return has(segno) || busy(segno); }
  void begin(SegNo segno) { in_progress_.insert(segno); }
  void end(SegNo segno) { in_progress_.erase(segno); }

  /// Hands segno out: its entry, which is no longer zeroed from now on (it holds WAL), or
  /// nullopt when it is not ready.
  std::optional<Entry> take(SegNo segno);
  /// Its entry if ready and not in progress, without handing it out.
  std::optional<Entry> peek(SegNo segno) const;

  /// Files on disk or being made (ready, others, in progress): what walseg.max_size counts.
  std::size_t files() const { return ready_.size() + others_.size() + in_progress_.size(); }
  /// Ready segments after `position`.
  std::size_t ready_after(SegNo position) const;
  /// The lowest ready segment of the current timeline, if any.
  std::optional<SegNo> lowest() const;

  /// A retire: takes out every ready segment below first_needed and every other-timeline
  /// segment below it, in that order, and returns them (so that nothing is handed out while
  /// being retired).
  std::vector<SegmentName> take_below(SegNo first_needed);
  /// Puts back victims a failed retire did not deal with (ready ones as not recycled).
  void put_back(const std::vector<SegmentName>& victims);

  /// The first segment number in [from, to] that is neither ready nor in progress.
  std::optional<SegNo> free_name(SegNo from, SegNo to) const;

  /// New segments and recycled names use `tli` from now on: the current timeline's ready
  /// segments join the others, and the others of `tli` become ready (as not recycled).
  void switch_to(TimeLineId tli);

 private:
  static bool name_less(const SegmentName& a, const SegmentName& b) {
    return a.timeline != b.timeline ? a.timeline < b.timeline : a.segno < b.segno;
  }
  TimeLineId timeline_;
  std::map<SegNo, Entry> ready_;
  std::set<SegNo> in_progress_;
  std::set<SegmentName, bool (*)(const SegmentName&, const SegmentName&)> others_{name_less};
};

}  // namespace walseg
