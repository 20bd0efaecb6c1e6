// The link measured at the start-up and followed on the program's uploads (src/policy/measured_link.h): nothing applied
// before the measurement, the tolerance, both directions, the cap, the summary's lines; and measured once per node and
// GPU (measure_link_once_per_node): one measurement among concurrent processes, the others waiting for its file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "policy/measured_link.h"

namespace {

using blasoffload::policy::Calibration;
using blasoffload::policy::measure_link_once_per_node;
using blasoffload::policy::MeasuredLink;
using blasoffload::policy::node_link_path;

bo_cuda_rates Rates(double h2d, double d2h, double staged) {
  bo_cuda_rates r{};
  r.h2d_gbs = h2d;
  r.d2h_gbs = d2h;
  r.pageable_gbs = staged;
  return r;
}

TEST(MeasuredLink, AppliesNothingBeforeTheStartUpsMeasurement) {
  MeasuredLink l;
  Calibration c;
  c.h2d_gbs = 1, c.d2h_gbs = 2, c.pageable_gbs = 3;
  double was = 0;
  EXPECT_FALSE(l.follow(1, 30, &was)) << "uploads followed before any measurement";
  l.apply(&c);
  EXPECT_EQ(c.h2d_gbs, 1);
  EXPECT_EQ(c.pageable_gbs, 3);
  EXPECT_EQ(l.summary(), "");
  {
    std::lock_guard<std::mutex> lock(l.mutex());
    l.set(Rates(50, 55, 9), 140);
  }
  EXPECT_TRUE(l.measured());
  l.apply(&c);
  EXPECT_EQ(c.h2d_gbs, 50);
  EXPECT_EQ(c.d2h_gbs, 55);
  EXPECT_EQ(c.pageable_gbs, 9);
  EXPECT_NE(l.summary().find("50.0 GB/s to it, 55.0 back, 9.0 staged, in 140 ms"), std::string::npos) << l.summary();
  EXPECT_EQ(l.summary().find("staged copies priced"), std::string::npos) << l.summary();
}

TEST(MeasuredLink, FollowsTheUploadsBeyondItsToleranceAndAtMostSoManyTimes) {
  MeasuredLink l;
  l.set(Rates(50, 55, 10), 100);
  double was = 0;
  EXPECT_FALSE(l.news(0));
  EXPECT_TRUE(l.news(1));
  EXPECT_FALSE(l.follow(1, 11, &was)) << "within 15%";
  EXPECT_FALSE(l.news(1)) << "the same samples looked at twice";
  EXPECT_FALSE(l.follow(1, 30, &was)) << "the same samples taken twice";
  EXPECT_TRUE(l.follow(2, 30, &was));
  EXPECT_EQ(was, 10);
  Calibration c;
  l.apply(&c);
  EXPECT_EQ(c.pageable_gbs, 30);
  EXPECT_EQ(c.h2d_gbs, 50) << "the pinned rates stay the start-up's";
  EXPECT_FALSE(l.follow(3, 0, &was)) << "no rate";
  EXPECT_FALSE(l.follow(4, 27, &was)) << "within 15% of the new rate";
  EXPECT_TRUE(l.follow(5, 20, &was)) << "slower by a third: followed too";
  EXPECT_EQ(was, 30);
  for (int i = 0; i < 20; ++i) l.follow(6 + i, i % 2 ? 10 : 40, &was);
  const std::string s = l.summary();
  EXPECT_NE(s.find("10.0 staged, in 100 ms"), std::string::npos) << "the start-up's staged rate, as measured\n" << s;
  EXPECT_NE(s.find("(25 timed, 8 changes)"), std::string::npos) << s;
  EXPECT_EQ(MeasuredLink::kMaxUpdates, 8);
}

// A fresh path per test (the files of a run before are gone).
std::string TempPath(const char* name) {
  const std::string p = ::testing::TempDir() + "/bo-link-" + std::to_string(getpid()) + "-" + name;
  std::remove(p.c_str());
  std::remove((p + ".lock").c_str());
  return p;
}

// A measurement that counts its calls and takes `ms`.
struct FakeMeasure {
  std::atomic<int> calls{0};
  int ms = 0;
  int operator()(bo_cuda_rates* r) {
    calls.fetch_add(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    *r = Rates(50, 55, 21);
    return BO_CUDA_OK;
  }
};

TEST(NodeLink, TheFirstProcessMeasuresAndWritesTheNextReads) {
  const std::string path = TempPath("first");
  FakeMeasure m;
  auto fn = [&](bo_cuda_rates* r) { return m(r); };
  bo_cuda_rates r{};
  bool shared = true;
  ASSERT_EQ(measure_link_once_per_node(path, 100, 3600, fn, &r, &shared), BO_CUDA_OK);
  EXPECT_FALSE(shared);
  EXPECT_EQ(m.calls.load(), 1);
  bo_cuda_rates again{};
  ASSERT_EQ(measure_link_once_per_node(path, 100, 3600, fn, &again, &shared), BO_CUDA_OK);
  EXPECT_TRUE(shared) << "read from the file";
  EXPECT_EQ(m.calls.load(), 1) << "measured twice on one node";
  EXPECT_EQ(again.h2d_gbs, 50);
  EXPECT_EQ(again.d2h_gbs, 55);
  EXPECT_EQ(again.pageable_gbs, 21);
  // Too old (any age is, at a negative limit): measured again.
  ASSERT_EQ(measure_link_once_per_node(path, 100, -1, fn, &again, &shared), BO_CUDA_OK);
  EXPECT_FALSE(shared);
  EXPECT_EQ(m.calls.load(), 2);
}

TEST(NodeLink, ConcurrentProcessesMeasureOnce) {
  const std::string path = TempPath("concurrent");
  FakeMeasure m;
  m.ms = 60;  // as the real one, long enough for the others to find the lock taken
  constexpr int kRanks = 8;
  std::vector<std::thread> ranks;
  std::atomic<int> ok{0}, shared_count{0};
  for (int i = 0; i < kRanks; ++i)
    ranks.emplace_back([&] {  // each its own open file description: flock keeps them apart as processes
      bo_cuda_rates r{};
      bool shared = false;
      if (measure_link_once_per_node(
              path, 2000, 3600, [&](bo_cuda_rates* x) { return m(x); }, &r, &shared) == BO_CUDA_OK &&
          r.pageable_gbs == 21)
        ok.fetch_add(1);
      shared_count.fetch_add(shared);
    });
  for (auto& t : ranks) t.join();
  EXPECT_EQ(m.calls.load(), 1) << "every rank measured the link itself";
  EXPECT_EQ(ok.load(), kRanks);
  EXPECT_EQ(shared_count.load(), kRanks - 1);
}

TEST(NodeLink, WaitsForTheMeasuringProcessThenGivesUp) {
  const std::string path = TempPath("held");
  // Another process holds the lock: it writes its file 50 ms later and lets go.
  const int other = open((path + ".lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(other, 0);
  ASSERT_EQ(flock(other, LOCK_EX), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ofstream(path) << "blasoffload link h2d 40 d2h 41 staged 12\n";
    flock(other, LOCK_UN);
  });
  FakeMeasure m;
  bo_cuda_rates r{};
  bool shared = false;
  EXPECT_EQ(measure_link_once_per_node(
                path, 2000, 3600, [&](bo_cuda_rates* x) { return m(x); }, &r, &shared),
            BO_CUDA_OK);
  writer.join();
  EXPECT_TRUE(shared);
  EXPECT_EQ(m.calls.load(), 0);
  EXPECT_EQ(r.pageable_gbs, 12);
  // Held past the wait, nothing written: no rates (the built-in ones stay), and no measurement beside the other's.
  const std::string path2 = TempPath("stuck");
  const int stuck = open((path2 + ".lock").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_EQ(flock(stuck, LOCK_EX), 0);
  EXPECT_EQ(measure_link_once_per_node(
                path2, 30, 3600, [&](bo_cuda_rates* x) { return m(x); }, &r, &shared),
            BO_CUDA_NO_DEVICE);
  EXPECT_EQ(m.calls.load(), 0);
  close(stuck);
  close(other);
}

TEST(NodeLink, AFileThatIsNotRatesIsMeasuredOver) {
  const std::string path = TempPath("garbage");
  std::ofstream(path) << "blasoffload link h2d -1 d2h 2 staged 3\n";
  FakeMeasure m;
  bo_cuda_rates r{};
  bool shared = true;
  EXPECT_EQ(measure_link_once_per_node(
                path, 100, 3600, [&](bo_cuda_rates* x) { return m(x); }, &r, &shared),
            BO_CUDA_OK);
  EXPECT_FALSE(shared);
  EXPECT_EQ(m.calls.load(), 1);
}

TEST(NodeLink, OnePathPerJobAndGpuWhateverChoseIt) {
  const std::string h200_1 =
      "blasoffload-cuda 0.4 (CUDA 13.0, GPU 1 of 4: NVIDIA H200, sm_90, by "
      "OMPI_COMM_WORLD_LOCAL_RANK)";
  const std::string a = node_link_path(h200_1, "798752769");
  EXPECT_EQ(a, node_link_path("blasoffload-cuda 0.4 (CUDA 13.1, GPU 1 of 4: NVIDIA H200, sm_90, by "
                              "BLASOFFLOAD_DEVICE)",
                              "798752769"));
  EXPECT_NE(a, node_link_path("blasoffload-cuda 0.4 (CUDA 13.0, GPU 2 of 4: NVIDIA H200, sm_90, by "
                              "OMPI_COMM_WORLD_LOCAL_RANK)",
                              "798752769"));
  EXPECT_NE(a, node_link_path(h200_1, "798752770")) << "another job measures again";
  EXPECT_EQ(node_link_path(h200_1, ""), "") << "not a rank of a job: no file";
  EXPECT_NE(a.find("-" + std::to_string(geteuid()) + "-job-798752769-GPU-1-of-4-NVIDIA-H200-sm-90"), std::string::npos)
      << a;
}

}  // namespace
