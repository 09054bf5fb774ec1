// SegmentBook: the segment manager's books (include/walseg/segment_book.h).
#include "walseg/segment_book.h"

#include <algorithm>

namespace walseg {

void SegmentBook::add(const SegmentName& s, Entry e) {
  if (s.timeline == timeline_) ready_[s.segno] = e;
  else others_.insert(s);
}

std::optional<SegmentBook::Entry> SegmentBook::take(SegNo segno) {
  auto it = ready_.find(segno);
  if (it == ready_.end()) return std::nullopt;
  const Entry e = it->second;
  it->second.zeroed = false;
  return e;
}

std::optional<SegmentBook::Entry> SegmentBook::peek(SegNo segno) const {
  auto it = ready_.find(segno);
  if (it == ready_.end() || busy(segno)) return std::nullopt;
  return it->second;
}

std::size_t SegmentBook::ready_after(SegNo position) const {
  return static_cast<std::size_t>(std::count_if(ready_.begin(), ready_.end(),
                                                [&](const auto& r) { return r.first > position; }));
}

std::optional<SegNo> SegmentBook::lowest() const {
  if (ready_.empty()) return std::nullopt;
  return ready_.begin()->first;
}

std::vector<SegmentName> SegmentBook::take_below(SegNo first_needed) {
  std::vector<SegmentName> victims;
  for (auto it = ready_.begin(); it != ready_.end() && it->first < first_needed;) {
    victims.push_back(SegmentName{timeline_, it->first});
    it = ready_.erase(it);
  }
  for (auto it = others_.begin(); it != others_.end();) {
    if (it->segno < first_needed) {
      victims.push_back(*it);
      it = others_.erase(it);
    } else {
      ++it;
    }
  }
  return victims;
}

void SegmentBook::put_back(const std::vector<SegmentName>& victims) {
  for (const SegmentName& v : victims)
    if (v.timeline == timeline_) ready_.emplace(v.segno, Entry{});
    else others_.insert(v);
}

std::optional<SegNo> SegmentBook::free_name(SegNo from, SegNo to) const {
  for (SegNo s = from; s <= to; ++s)
    if (!present(s)) return s;
  return std::nullopt;
}

void SegmentBook::switch_to(TimeLineId tli) {
  if (tli == timeline_) return;
  // Segments named for the old timeline are never written again; they become retire
  // candidates like any old segment, so recycling renames them onto the new timeline.
  for (const auto& [segno, e] : ready_) others_.insert(SegmentName{timeline_, segno});
  ready_.clear();
  for (auto it = others_.begin(); it != others_.end();) {
    if (it->timeline == tli) {
      ready_.emplace(it->segno, Entry{});
      it = others_.erase(it);
    } else {
      ++it;
    }
  }
  timeline_ = tli;
}

}  // namespace walseg
