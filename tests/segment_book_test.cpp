// Unit tests of include/walseg/segment_book.h, the segment manager's books without I/O: what is
// ready ahead, what a retire takes and puts back, which future name is free, and what a
// timeline change does. The manager's tests cover the same rules through files; these pin the
// rules themselves, including the ones a race reaches only rarely (a name being made is never
// free, a failed retire's victims come back as not recycled).
#define BOOST_TEST_MODULE segment_book
#include <boost/test/unit_test.hpp>

#include <vector>

#include "walseg/segment_book.h"

using walseg::SegmentBook;
using walseg::SegmentName;
using walseg::SegNo;

namespace {

std::vector<SegNo> segnos(const std::vector<SegmentName>& v) {
  std::vector<SegNo> out;
  for (const auto& s : v) out.push_back(s.segno);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(segments_of_other_timelines_are_never_ready) {
  SegmentBook b(2);
  b.add(SegmentName{2, 5});
  b.add(SegmentName{1, 6});
  b.add(SegmentName{3, 7});
  BOOST_TEST(b.has(5));
  BOOST_TEST(!b.has(6));
  BOOST_TEST(!b.has(7));
  BOOST_TEST(!b.take(6).has_value());
  BOOST_TEST(b.files() == 3u);
  BOOST_TEST(b.ready_after(0) == 1u);
  BOOST_TEST(*b.lowest() == 5u);
}

BOOST_AUTO_TEST_CASE(a_segment_handed_out_is_no_longer_zeroed) {
  SegmentBook b;
  b.add(SegmentName{1, 3}, SegmentBook::Entry{false, true});
  auto first = b.take(3);
  BOOST_REQUIRE(first.has_value());
  BOOST_TEST(first->zeroed);
  auto again = b.take(3);
  BOOST_REQUIRE(again.has_value());
  BOOST_TEST(!again->zeroed);  // it holds WAL now: an open for reuse must not skip the fill
  BOOST_TEST(b.has(3));        // still ready: a restarted writer may open it again
}

BOOST_AUTO_TEST_CASE(peek_does_not_show_a_segment_in_progress) {
  SegmentBook b;
  b.add(SegmentName{1, 4}, SegmentBook::Entry{true, false});
  BOOST_TEST(b.peek(4).has_value());
  BOOST_TEST(b.peek(4)->recycled);
  b.begin(4);
  BOOST_TEST(!b.peek(4).has_value());
  BOOST_TEST(b.present(4));
  b.end(4);
  BOOST_TEST(b.peek(4).has_value());
  BOOST_TEST(!b.peek(9).has_value());
}

BOOST_AUTO_TEST_CASE(files_count_what_is_being_made) {
  SegmentBook b;
  b.add(SegmentName{1, 1});
  b.begin(2);
  b.add(SegmentName{7, 1});
  BOOST_TEST(b.files() == 3u);  // walseg.max_size must count the file a fill is writing
  b.end(2);
  BOOST_TEST(b.files() == 2u);
}

BOOST_AUTO_TEST_CASE(ready_after_counts_only_segments_ahead) {
  SegmentBook b;
  for (SegNo s : {2, 3, 5, 8}) b.add(SegmentName{1, s});
  BOOST_TEST(b.ready_after(0) == 4u);
  BOOST_TEST(b.ready_after(3) == 2u);
  BOOST_TEST(b.ready_after(8) == 0u);
}

BOOST_AUTO_TEST_CASE(free_name_skips_ready_and_in_progress) {
  SegmentBook b;
  b.add(SegmentName{1, 10});
  b.begin(11);
  BOOST_TEST(*b.free_name(10, 20) == 12u);
  BOOST_TEST(!b.free_name(10, 11).has_value());
  BOOST_TEST(!b.free_name(12, 11).has_value());  // an empty range
  // A name used only on another timeline is free on this one.
  b.add(SegmentName{2, 12});
  BOOST_TEST(*b.free_name(10, 20) == 12u);
}

BOOST_AUTO_TEST_CASE(take_below_takes_ready_then_others_and_nothing_needed) {
  SegmentBook b(2);
  for (SegNo s : {1, 2, 3, 4}) b.add(SegmentName{2, s});
  b.add(SegmentName{1, 1});
  b.add(SegmentName{1, 5});
  b.add(SegmentName{3, 2});
  auto victims = b.take_below(3);
  BOOST_TEST(segnos(victims) == (std::vector<SegNo>{1, 2, 1, 2}), boost::test_tools::per_element());
  BOOST_TEST(victims[0].timeline == 2u);
  BOOST_TEST(victims[2].timeline == 1u);
  BOOST_TEST(victims[3].timeline == 3u);
  BOOST_TEST(!b.has(1));
  BOOST_TEST(!b.has(2));
  BOOST_TEST(b.has(3));
  BOOST_TEST(b.files() == 3u);  // 3, 4 and 1/5 remain
  // Taken out: nothing below first_needed can be handed out while it is being retired.
  BOOST_TEST(!b.take(1).has_value());
}

BOOST_AUTO_TEST_CASE(put_back_restores_victims_as_not_recycled) {
  SegmentBook b;
  b.add(SegmentName{1, 1}, SegmentBook::Entry{true, true});
  b.add(SegmentName{1, 2}, SegmentBook::Entry{true, false});
  b.add(SegmentName{4, 1});
  auto victims = b.take_below(5);
  BOOST_REQUIRE(victims.size() == 3u);
  BOOST_TEST(b.files() == 0u);
  b.put_back(victims);
  BOOST_TEST(b.files() == 3u);
  BOOST_REQUIRE(b.peek(1).has_value());
  BOOST_TEST(!b.peek(1)->recycled);
  BOOST_TEST(!b.peek(1)->zeroed);  // what a failed retire left is not known to be zeros
  BOOST_TEST(!b.has(4));           // the other timeline's stays among the others
  BOOST_TEST(b.take_below(5).size() == 3u);  // and a later retire takes all of them again
}

BOOST_AUTO_TEST_CASE(switch_to_moves_ready_segments_to_the_others) {
  SegmentBook b(1);
  b.add(SegmentName{1, 5});
  b.add(SegmentName{1, 6});
  b.add(SegmentName{2, 7});
  b.add(SegmentName{3, 8});
  b.switch_to(2);
  BOOST_TEST(b.timeline() == 2u);
  BOOST_TEST(!b.has(5));
  BOOST_TEST(!b.has(6));
  BOOST_TEST(b.has(7));
  BOOST_TEST(!b.has(8));
  BOOST_TEST(b.files() == 4u);
  // The old timeline's segments are retire candidates now.
  auto victims = b.take_below(7);
  BOOST_TEST(victims.size() == 2u);
  BOOST_TEST(victims[0].timeline == 1u);
  b.switch_to(2);  // no change
  BOOST_TEST(b.has(7));
  BOOST_TEST(b.files() == 2u);
}
