// The configuration registry on its own: values and their sources, invalid values warned about once, unknown
// variables and keys with the nearest valid name, per-routine knobs from the routine list, and the path rules.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "config/paths.h"
#include "policy/config.h"

extern char** environ;

namespace blasoffload {
namespace {

std::string tmp_path(const std::string& name) {
  return std::string(::testing::TempDir()) + "/bo_config_" + std::to_string(getpid()) + "_" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const EffectiveValue& value_of(const std::vector<EffectiveValue>& all, const std::string& name) {
  for (const auto& v : all)
    if (v.knob->name == name) return v;
  static EffectiveValue none{};
  ADD_FAILURE() << name << " not in the registry";
  return none;
}

// Each test starts from no BLASOFFLOAD_* variable, no user or system config file, and the log in a file.
class Config : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> names;
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("BLASOFFLOAD_", 0) == 0)
        names.push_back(std::string(*e).substr(0, std::string(*e).find('=')));
    for (const auto& n : names) unsetenv(n.c_str());
    setenv("XDG_CONFIG_HOME", tmp_path("xdg").c_str(), 1);
    config_set_library_dir("/nonexistent/lib");
    log_ = tmp_path("log");
    std::remove(log_.c_str());
    setenv("BLASOFFLOAD_LOG_FILE", log_.c_str(), 1);
  }
  void Reload() {
    config_reload_for_tests();
    settings();
  }
  std::string WriteConf(const std::string& text) {
    const std::string p = tmp_path("conf");
    std::ofstream(p) << text;
    setenv("BLASOFFLOAD_CONFIG", p.c_str(), 1);
    return p;
  }
  std::string log_;
};

TEST_F(Config, EachValueRecordsItsSource) {
  const std::string conf = WriteConf("# comment\nlog = calls\nSGEMM_MIN = 100\nmode = cpu\n");
  setenv("BLASOFFLOAD_MODE", "gpu", 1);
  Reload();
  const auto all = effective_values();
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_MODE").source, Source::kEnvironment);
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_MODE").value, "gpu");
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_LOG").source, Source::kFile);
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_LOG").where, conf + ":2");
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_SGEMM_MIN").where, conf + ":3");
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_PIPELINE").source, Source::kDefault);
  EXPECT_EQ(value_of(all, "BLASOFFLOAD_PIPELINE").where, "default");
  EXPECT_EQ(settings().mode, Mode::kGpu);
  EXPECT_EQ(settings().log, LogLevel::kCalls);
  EXPECT_EQ(settings().min_size[index(Routine::sgemm)], 100);
  EXPECT_EQ(settings().config_file, conf);
  ASSERT_FALSE(config_files_considered().empty());
  EXPECT_EQ(config_files_considered()[0].second, "read");
  EXPECT_TRUE(config_problems().empty()) << config_problems()[0];
}

TEST_F(Config, InvalidValueIsWarnedOnceAndTheDefaultUsed) {
  setenv("BLASOFFLOAD_PIPELINE", "sometimes", 1);
  setenv("BLASOFFLOAD_DEVICES", "0,,1", 1);
  Reload();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(config_value("BLASOFFLOAD_PIPELINE"), nullptr);
  EXPECT_EQ(config_value("BLASOFFLOAD_DEVICES"), nullptr);
  const std::string log = slurp(log_);
  EXPECT_EQ(count(log, "BLASOFFLOAD_PIPELINE=sometimes is not one of auto|always|off; using auto"), 1) << log;
  EXPECT_EQ(count(log, "BLASOFFLOAD_DEVICES=0,,1 is not a list of GPU indices"), 1) << log;
  EXPECT_EQ(value_of(effective_values(), "BLASOFFLOAD_PIPELINE").invalid, "sometimes");
}

TEST_F(Config, InvalidValueInTheFileNamesItsLine) {
  const std::string conf = WriteConf("tile = -5\n");
  Reload();
  EXPECT_EQ(count(slurp(log_), "BLASOFFLOAD_TILE=-5 is not an integer >= 1; using 2048 (" + conf + ":1)"), 1)
      << slurp(log_);
}

TEST_F(Config, UnknownVariableNamesTheNearestSetting) {
  setenv("BLASOFFLOAD_MDOE", "gpu", 1);
  setenv("BLASOFFLOAD_PIPLINE_MIN_MB", "3", 1);
  setenv("BLASOFFLOAD_SOMETHING_ELSE_ENTIRELY", "1", 1);
  Reload();
  const std::string log = slurp(log_);
  EXPECT_EQ(count(log, "BLASOFFLOAD_MDOE: unknown setting; did you mean BLASOFFLOAD_MODE?"), 1) << log;
  EXPECT_EQ(count(log, "BLASOFFLOAD_PIPLINE_MIN_MB: unknown setting; did you mean BLASOFFLOAD_PIPELINE_MIN_MB?"), 1)
      << log;
  EXPECT_EQ(count(log, "BLASOFFLOAD_SOMETHING_ELSE_ENTIRELY: unknown setting (ignored)"), 1) << log;
  EXPECT_EQ(settings().mode, Mode::kAuto);
}

TEST_F(Config, UnknownKeyNamesTheNearestInTheSameForm) {
  const std::string conf = WriteConf("mdoe = gpu\nBLASOFFLOAD_LGO = debug\nnot a setting\n");
  Reload();
  const std::string log = slurp(log_);
  EXPECT_EQ(count(log, conf + ":1: unknown key 'mdoe'; did you mean 'mode'?"), 1) << log;
  EXPECT_EQ(count(log, conf + ":2: unknown key 'BLASOFFLOAD_LGO'; did you mean 'BLASOFFLOAD_LOG'?"), 1) << log;
  EXPECT_EQ(count(log, conf + ":3: expected KEY = VALUE"), 1) << log;
  EXPECT_EQ(config_problems().size(), 3u);
}

TEST_F(Config, WordsReachTheModuleInCanonicalForm) {
  setenv("BLASOFFLOAD_PIN_HOST", "OFF", 1);
  setenv("BLASOFFLOAD_RESIDENCY_MEM", "8G", 1);
  Reload();
  ASSERT_NE(config_value("BLASOFFLOAD_PIN_HOST"), nullptr);
  EXPECT_STREQ(config_value("BLASOFFLOAD_PIN_HOST"), "off");
  EXPECT_STREQ(config_value("BLASOFFLOAD_RESIDENCY_MEM"), "8G");
  EXPECT_EQ(config_value("BLASOFFLOAD_TILE"), nullptr);
}

TEST_F(Config, UnregisteredKeysStillReadTheEnvironment) {
  setenv("BLASOFFLOAD_NOT_YET_REGISTERED", "x", 1);
  Reload();
  ASSERT_NE(config_value("BLASOFFLOAD_NOT_YET_REGISTERED"), nullptr);
  EXPECT_STREQ(config_value("BLASOFFLOAD_NOT_YET_REGISTERED"), "x");
}

TEST_F(Config, PerRoutineKnobsComeFromTheRoutineList) {
  setenv("BLASOFFLOAD_MODE", "cpu", 1);
  Reload();
  for (std::size_t i = 0; i < kNumRoutines; ++i) {
    std::string up = routine_name(static_cast<Routine>(i));
    for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_NE(find_knob("BLASOFFLOAD_" + up), nullptr) << up;
    EXPECT_NE(find_knob("BLASOFFLOAD_" + up + "_MIN"), nullptr) << up;
    EXPECT_EQ(settings().routine_mode[i], Mode::kCpu) << up << " must default to BLASOFFLOAD_MODE";
    EXPECT_EQ(settings().min_size[i], -1);
  }
}

TEST_F(Config, EveryModuleKnobIsRegistered) {
  // The names the CUDA module and its kernels read (grep the tree for BLASOFFLOAD_ when adding one).
  for (const char* k :
       {"BLASOFFLOAD_DEVICE", "BLASOFFLOAD_DEVICES", "BLASOFFLOAD_PINNED_MAX_MB", "BLASOFFLOAD_PIPELINE",
        "BLASOFFLOAD_PIPELINE_MIN_MB", "BLASOFFLOAD_TILE", "BLASOFFLOAD_DEVICE_MEMORY_LIMIT",
        "BLASOFFLOAD_STAGING_THREADS", "BLASOFFLOAD_PINNED_MB", "BLASOFFLOAD_PIN_HOST", "BLASOFFLOAD_PIN_MAX",
        "BLASOFFLOAD_HYBRID", "BLASOFFLOAD_RESIDENCY", "BLASOFFLOAD_RESIDENCY_MEM", "BLASOFFLOAD_STRSM_INV_MAX_COND",
        "BLASOFFLOAD_CUBLAS", "BLASOFFLOAD_TUNED_PARAMS", "BLASOFFLOAD_TEST_FAIL_AFTER_TILES"}) {
    const Knob* knob = find_knob(k);
    ASSERT_NE(knob, nullptr) << k;
    EXPECT_FALSE(knob->doc.empty()) << k;
  }
}

TEST(Knobs, AcceptedValues) {
  auto ok = [](const char* name, const char* v) { return knob_accepts(*find_knob(name), v); };
  EXPECT_TRUE(ok("BLASOFFLOAD_MODE", "GPU"));
  EXPECT_FALSE(ok("BLASOFFLOAD_MODE", "fastest"));
  EXPECT_TRUE(ok("BLASOFFLOAD_HYBRID", "0.25"));
  EXPECT_TRUE(ok("BLASOFFLOAD_HYBRID", "off"));
  EXPECT_FALSE(ok("BLASOFFLOAD_HYBRID", "1"));
  EXPECT_FALSE(ok("BLASOFFLOAD_HYBRID", "1.5"));
  EXPECT_TRUE(ok("BLASOFFLOAD_PIN_MAX", "16G"));
  EXPECT_TRUE(ok("BLASOFFLOAD_PIN_MAX", "1.5MB"));
  EXPECT_TRUE(ok("BLASOFFLOAD_PIN_MAX", "1048576"));
  EXPECT_FALSE(ok("BLASOFFLOAD_PIN_MAX", "lots"));
  EXPECT_FALSE(ok("BLASOFFLOAD_PIN_MAX", "8GiBs"));
  EXPECT_TRUE(ok("BLASOFFLOAD_DEVICES", "0,1"));
  EXPECT_FALSE(ok("BLASOFFLOAD_DEVICES", "0,"));
  EXPECT_TRUE(ok("BLASOFFLOAD_STAGING_THREADS", "256"));
  EXPECT_FALSE(ok("BLASOFFLOAD_STAGING_THREADS", "257"));
  EXPECT_FALSE(ok("BLASOFFLOAD_TILE", "12abc"));
  EXPECT_TRUE(ok("BLASOFFLOAD_STRSM_INV_MAX_COND", "0"));
  EXPECT_FALSE(ok("BLASOFFLOAD_STRSM_INV_MAX_COND", "-1"));
  EXPECT_TRUE(ok("BLASOFFLOAD_LOG", "2"));
}

TEST(Knobs, NearestName) {
  EXPECT_EQ(nearest_knob("BLASOFFLOAD_MDOE"), "BLASOFFLOAD_MODE");
  EXPECT_EQ(nearest_knob("mdoe"), "BLASOFFLOAD_MODE");
  EXPECT_EQ(nearest_knob("BLASOFFLOAD_SGEM"), "BLASOFFLOAD_SGEMM");
  EXPECT_EQ(nearest_knob("BLASOFFLOAD_ZZZZZZZZZZ"), "");
}

TEST(Paths, InstalledLayouts) {
  using namespace paths;
  EXPECT_EQ(prefix_of("/usr/lib/x86_64-linux-gnu"), "/usr");
  EXPECT_EQ(prefix_of("/opt/bo/lib"), "/opt/bo");
  EXPECT_EQ(prefix_of("/opt/bo/lib64"), "/opt/bo");
  EXPECT_EQ(prefix_of("/opt/bo/bin"), "/opt/bo");
  EXPECT_EQ(prefix_of("/work/build"), "");
  EXPECT_EQ(system_config_files("/usr/lib/x86_64-linux-gnu").front(), "/etc/blasoffload.conf");
  EXPECT_EQ(system_config_files("/opt/bo/lib/x86_64-linux-gnu").front(), "/opt/bo/etc/blasoffload.conf");
  EXPECT_EQ(data_dirs("/opt/bo/lib").front(), "/opt/bo/share/blasoffload");
  EXPECT_EQ(data_dirs("/usr/lib/aarch64-linux-gnu").front(), "/usr/share/blasoffload");
  const auto t = tuned_params_dirs("/opt/bo/lib/x86_64-linux-gnu");
  EXPECT_NE(std::find(t.begin(), t.end(), "/opt/bo/lib/x86_64-linux-gnu/tuned_params"), t.end());
  EXPECT_NE(std::find(t.begin(), t.end(), "/opt/bo/share/blasoffload/tuned_params"), t.end());
  EXPECT_EQ(normalise("/a/b/../c/./d/"), "/a/c/d");
  EXPECT_EQ(normalise("a/../../b"), "../b");
}

}  // namespace
}  // namespace blasoffload
