// Reading, validating, writing and saving tuned-parameter tables.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "support.h"
#include "tuning/table.h"

namespace bo::tuning {
namespace {

using test::read_file;
using test::small_table;
using test::TempDir;
using test::write_file;
using Json = nlohmann::json;

TEST(Json, RoundTripOfHandBuiltTable) {
  Table t = small_table();
  Table back;
  std::string error;
  ASSERT_TRUE(parse_table(to_json(t), &back, &error)) << error;
  EXPECT_TRUE(back == t);
  EXPECT_EQ(to_json(back), to_json(t));
  // Spot checks, so that a parser and writer that both dropped a field cannot pass by agreeing.
  EXPECT_EQ(back.device.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(back.device.cc_major, 9);
  EXPECT_EQ(back.device.cc_minor, 0);
  EXPECT_EQ(back.device.sm_count, 132);
  EXPECT_EQ(back.device.memory_gib, 79.1);
  EXPECT_EQ(back.cublas, "13.0.0");
  ASSERT_EQ(back.read.size(), 3u);
  EXPECT_EQ(back.read[1].bytes, 1048576);
  EXPECT_EQ(back.read[1].gbs, 600.25);
  const KernelTable& g = back.kernels.at("sgemv_n");
  ASSERT_EQ(g.tiles.size(), 6u);
  EXPECT_EQ(g.tiles[5].at, (std::vector<int64_t>{256, 16}));
  EXPECT_EQ(g.tiles[5].rate, 4096.25);
  EXPECT_EQ(g.tiles[5].candidates.at("sgemv_n_64x4"), 1e-3);
  EXPECT_FALSE(g.tiles[0].cublas_rate.has_value());
  EXPECT_EQ(*g.tiles[2].cublas_rate, 16.0 / 3);  // not representable in decimal: must survive exactly
  EXPECT_EQ(back.kernels.at("snrm2").tiles[0].config, "cublas");
}

TEST(Json, RoundTripOfSampleTableAndItIsCanonical) {
  const std::string text = read_file(BO_TUNING_SAMPLE_TABLE);
  Table t;
  std::string error;
  ASSERT_TRUE(parse_table(text, &t, &error)) << error;
  EXPECT_EQ(t.kernels.size(), 6u);
  for (const char* k : {"snrm2", "sgemv_n", "sgemv_t", "strsv_n", "strsv_t", "sgemm"}) {
    EXPECT_EQ(t.kernels.count(k), 1u) << k;
  }
  EXPECT_EQ(t.kernels.at("sgemm").unit, "GFLOP/s");
  EXPECT_EQ(t.kernels.at("sgemm").tiles.size(), 17u);  // 3 x 3 x 2 with one missing
  Table back;
  ASSERT_TRUE(parse_table(to_json(t), &back, &error)) << error;
  EXPECT_TRUE(back == t);
  // Committed tables are written by to_json; the sample is too, so rewriting it changes nothing.
  EXPECT_EQ(to_json(t), text);
}

TEST(Json, WriterOrderAndLayout) {
  Table t = small_table();
  // Reverse the tiles without finalize(): to_json must still sort them.
  auto& tiles = t.kernels.at("sgemv_n").tiles;
  std::reverse(tiles.begin(), tiles.end());
  const std::string s = to_json(t);
  EXPECT_EQ(s.rfind("{\n  \"schema\": \"blasoffload-tuned-params/1\",\n  \"device\": {\n    \"name\"", 0), 0u) << s;
  const char* keys[] = {"\"schema\"",        "\"device\"",           "\"compute_capability\": \"9.0\"",
                        "\"sm_count\": 132", "\"memory_gib\": 79.1", "\"toolkit\"",
                        "\"driver\"",        "\"cublas\"",           "\"created\"",
                        "\"tuner\"",         "\"bandwidth\"",        "\"read\"",
                        "\"write\"",         "\"kernels\"",          "\"sgemv_n\"",
                        "\"snrm2\""};
  std::size_t last = 0;
  for (const char* k : keys) {
    std::size_t pos = s.find(k);
    ASSERT_NE(pos, std::string::npos) << k;
    EXPECT_GT(pos, last) << k << " out of order";
    last = pos;
  }
  EXPECT_NE(s.find("      {\"bytes\": 1024, \"gbs\": 1.5},\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\"axes\": [\"m\", \"n\"]"), std::string::npos);
  EXPECT_NE(s.find("\"m\": [1, 16, 256]"), std::string::npos);
  std::size_t a = s.find("\"at\": [1, 1]"), b = s.find("\"at\": [1, 16]"), c = s.find("\"at\": [256, 16]");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  // Tile keys in schema order; optional ones only where present.
  std::size_t tile = s.find("\"at\": [256, 16]");
  const char* tile_keys[] = {"\"config\"",   "\"rate\"",        "\"time_us\"",   "\"own_config\"",
                             "\"own_rate\"", "\"cublas_rate\"", "\"candidates\""};
  last = tile;
  for (const char* k : tile_keys) {
    std::size_t pos = s.find(k, tile);
    EXPECT_GT(pos, last) << k;
    last = pos;
  }
  std::size_t first_tile_end = s.find('}', a);
  EXPECT_EQ(s.substr(a, first_tile_end - a).find("cublas_rate"), std::string::npos);
  EXPECT_EQ(s.back(), '\n');
}

TEST(Json, UnknownFieldsAndAnyKernelNameAreAccepted) {
  Json j = Json::parse(to_json(small_table()));
  j["comment"] = "added by hand";
  j["kernels"]["my_kernel"] = j["kernels"]["snrm2"];
  j["kernels"]["my_kernel"]["tiles"][0]["extra"] = 1;
  Table t;
  std::string error;
  ASSERT_TRUE(parse_table(j.dump(), &t, &error)) << error;
  EXPECT_EQ(t.kernels.at("my_kernel").tiles.size(), 3u);
}

// The complex keys as the tuner writes them: cuBLAS chosen with no own configuration (its own column names cuBLAS
// too), and the norms' own entries on the real kernels.
TEST(Json, RoundTripOfComplexKeys) {
  Table t = small_table();
  KernelTable herk;
  herk.unit = "GFLOP/s";
  herk.axes = {"n", "k"};
  herk.grid = {{256, 4096}, {64}};
  for (int64_t n : {256, 4096}) {
    Tile tile;
    tile.at = {n, 64};
    tile.config = tile.own_config = "cublas";
    tile.rate = tile.own_rate = 1000.5 * double(n) / 256;
    tile.time_us = 12.25;
    tile.cublas_rate = tile.rate;
    tile.candidates = {{"cublas", tile.rate}};
    herk.tiles.push_back(tile);
  }
  herk.finalize();
  KernelTable nrm = t.kernels.at("snrm2");
  for (Tile& tile : nrm.tiles) {
    tile.config = tile.own_config = "dznrm2_on_dnrm2_1p_256_4_v2";
    tile.candidates = {{"dznrm2_on_dnrm2_1p_256_4_v2", tile.rate}, {"dznrm2_on_dnrm2_256_4_v2", tile.rate / 2}};
  }
  t.kernels["zherk"] = herk;
  t.kernels["dznrm2"] = nrm;
  t.kernels["cgemv_t"] = t.kernels.at("sgemv_n");
  TempDir dir;
  const std::string path = dir / "h200.json";
  std::string error;
  ASSERT_TRUE(save_table(path, t, &error)) << error;
  Table back;
  ASSERT_TRUE(load_table(path, &back, &error)) << error;
  EXPECT_TRUE(back == t);
  EXPECT_EQ(to_json(back), to_json(t));
  const KernelTable& z = back.kernels.at("zherk");
  ASSERT_EQ(z.tiles.size(), 2u);
  EXPECT_EQ(z.tiles[1].own_config, "cublas");
  EXPECT_EQ(z.tiles[1].rate, 1000.5 * 16);
  const int64_t at[] = {5000, 50};
  EXPECT_EQ(z.nearest(at)->at, (std::vector<int64_t>{4096, 64}));
  EXPECT_EQ(back.kernels.at("dznrm2").tiles[0].config, "dznrm2_on_dnrm2_1p_256_4_v2");
  EXPECT_EQ(back.kernels.count("cgemv_t"), 1u);
}

TEST(Json, FractionalSecondsInCreatedAreAccepted) {
  Json j = Json::parse(to_json(small_table()));
  j["created"] = "2026-11-21T21:40:00.125Z";
  Table t;
  std::string error;
  EXPECT_TRUE(parse_table(j.dump(), &t, &error)) << error;
}

// --- Validation: each case edits a valid table's JSON and expects the error to start with `expect` -------

struct BadCase {
  const char* name;
  std::function<void(Json&)> edit;
  const char* expect;  // the start of the error message: the field path and the reason
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class RejectsBadTable : public ::testing::TestWithParam<BadCase> {};

Json& gemv(Json& j) { return j["kernels"]["sgemv_n"]; }
Json& tile0(Json& j) { return gemv(j)["tiles"][0]; }

const BadCase kBadCases[] = {
    {"schema_other_version", [](Json& j) { j["schema"] = "blasoffload-tuned-params/2"; },
     "schema: expected \"blasoffload-tuned-params/1\", got \"blasoffload-tuned-params/2\""},
    {"schema_missing", [](Json& j) { j.erase("schema"); }, "schema: missing"},
    {"root_not_object", [](Json& j) { j = Json::array(); }, "document: expected an object, got array"},
    {"device_name_empty", [](Json& j) { j["device"]["name"] = ""; }, "device.name: must not be empty"},
    {"device_cc_malformed", [](Json& j) { j["device"]["compute_capability"] = "9"; },
     "device.compute_capability: expected \"<major>.<minor>\", got \"9\""},
    {"device_cc_number", [](Json& j) { j["device"]["compute_capability"] = 9.0; },
     "device.compute_capability: expected a string, got number"},
    {"device_sm_count_string", [](Json& j) { j["device"]["sm_count"] = "132"; },
     "device.sm_count: expected an integer, got string"},
    {"device_sm_count_fraction", [](Json& j) { j["device"]["sm_count"] = 132.5; },
     "device.sm_count: expected an integer, got number"},
    {"device_memory_negative", [](Json& j) { j["device"]["memory_gib"] = -1; }, "device.memory_gib: must be >= 0"},
    {"cublas_missing", [](Json& j) { j.erase("cublas"); }, "cublas: missing"},
    {"toolkit_not_string", [](Json& j) { j["toolkit"] = 13; }, "toolkit: expected a string, got number"},
    {"created_not_iso", [](Json& j) { j["created"] = "21.11.2026"; }, "created: expected ISO 8601 UTC"},
    {"created_local_time", [](Json& j) { j["created"] = "2026-11-21T21:40:00+01:00"; },
     "created: expected ISO 8601 UTC"},
    {"bandwidth_missing", [](Json& j) { j.erase("bandwidth"); }, "bandwidth: missing"},
    {"bandwidth_write_missing", [](Json& j) { j["bandwidth"].erase("write"); }, "bandwidth.write: missing"},
    {"bandwidth_not_ascending", [](Json& j) { j["bandwidth"]["read"][1]["bytes"] = 1024; },
     "bandwidth.read[1].bytes: not ascending"},
    {"bandwidth_gbs_zero", [](Json& j) { j["bandwidth"]["write"][0]["gbs"] = 0; },
     "bandwidth.write[0].gbs: must be > 0"},
    {"kernels_not_object", [](Json& j) { j["kernels"] = Json::array(); }, "kernels: expected an object, got array"},
    {"unit_unknown", [](Json& j) { gemv(j)["unit"] = "GB"; },
     "kernels.sgemv_n.unit: expected \"GB/s\" or \"GFLOP/s\", got \"GB\""},
    {"axes_empty", [](Json& j) { gemv(j)["axes"] = Json::array(); }, "kernels.sgemv_n.axes: must not be empty"},
    {"axes_duplicate",
     [](Json& j) {
       gemv(j)["axes"] = {"m", "m"};
     },
     "kernels.sgemv_n.axes[1]: duplicate axis \"m\""},
    {"grid_axis_missing", [](Json& j) { gemv(j)["grid"].erase("n"); }, "kernels.sgemv_n.grid.n: missing"},
    {"grid_extra_axis", [](Json& j) { gemv(j)["grid"]["k"] = {1}; }, "kernels.sgemv_n.grid.k: not one of the axes"},
    {"grid_empty", [](Json& j) { gemv(j)["grid"]["n"] = Json::array(); }, "kernels.sgemv_n.grid.n: must not be empty"},
    {"grid_not_ascending",
     [](Json& j) {
       gemv(j)["grid"]["m"] = {1, 256, 16};
     },
     "kernels.sgemv_n.grid.m[2]: not strictly ascending (16 after 256)"},
    {"grid_repeated_point",
     [](Json& j) {
       gemv(j)["grid"]["m"] = {1, 16, 16, 256};
     },
     "kernels.sgemv_n.grid.m[2]: not strictly ascending (16 after 16)"},
    {"grid_zero",
     [](Json& j) {
       gemv(j)["grid"]["n"] = {0, 1, 16};
     },
     "kernels.sgemv_n.grid.n[0]: 0 is outside"},
    {"grid_fraction",
     [](Json& j) {
       gemv(j)["grid"]["n"] = {1, 1.5, 16};
     },
     "kernels.sgemv_n.grid.n[1]: expected an integer, got number"},
    {"grid_too_large",
     [](Json& j) {
       Json big = Json::array();
       for (int i = 1; i <= 1025; ++i) big.push_back(i);
       gemv(j)["grid"]["m"] = big;
       gemv(j)["grid"]["n"] = big;
     },
     "kernels.sgemv_n.grid: more than 1048576 grid cells"},
    {"tile_at_count", [](Json& j) { gemv(j)["tiles"][3]["at"] = {16}; },
     "kernels.sgemv_n.tiles[3].at: expected 2 values, got 1"},
    {"tile_at_off_grid",
     [](Json& j) {
       tile0(j)["at"] = {1, 100};
     },
     "kernels.sgemv_n.tiles[0].at[1]: 100 is not a grid point of n"},
    {"tile_at_fraction",
     [](Json& j) {
       tile0(j)["at"] = {1.0, 1};
     },
     "kernels.sgemv_n.tiles[0].at[0]: expected an integer, got number"},
    {"tile_duplicate",
     [](Json& j) {
       gemv(j)["tiles"][4]["at"] = {1, 16};
     },
     "kernels.sgemv_n.tiles[4].at: duplicate of tiles[1]"},
    {"tiles_missing", [](Json& j) { gemv(j).erase("tiles"); }, "kernels.sgemv_n.tiles: missing"},
    {"tile_config_empty", [](Json& j) { tile0(j)["config"] = ""; },
     "kernels.sgemv_n.tiles[0].config: must not be empty"},
    {"tile_config_missing", [](Json& j) { tile0(j).erase("config"); }, "kernels.sgemv_n.tiles[0].config: missing"},
    {"tile_rate_negative", [](Json& j) { tile0(j)["rate"] = -0.5; }, "kernels.sgemv_n.tiles[0].rate: must be >= 0"},
    {"tile_rate_string", [](Json& j) { tile0(j)["rate"] = "fast"; },
     "kernels.sgemv_n.tiles[0].rate: expected a number, got string"},
    {"tile_own_rate_missing", [](Json& j) { tile0(j).erase("own_rate"); },
     "kernels.sgemv_n.tiles[0].own_rate: missing"},
    {"tile_cublas_rate_null", [](Json& j) { tile0(j)["cublas_rate"] = nullptr; },
     "kernels.sgemv_n.tiles[0].cublas_rate: expected a number, got null"},
    {"tile_model_rate_negative", [](Json& j) { tile0(j)["model_rate"] = -3; },
     "kernels.sgemv_n.tiles[0].model_rate: must be >= 0"},
    {"tile_candidates_array",
     [](Json& j) {
       tile0(j)["candidates"] = {1, 2};
     },
     "kernels.sgemv_n.tiles[0].candidates: expected an object, got array"},
    {"tile_candidate_negative", [](Json& j) { gemv(j)["tiles"][5]["candidates"]["cublas"] = -1; },
     "kernels.sgemv_n.tiles[5].candidates.cublas: must be >= 0"},
};

TEST_P(RejectsBadTable, NamesTheField) {
  const BadCase& c = GetParam();
  Json j = Json::parse(to_json(small_table()));
  c.edit(j);
  const std::string text = j.dump(2);
  Table t;
  t.toolkit = "untouched";
  std::string error;
  EXPECT_FALSE(parse_table(text, &t, &error));
  EXPECT_EQ(error.rfind(c.expect, 0), 0u) << "error: " << error << "\nexpected to start with: " << c.expect;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(t.toolkit, "untouched") << "a failed parse must leave the output alone";
}

INSTANTIATE_TEST_SUITE_P(Json, RejectsBadTable, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(Json, RejectsNumbersThatOverflowToInfinity) {
  // JSON has no Inf or NaN; nlohmann refuses literals beyond double's range instead of making them Inf.
  std::string text = to_json(small_table());
  const std::string from = "\"time_us\": 3.5";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"time_us\": 1e999");
  Table t;
  std::string error;
  EXPECT_FALSE(parse_table(text, &t, &error));
  EXPECT_NE(error.find("number overflow"), std::string::npos) << error;
}

TEST(Json, RejectsInvalidJsonWithPosition) {
  Table t;
  std::string error;
  EXPECT_FALSE(parse_table("{\"schema\": \"blasoffload-tuned-params/1\",\n}", &t, &error));
  EXPECT_EQ(error.rfind("invalid JSON: parse error at line 2, column 1", 0), 0u) << error;
  EXPECT_FALSE(parse_table("", &t, &error));
  EXPECT_EQ(error.rfind("invalid JSON: ", 0), 0u) << error;
}

// --- Files --------------------------------------------------------------------------------------------------

TEST(Files, SaveCreatesDirectoriesAndLoadReadsBack) {
  TempDir dir;
  const std::string path = dir / "a/b/h100.json";
  Table t = small_table();
  std::string error;
  ASSERT_TRUE(save_table(path, t, &error)) << error;
  EXPECT_EQ(read_file(path), to_json(t));
  Table back;
  ASSERT_TRUE(load_table(path, &back, &error)) << error;
  EXPECT_TRUE(back == t);
  // Overwrite in place; no temp file left behind.
  t.tuner = "second run";
  ASSERT_TRUE(save_table(path, t, &error)) << error;
  ASSERT_TRUE(load_table(path, &back, &error)) << error;
  EXPECT_EQ(back.tuner, "second run");
  EXPECT_EQ(test::list_dir(dir / "a/b"), std::vector<std::string>{"h100.json"});
}

TEST(Files, SaveFailsWhereTheParentIsAFile) {
  TempDir dir;
  write_file(dir / "file", "x");
  std::string error;
  EXPECT_FALSE(save_table(dir / "file/t.json", small_table(), &error));
  EXPECT_EQ(error.rfind("cannot create " + (dir / "file"), 0), 0u) << error;
}

TEST(Files, SaveFailsWhereTheTempFileCannotBeCreated) {
  TempDir dir;
  const std::string tmp = dir / ("t.json.tmp." + std::to_string(getpid()));
  ASSERT_EQ(mkdir(tmp.c_str(), 0755), 0);  // works as root too, unlike a read-only directory
  std::string error;
  EXPECT_FALSE(save_table(dir / "t.json", small_table(), &error));
  EXPECT_EQ(error, "cannot create " + tmp + ": Is a directory");
  EXPECT_EQ(test::list_dir(dir.path()), std::vector<std::string>{"t.json.tmp." + std::to_string(getpid())});
}

TEST(Files, FailedRenameLeavesNoTempFile) {
  TempDir dir;
  ASSERT_EQ(mkdir((dir / "t.json").c_str(), 0755), 0);
  write_file(dir / "t.json/keep", "x");  // a non-empty directory cannot be replaced by a file
  std::string error;
  EXPECT_FALSE(save_table(dir / "t.json", small_table(), &error));
  EXPECT_EQ(error.rfind("cannot rename " + (dir / "t.json.tmp."), 0), 0u) << error;
  EXPECT_EQ(test::list_dir(dir.path()), std::vector<std::string>{"t.json"});
}

TEST(Files, SaveRefusesATableTheReaderWouldReject) {
  TempDir dir;
  Table t = small_table();
  t.kernels.at("snrm2").tiles[1].rate = std::nan("");  // JSON has no NaN: it would be written as null
  std::string error;
  EXPECT_FALSE(save_table(dir / "t.json", t, &error));
  EXPECT_EQ(error, "not saving an invalid table: kernels.snrm2.tiles[1].rate: expected a number, got null");
  t = small_table();
  t.kernels.at("sgemv_n").tiles[0].config.clear();
  EXPECT_FALSE(save_table(dir / "t.json", t, &error));
  EXPECT_EQ(error, "not saving an invalid table: kernels.sgemv_n.tiles[0].config: must not be empty");
  EXPECT_TRUE(test::list_dir(dir.path()).empty());
}

TEST(Files, LoadReportsMissingFileAndDirectory) {
  TempDir dir;
  Table t;
  std::string error;
  EXPECT_FALSE(load_table(dir / "none.json", &t, &error));
  EXPECT_EQ(error, "cannot open: No such file or directory");
  EXPECT_FALSE(load_table(dir.path(), &t, &error));
  EXPECT_EQ(error, "is a directory");
}

}  // namespace
}  // namespace bo::tuning
