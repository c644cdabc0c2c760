// TRIP's filter (docs/trip.md §8): the first authenticated copy of each label is delivered, once,
// across paths and reflector restarts; slower copies are duplicates; a boot becomes current only
// through a handshake.
#include <gtest/gtest.h>

#include "pqot/trip/filter.hpp"

namespace pqot::trip {
namespace {

using std::chrono::milliseconds;
using V = FilterVerdict;

TEST(TripFilter, TheFirstCopyIsDeliveredAndTheOthersAreDuplicates) {
  FlowFilter f(milliseconds(10'000), milliseconds(0));
  const auto t = FlowFilter::Clock::now();
  EXPECT_EQ(f.accept(1, 0, t), V::stale_boot);  // no session of any boot yet
  f.start_boot(1, t);
  // Three paths, each bringing every label; the fastest copy wins.
  for (std::uint64_t label = 0; label < 5000; ++label) {
    EXPECT_EQ(f.accept(1, label, t), V::deliver) << label;
    EXPECT_EQ(f.accept(1, label, t), V::duplicate) << label;
    EXPECT_EQ(f.accept(1, label, t), V::duplicate) << label;
  }
  EXPECT_EQ(f.highest(), 4999u);
}

TEST(TripFilter, ReorderedLabelsAreDeliveredLateOnceAndTooOldOnesDropped) {
  FlowFilter f(milliseconds(10'000), milliseconds(0));
  const auto t = FlowFilter::Clock::now();
  f.start_boot(7, t);
  EXPECT_EQ(f.accept(7, 10, t), V::deliver);
  EXPECT_EQ(f.accept(7, 12, t), V::deliver);  // 11 is late on every path
  EXPECT_EQ(f.accept(7, 11, t), V::deliver_late);
  EXPECT_EQ(f.accept(7, 11, t), V::duplicate);
  EXPECT_EQ(f.accept(7, 5000, t), V::deliver);
  EXPECT_EQ(f.accept(7, 5000 - 1023, t), V::deliver_late);  // the window's last place
  EXPECT_EQ(f.accept(7, 5000 - 1024, t), V::too_old);
  EXPECT_EQ(f.accept(7, 12, t), V::too_old);  // delivered once, long ago: never again
}

TEST(TripFilter, MaxAgeDropsLateCopiesOfAnOldHighest) {
  FlowFilter f(milliseconds(10'000), milliseconds(50));
  const auto t = FlowFilter::Clock::now();
  f.start_boot(3, t);
  EXPECT_EQ(f.accept(3, 2, t), V::deliver);
  EXPECT_EQ(f.accept(3, 1, t + milliseconds(40)), V::deliver_late);  // at least 40 ms old: kept
  EXPECT_EQ(f.accept(3, 0, t + milliseconds(60)), V::too_old);       // at least 60 ms old: dropped
  EXPECT_EQ(f.accept(3, 3, t + milliseconds(60)), V::deliver);       // new labels are not aged
}

// docs/trip.md §8: a reflector restart starts a new boot; its labels start again at 0 and are
// delivered; copies of the old boot still in flight are deduplicated against the old window
// during the grace, and refused after it.
TEST(TripFilter, AReflectorRestartDeliversTheNewBootAndNothingTwice) {
  FlowFilter f(milliseconds(10'000), milliseconds(0));
  const auto t = FlowFilter::Clock::now();
  f.start_boot(100, t);
  for (std::uint64_t label = 0; label < 50; ++label) ASSERT_EQ(f.accept(100, label, t), V::deliver);
  f.start_boot(200, t + milliseconds(5));  // the reflector came back
  EXPECT_EQ(f.current_boot(), 200u);
  EXPECT_EQ(f.accept(200, 0, t + milliseconds(6)), V::deliver);
  EXPECT_EQ(f.accept(100, 49, t + milliseconds(7)), V::duplicate);  // a slow path's old copy
  EXPECT_EQ(f.accept(100, 50, t + milliseconds(7)), V::deliver);    // sent before the restart, never delivered
  EXPECT_EQ(f.accept(100, 50, t + milliseconds(8)), V::duplicate);
  EXPECT_EQ(f.accept(100, 51, t + milliseconds(10'006)), V::stale_boot);  // past the grace
  // A handshake of the same boot again (another path) changes nothing.
  f.start_boot(200, t + milliseconds(10'007));
  EXPECT_EQ(f.accept(200, 0, t + milliseconds(10'008)), V::duplicate);
}

TEST(TripFilter, ABootComingBackKeepsItsWindowAndAThirdDropsTheOldest) {
  FlowFilter f(milliseconds(10'000), milliseconds(0));
  const auto t = FlowFilter::Clock::now();
  f.start_boot(1, t);
  EXPECT_EQ(f.accept(1, 0, t), V::deliver);
  f.start_boot(2, t);
  f.start_boot(1, t);  // two reflectors under one identity alternate: windows are kept
  EXPECT_EQ(f.accept(1, 0, t), V::duplicate);
  EXPECT_EQ(f.accept(2, 0, t), V::deliver);
  f.start_boot(3, t);  // boot 2 was previous: it is dropped now
  EXPECT_EQ(f.accept(2, 1, t), V::stale_boot);
  EXPECT_EQ(f.accept(1, 0, t), V::duplicate);
}

}  // namespace
}  // namespace pqot::trip
