// LrSchedule: the documented convention, validation and decay-kind parsing. (The values are
// also checked against the fixture's LambdaLR sequence in optimizer_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "pelab/core/error.h"
#include "pelab/train/schedule.h"

namespace pelab::testing {
namespace {

std::string schedule_error(const LrScheduleOptions& o) {
  try {
    LrSchedule s(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(LrSchedule, WarmupStartsAboveZeroAndReachesLrAtItsLastStep) {
  const LrSchedule s({.lr = 0.8, .warmup_steps = 4, .total_steps = 10});
  EXPECT_FLOAT_EQ(s.lr_at(0), 0.2f);
  EXPECT_FLOAT_EQ(s.lr_at(1), 0.4f);
  EXPECT_FLOAT_EQ(s.lr_at(3), 0.8f);
  EXPECT_FLOAT_EQ(s.lr_at(4), 0.8f);    // constant afterwards
  EXPECT_FLOAT_EQ(s.lr_at(100), 0.8f);  // and past total_steps
}

TEST(LrSchedule, CosineAndLinearDecay) {
  const LrSchedule cosine(
      {.lr = 1.0, .warmup_steps = 2, .total_steps = 6, .decay = LrDecay::cosine, .min_lr = 0.1});
  EXPECT_FLOAT_EQ(cosine.lr_at(1), 1.0f);
  EXPECT_FLOAT_EQ(cosine.lr_at(2), 1.0f);   // progress 0
  EXPECT_FLOAT_EQ(cosine.lr_at(4), 0.55f);  // progress ½
  EXPECT_FLOAT_EQ(cosine.lr_at(5),
                  static_cast<float>(0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * 0.75))));
  EXPECT_FLOAT_EQ(cosine.lr_at(6), 0.1f);
  EXPECT_FLOAT_EQ(cosine.lr_at(1000), 0.1f);

  const LrSchedule linear({.lr = 2.0, .total_steps = 4, .decay = LrDecay::linear});
  EXPECT_FLOAT_EQ(linear.lr_at(0), 2.0f);
  EXPECT_FLOAT_EQ(linear.lr_at(1), 1.5f);
  EXPECT_FLOAT_EQ(linear.lr_at(3), 0.5f);
  EXPECT_EQ(linear.lr_at(4), 0.0f);
}

TEST(LrSchedule, WarmupEqualToTotalEndsAtMinLr) {
  const LrSchedule s(
      {.lr = 1.0, .warmup_steps = 3, .total_steps = 3, .decay = LrDecay::linear, .min_lr = 0.25});
  EXPECT_FLOAT_EQ(s.lr_at(2), 1.0f);
  EXPECT_FLOAT_EQ(s.lr_at(3), 0.25f);
}

TEST(LrSchedule, ValidatesOptions) {
  EXPECT_NE(schedule_error({.lr = -1}).find("lr must be"), std::string::npos);
  EXPECT_NE(schedule_error({.lr = NAN}).find("lr must be"), std::string::npos);
  EXPECT_NE(schedule_error({.warmup_steps = -1}).find("warmup_steps"), std::string::npos);
  EXPECT_NE(schedule_error({.total_steps = 0}).find("total_steps"), std::string::npos);
  const std::string e = schedule_error({.warmup_steps = 10, .total_steps = 5});
  EXPECT_NE(e.find("total_steps (5) must be >= warmup_steps (10)"), std::string::npos) << e;
  EXPECT_NE(schedule_error({.lr = 0.1, .min_lr = 0.2}).find("min_lr"), std::string::npos);
  EXPECT_EQ(schedule_error({.lr = 0.0}), "");
  const LrSchedule s({});
  EXPECT_THROW(s.lr_at(-1), Error);
}

TEST(LrSchedule, ParsesDecayKinds) {
  for (LrDecay d : {LrDecay::constant, LrDecay::linear, LrDecay::cosine}) {
    EXPECT_EQ(parse_lr_decay(to_string(d)), d);
  }
  try {
    parse_lr_decay("cosin");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown learning-rate decay 'cosin' (valid: constant, linear, cosine)");
  }
}

}  // namespace
}  // namespace pelab::testing
