// Choosing the table for a device: override file or directory, exact name, same compute capability, defaults.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support.h"
#include "tuning/table.h"

namespace bo::tuning {
namespace {

using test::device_table;
using test::TempDir;
using test::write_file;
using Source = Resolution::Source;

const char* const kH100 = "NVIDIA H100 80GB HBM3";
const char* const kH100Pcie = "NVIDIA H100 PCIe";
const char* const kH200 = "NVIDIA H200";

DeviceInfo device(const std::string& name, int major, int minor, int sm) {
  DeviceInfo d;
  d.name = name;
  d.cc_major = major;
  d.cc_minor = minor;
  d.sm_count = sm;
  return d;
}

void save(const std::string& path, const Table& t) {
  std::string error;
  ASSERT_TRUE(save_table(path, t, &error)) << error;
}

TEST(Resolve, ExactNameBeatsSameComputeCapability) {
  TempDir dir;
  // The compute-capability match is newer, has the same SM count and sorts first: the name still wins.
  save(dir / "a-pcie.json", device_table(kH100Pcie, 9, 0, 132, "2027-01-01T00:00:00Z"));
  save(dir / "b-h100.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_EQ(r.path, dir / "b-h100.json");
  EXPECT_EQ(r.message, "tuned parameters: " + (dir / "b-h100.json") + " (exact match for \"NVIDIA H100 80GB HBM3\")");
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_TRUE(r.table.has_value());
  EXPECT_EQ(r.table->device.name, kH100);
}

TEST(Resolve, SameComputeCapabilityPrefersSameSmCountThenNewest) {
  TempDir dir;
  save(dir / "a.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  save(dir / "b.json", device_table(kH200, 9, 0, 132, "2026-06-01T00:00:00Z"));
  save(dir / "c.json", device_table("NVIDIA H100 NVL", 9, 0, 114, "2026-12-01T00:00:00Z"));  // newest, other SMs
  save(dir / "d.json", device_table("NVIDIA A100-SXM4-80GB", 8, 0, 132, "2027-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100Pcie, 9, 0, 132), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kComputeCapability);
  EXPECT_EQ(r.path, dir / "b.json");
  EXPECT_EQ(r.message,
            "tuned parameters: " + (dir / "b.json") +
                " (no table for \"NVIDIA H100 PCIe\"; same compute capability 9.0, measured on \"NVIDIA H200\")");
  // No table with the same SM count: the newest of the rest.
  Resolution r2 = resolve_table(device(kH100Pcie, 9, 0, 114 + 1), nullptr, {dir.path()});
  EXPECT_EQ(r2.path, dir / "c.json");
}

TEST(Resolve, MinorComputeCapabilityMustMatch) {
  TempDir dir;
  save(dir / "a.json", device_table("NVIDIA A100", 8, 0, 108, "2026-01-01T00:00:00Z"));
  Resolution r = resolve_table(device("NVIDIA GeForce RTX 4090", 8, 9, 128), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  EXPECT_FALSE(r.table.has_value());
  EXPECT_TRUE(r.path.empty());
}

TEST(Resolve, TiesGoToTheFirstFileInSortedOrder) {
  TempDir dir;
  save(dir / "b.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  save(dir / "a.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  save(dir / "c.json", device_table(kH100, 9, 0, 132, "2025-01-01T00:00:00Z"));
  EXPECT_EQ(resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()}).path, dir / "a.json");
  // Among exact matches in one directory the newest wins.
  save(dir / "z.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:01Z"));
  EXPECT_EQ(resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()}).path, dir / "z.json");
}

TEST(Resolve, OverrideFileMatchingDevice) {
  TempDir dir;
  save(dir / "t.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  const std::string over = dir / "t.json";
  TempDir other;  // an exact match elsewhere must not matter
  save(other / "h100.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), over.c_str(), {other.path()});
  EXPECT_EQ(r.source, Source::kOverrideFile);
  EXPECT_EQ(r.path, over);
  EXPECT_EQ(r.message, "tuned parameters: " + over + " (BLASOFFLOAD_TUNED_PARAMS)");
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_TRUE(r.table.has_value());
  EXPECT_EQ(r.table->created, "2026-01-01T00:00:00Z");
}

TEST(Resolve, OverrideFileFromAnotherDeviceIsUsedWithAWarning) {
  TempDir dir;
  const std::string over = dir / "t.json";
  save(over, device_table("NVIDIA A100", 8, 0, 108, "2026-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), over.c_str(), {});
  EXPECT_EQ(r.source, Source::kOverrideFile);
  EXPECT_EQ(r.path, over);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "tuned parameters: BLASOFFLOAD_TUNED_PARAMS=" + over +
                               " was measured on \"NVIDIA A100\", this is \"NVIDIA H100 80GB HBM3\"");
  EXPECT_TRUE(r.table.has_value());
}

TEST(Resolve, MalformedOverrideFileGivesDefaults) {
  TempDir dir;
  const std::string over = dir / "bad.json";
  write_file(over, "{\"schema\": \"something-else\"}");
  TempDir other;  // not searched: the user named a file
  save(other / "h100.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), over.c_str(), {other.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  EXPECT_FALSE(r.table.has_value());
  const std::string reason = "schema: expected \"blasoffload-tuned-params/1\", got \"something-else\"";
  EXPECT_EQ(r.message,
            "tuned parameters: built-in defaults (BLASOFFLOAD_TUNED_PARAMS=" + over + " is malformed: " + reason + ")");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "tuned parameters: skipping malformed " + over + ": " + reason);
}

TEST(Resolve, MissingOverrideGivesDefaults) {
  TempDir dir;
  const std::string over = dir / "none.json";
  TempDir other;
  save(other / "h100.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), over.c_str(), {other.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  EXPECT_EQ(r.message, "tuned parameters: built-in defaults (BLASOFFLOAD_TUNED_PARAMS=" + over + " does not exist)");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "tuned parameters: BLASOFFLOAD_TUNED_PARAMS=" + over + " does not exist");
}

TEST(Resolve, EmptyOverrideIsUnset) {
  TempDir dir;
  save(dir / "h100.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), "", {dir.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Resolve, OverrideDirectoryIsSearchedFirst) {
  TempDir over, system;
  save(over / "mine.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  save(system / "shipped.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));  // newer
  Resolution r = resolve_table(device(kH100, 9, 0, 132), over.path().c_str(), {system.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_EQ(r.path, over / "mine.json");
  // Same for compute-capability matches: the override directory's one, although the other has the same SMs.
  TempDir over2, system2;
  save(over2 / "mine.json", device_table(kH200, 9, 0, 140, "2026-01-01T00:00:00Z"));
  save(system2 / "shipped.json", device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  r = resolve_table(device(kH100Pcie, 9, 0, 132), over2.path().c_str(), {system2.path()});
  EXPECT_EQ(r.source, Source::kComputeCapability);
  EXPECT_EQ(r.path, over2 / "mine.json");
  // But an exact name anywhere beats a compute-capability match in the override directory.
  r = resolve_table(device(kH100, 9, 0, 132), over2.path().c_str(), {system2.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_EQ(r.path, system2 / "shipped.json");
}

TEST(Resolve, MalformedFileInADirectoryIsSkippedWithAWarning) {
  TempDir dir;
  write_file(dir / "a-bad.json", "{");
  save(dir / "b-good.json", device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  Resolution r = resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_EQ(r.path, dir / "b-good.json");
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("tuned parameters: skipping malformed " + (dir / "a-bad.json") + ": invalid JSON: ", 0),
            0u)
      << r.warnings[0];
}

// Choosing reads only each file's header (device, created): a file is read whole only once chosen. So a file of
// another GPU whose body is broken is not even noticed, and a chosen one that fails whole gives way to the next best.
TEST(Resolve, OnlyTheChosenFileIsReadWhole) {
  TempDir dir;
  const std::string good = to_json(device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  // A newer table of the same GPU, and one of another, each cut off after its header.
  std::string newer = to_json(device_table(kH100, 9, 0, 132, "2027-01-01T00:00:00Z"));
  std::string other = to_json(device_table("NVIDIA A100", 8, 0, 108, "2027-01-01T00:00:00Z"));
  newer.resize(newer.find("\"tuner\""));
  other.resize(other.find("\"tuner\""));
  write_file(dir / "a-newer.json", newer);
  write_file(dir / "b-good.json", good);
  write_file(dir / "c-other.json", other);
  TableHeader h;
  std::string error;
  ASSERT_TRUE(peek_table(dir / "a-newer.json", &h, &error)) << error;
  EXPECT_EQ(h.device, device_table(kH100, 9, 0, 132, "").device);
  EXPECT_EQ(h.created, "2027-01-01T00:00:00Z");
  Table t;
  EXPECT_FALSE(load_table(dir / "a-newer.json", &t, &error));

  Resolution r = resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  EXPECT_EQ(r.path, dir / "b-good.json");
  ASSERT_EQ(r.warnings.size(), 1u) << "c-other.json's body is never read";
  EXPECT_EQ(
      r.warnings[0].rfind("tuned parameters: skipping malformed " + (dir / "a-newer.json") + ": invalid JSON: ", 0), 0u)
      << r.warnings[0];
  // The same with a compute-capability match.
  r = resolve_table(device("NVIDIA A100-SXM4-40GB", 8, 0, 108), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("tuned parameters: skipping malformed " + (dir / "c-other.json"), 0), 0u);
}

// A table whose header comes after its kernels (written by another tool; unknown order is allowed) is still read, and
// a header that fails validation reports the same reason as reading the file whole.
TEST(Resolve, TheHeaderIsFoundAnywhereAndCheckedAsAWholeRead) {
  TempDir dir;
  Table sample;
  std::string error;
  ASSERT_TRUE(load_table(BO_TUNING_SAMPLE_TABLE, &sample, &error)) << error;
  const nlohmann::ordered_json in = nlohmann::ordered_json::parse(to_json(sample));
  nlohmann::ordered_json reordered = nlohmann::ordered_json::object();
  for (const char* k : {"kernels", "bandwidth", "tuner", "cublas", "driver", "toolkit", "created", "device", "schema"})
    reordered[k] = in.at(k);
  write_file(dir / "late-header.json", reordered.dump(1));
  TableHeader h;
  ASSERT_TRUE(peek_table(dir / "late-header.json", &h, &error)) << error;
  EXPECT_EQ(h.device, sample.device);
  EXPECT_EQ(h.created, sample.created);
  Resolution r = resolve_table(sample.device, nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kExactName);
  ASSERT_TRUE(r.table.has_value());
  EXPECT_TRUE(*r.table == sample);

  nlohmann::ordered_json bad = in;
  bad["device"]["sm_count"] = "many";
  write_file(dir / "late-header.json", bad.dump(1));
  std::string peek_error, load_error;
  EXPECT_FALSE(peek_table(dir / "late-header.json", &h, &peek_error));
  EXPECT_FALSE(load_table(dir / "late-header.json", &sample, &load_error));
  EXPECT_EQ(peek_error, load_error);
  r = resolve_table(h.device, nullptr, {dir.path()});
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "tuned parameters: skipping malformed " + (dir / "late-header.json") + ": " + load_error);
}

TEST(Resolve, OnlyRegularJsonFilesAreConsidered) {
  TempDir dir;
  const std::string text = to_json(device_table(kH100, 9, 0, 132, "2026-01-01T00:00:00Z"));
  write_file(dir / "h100.txt", text);
  write_file(dir / "h100.json.tmp.123", text);
  write_file(dir / ".json", text);
  ASSERT_EQ(mkdir((dir / "sub.json").c_str(), 0755), 0);
  write_file(dir / "sub.json/h100.json", text);  // not searched recursively
  Resolution r = resolve_table(device(kH100, 9, 0, 132), nullptr, {dir.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(Resolve, NoMatchListsTheDirectoriesAndSkipsMissingOnesSilently) {
  TempDir dir;
  save(dir / "a100.json", device_table("NVIDIA A100", 8, 0, 108, "2026-01-01T00:00:00Z"));
  const std::string missing = dir / "does-not-exist";
  Resolution r = resolve_table(device("X", 8, 9, 10), nullptr, {missing, dir.path()});
  EXPECT_EQ(r.source, Source::kBuiltinDefaults);
  EXPECT_EQ(r.message, "tuned parameters: built-in defaults (no table for \"X\" (compute capability 8.9) in " +
                           missing + ", " + dir.path() + ")");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_FALSE(r.table.has_value());
  // The override directory is listed first.
  TempDir over;
  r = resolve_table(device("X", 8, 9, 10), over.path().c_str(), {dir.path()});
  EXPECT_EQ(r.message, "tuned parameters: built-in defaults (no table for \"X\" (compute capability 8.9) in " +
                           over.path() + ", " + dir.path() + ")");
}

TEST(Resolve, ResolvedTableIsReadyForLookups) {
  TempDir dir;
  std::string error;
  Table sample;
  ASSERT_TRUE(load_table(BO_TUNING_SAMPLE_TABLE, &sample, &error)) << error;
  save(dir / "sample.json", sample);
  Resolution r = resolve_table(device(sample.device.name, 9, 0, 132), nullptr, {dir.path()});
  ASSERT_TRUE(r.table.has_value());
  const int64_t dims[2] = {1000, 20000};
  const Tile* t = r.table->kernels.at("sgemv_n").nearest(dims);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->at, (std::vector<int64_t>{1024, 16384}));
}

}  // namespace
}  // namespace bo::tuning
