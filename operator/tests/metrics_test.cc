#include "metrics/metrics.h"

#include <gtest/gtest.h>

namespace ncclop::metrics {
namespace {

TEST(Histogram, BucketsAreCumulative) {
  Histogram h({1, 5});
  h.Observe(0.5);
  h.Observe(3);
  h.Observe(100);
  std::string out;
  h.Render("x", &out);
  EXPECT_NE(out.find("x_bucket{le=\"1\"} 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{le=\"5\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_bucket{le=\"+Inf\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_sum 103.5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("x_count 3\n"), std::string::npos) << out;
}

TEST(Metrics, RendersCountersGaugesAndHistograms) {
  Metrics m;
  m.ReconcileDone(0.002, true);
  m.ReconcileDone(0.2, false);
  m.Restarted();
  m.IdPublished(1.5);
  std::string out = m.Render({{"Running", 2}, {"Failed", 1}}, true);
  EXPECT_NE(out.find("# TYPE ncclop_reconcile_total counter\nncclop_reconcile_total 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_errors_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_reconcile_duration_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_jobs{state=\"Running\"} 2\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_restarts_total 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_id_publish_latency_seconds_bucket{le=\"2\"} 1\n"), std::string::npos);
  EXPECT_NE(out.find("ncclop_leader 1\n"), std::string::npos);
}

}  // namespace
}  // namespace ncclop::metrics
