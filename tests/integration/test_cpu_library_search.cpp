// The order in which a process that links no CPU BLAS or LAPACK tries the system's (dispatch/cpu_library_search.h),
// on fake roots: the alternative's choice, its other choices (OpenBLAS first, then by priority), well-known paths,
// each once, never ourselves; and dpkg's record format.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "dispatch/cpu_library_search.h"

namespace blasoffload {
namespace {

// A multiarch name no real system has: the lookup must follow the one it is given.
constexpr const char* kArch = "test-linux-gnu";

std::string real(const std::string& p) {
  char buf[PATH_MAX];
  return realpath(p.c_str(), buf) ? buf : "";
}

class FakeRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/cpu_library_search.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    root_ = real(dir);
  }
  void TearDown() override { std::system(("rm -rf '" + root_ + "'").c_str()); }

  std::string lib(const std::string& rel) const { return "/usr/lib/" + std::string(kArch) + "/" + rel; }
  void mkdirs(const std::string& path) const { std::system(("mkdir -p '" + root_ + path + "'").c_str()); }
  // An (empty) library file at `path` under the root.
  void file(const std::string& path) const {
    mkdirs(path.substr(0, path.rfind('/')));
    std::ofstream(root_ + path) << "";
  }
  void link(const std::string& path, const std::string& target) const {
    mkdirs(path.substr(0, path.rfind('/')));
    ASSERT_EQ(symlink(target.c_str(), (root_ + path).c_str()), 0);
  }
  void record(const std::string& name, const std::string& text) const {
    mkdirs("/var/lib/dpkg/alternatives");
    std::ofstream(root_ + "/var/lib/dpkg/alternatives/" + name + "-" + kArch) << text;
  }
  // The candidates as real paths relative to the root, with their reasons.
  std::vector<std::string> order(CpuLibraryKind kind, const std::string& self = "") const {
    std::vector<std::string> out;
    for (const auto& c : cpu_library_candidates(kind, {root_, kArch, self.empty() ? "" : real(root_ + self)}))
      out.push_back(real(c.path).substr(root_.size()) + " | " + c.why);
    return out;
  }

  std::string root_;
};

// A record's choices as "PATH:PRIORITY ...".
std::string choices(const std::string& record) {
  std::string out;
  for (const auto& c : parse_alternative_record(record))
    out += (out.empty() ? "" : " ") + c.path + ":" + std::to_string(c.priority);
  return out;
}

TEST(AlternativeRecord, ParsesChoicesAndPriorities) {
  EXPECT_EQ(choices("auto\n/usr/lib/x/libblas.so.3\n\n/usr/lib/x/blas/libblas.so.3\n10\n"
                    "/usr/lib/x/openblas-pthread/libblas.so.3\n100\n\n"),
            "/usr/lib/x/blas/libblas.so.3:10 /usr/lib/x/openblas-pthread/libblas.so.3:100");
  // One follower (libblas.a): each choice carries one more line, its follower's path (the second's is empty).
  EXPECT_EQ(choices("manual\n/usr/lib/x/libblas.so\nlibblas.a\n/usr/lib/x/libblas.a\n\n/usr/lib/x/blas/libblas.so\n10\n"
                    "/usr/lib/x/blas/libblas.a\n/usr/lib/x/atlas/libblas.so\n35\n\n\n"),
            "/usr/lib/x/blas/libblas.so:10 /usr/lib/x/atlas/libblas.so:35");
}

TEST(AlternativeRecord, RejectsOtherText) {
  EXPECT_TRUE(parse_alternative_record("").empty());
  EXPECT_TRUE(parse_alternative_record("hello\nworld\n\n").empty());
  EXPECT_TRUE(parse_alternative_record("auto\n/l\n\n/a\nten\n\n").empty());
}

// The administrator's choice first, even the reference BLAS; then OpenBLAS before a choice of higher priority; then
// the rest by priority; then the well-known paths not yet listed. Choices whose file is missing are left out.
TEST_F(FakeRoot, AlternativeChoiceThenOpenBlasThenPriorityThenWellKnown) {
  for (const char* d : {"blas", "openblas-serial", "blis-pthread", "atlas", "openblas-pthread"})
    file(lib(std::string(d) + "/libblas.so.3"));
  link(lib("libblas.so.3"), root_ + lib("blas/libblas.so.3"));
  record("libblas.so.3", "auto\n" + lib("libblas.so.3") + "\n\n" + lib("blas/libblas.so.3") + "\n10\n" +
                             lib("blis-pthread/libblas.so.3") + "\n80\n" + lib("openblas-serial/libblas.so.3") +
                             "\n40\n" + lib("missing/libblas.so.3") + "\n90\n\n");
  EXPECT_EQ(
      order(CpuLibraryKind::kBlas),
      (std::vector<std::string>{lib("blas/libblas.so.3") + " | the libblas.so.3 alternative",
                                lib("openblas-serial/libblas.so.3") + " | a libblas.so.3 alternative, priority 40",
                                lib("blis-pthread/libblas.so.3") + " | a libblas.so.3 alternative, priority 80",
                                lib("openblas-pthread/libblas.so.3") + " | a well-known path",
                                lib("atlas/libblas.so.3") + " | a well-known path"}));
}

// blasoffload installed as the alternative (and as its best choice, under another name): never a candidate.
TEST_F(FakeRoot, SkipsItself) {
  file(lib("blasoffload/libblasoffload.so.0"));
  file(lib("blas/libblas.so.3"));
  file(lib("openblas-openmp/libblas.so.3"));
  link(lib("blasoffload/libblas.so.3"), "libblasoffload.so.0");
  link(lib("libblas.so.3"), root_ + lib("blasoffload/libblas.so.3"));
  record("libblas.so.3", "auto\n" + lib("libblas.so.3") + "\n\n" + lib("blasoffload/libblas.so.3") + "\n500\n" +
                             lib("blas/libblas.so.3") + "\n10\n\n");
  const std::string self = lib("blasoffload/libblasoffload.so.0");
  EXPECT_EQ(order(CpuLibraryKind::kBlas, self),
            (std::vector<std::string>{lib("blas/libblas.so.3") + " | a libblas.so.3 alternative, priority 10",
                                      lib("openblas-openmp/libblas.so.3") + " | a well-known path"}));
  // A hard link to our file, at a well-known path, is us too.
  mkdirs(lib("openblas-serial"));
  ASSERT_EQ(::link((root_ + self).c_str(), (root_ + lib("openblas-serial/libblas.so.3")).c_str()), 0);
  EXPECT_EQ(order(CpuLibraryKind::kBlas, self).size(), 2u);
}

// No alternatives at all (another distribution, or a container without dpkg's records): the well-known paths, in
// their order: OpenBLAS, BLIS, ATLAS, reference.
TEST_F(FakeRoot, WellKnownPathsInOrder) {
  for (const char* d : {"blas", "atlas", "blis-openmp", "openblas-openmp"}) file(lib(std::string(d) + "/libblas.so.3"));
  for (const char* d : {"lapack", "openblas-serial"}) file(lib(std::string(d) + "/liblapack.so.3"));
  EXPECT_EQ(order(CpuLibraryKind::kBlas),
            (std::vector<std::string>{lib("openblas-openmp/libblas.so.3") + " | a well-known path",
                                      lib("blis-openmp/libblas.so.3") + " | a well-known path",
                                      lib("atlas/libblas.so.3") + " | a well-known path",
                                      lib("blas/libblas.so.3") + " | a well-known path"}));
  EXPECT_EQ(order(CpuLibraryKind::kLapack),
            (std::vector<std::string>{lib("openblas-serial/liblapack.so.3") + " | a well-known path",
                                      lib("lapack/liblapack.so.3") + " | a well-known path"}));
}

TEST_F(FakeRoot, LapackFollowsItsOwnAlternative) {
  file(lib("lapack/liblapack.so.3"));
  file(lib("openblas-pthread/liblapack.so.3"));
  link(lib("liblapack.so.3"), root_ + lib("lapack/liblapack.so.3"));
  record("liblapack.so.3", "auto\n" + lib("liblapack.so.3") + "\n\n" + lib("lapack/liblapack.so.3") + "\n10\n" +
                               lib("openblas-pthread/liblapack.so.3") + "\n100\n\n");
  EXPECT_EQ(order(CpuLibraryKind::kLapack),
            (std::vector<std::string>{
                lib("lapack/liblapack.so.3") + " | the liblapack.so.3 alternative",
                lib("openblas-pthread/liblapack.so.3") + " | a liblapack.so.3 alternative, priority 100"}));
  EXPECT_TRUE(order(CpuLibraryKind::kBlas).empty());
}

TEST_F(FakeRoot, EmptyRootHasNoCandidates) {
  EXPECT_TRUE(order(CpuLibraryKind::kBlas).empty());
  EXPECT_TRUE(order(CpuLibraryKind::kLapack).empty());
}

#ifdef BO_TEST_SHIM
// The ILP64 kinds follow libblas64.so.3's and liblapack64.so.3's own alternatives and directories: an LP64 library is
// never an ILP64 candidate, nor the reverse.
TEST_F(FakeRoot, Ilp64KindsNeverTakeLp64Libraries) {
  for (const char* d : {"blas", "openblas-pthread"}) file(lib(std::string(d) + "/libblas.so.3"));
  file(lib("lapack/liblapack.so.3"));
  EXPECT_TRUE(order(CpuLibraryKind::kBlas64).empty());
  EXPECT_TRUE(order(CpuLibraryKind::kLapack64).empty());
  for (const char* d : {"blas64", "blis64-openmp", "openblas64-serial"}) file(lib(std::string(d) + "/libblas64.so.3"));
  file(lib("lapack64/liblapack64.so.3"));
  link(lib("libblas64.so.3"), root_ + lib("blas64/libblas64.so.3"));
  record("libblas64.so.3", "auto\n" + lib("libblas64.so.3") + "\n\n" + lib("blas64/libblas64.so.3") + "\n10\n\n");
  EXPECT_EQ(order(CpuLibraryKind::kBlas64),
            (std::vector<std::string>{lib("blas64/libblas64.so.3") + " | the libblas64.so.3 alternative",
                                      lib("openblas64-serial/libblas64.so.3") + " | a well-known path",
                                      lib("blis64-openmp/libblas64.so.3") + " | a well-known path"}));
  EXPECT_EQ(order(CpuLibraryKind::kLapack64),
            (std::vector<std::string>{lib("lapack64/liblapack64.so.3") + " | a well-known path"}));
  EXPECT_EQ(order(CpuLibraryKind::kBlas).size(), 2u);
  // Loaded so that their calls to each other stay inside them (not bound to our LP64 names).
  for (const auto& c : cpu_library_candidates(CpuLibraryKind::kBlas64, {root_, kArch, ""})) EXPECT_TRUE(c.deep_bind);
  for (const auto& c : cpu_library_candidates(CpuLibraryKind::kBlas, {root_, kArch, ""})) EXPECT_FALSE(c.deep_bind);
}

// blasoffload installed as the alternative through shims (BO_TEST_SHIM: no symbols, DT_NEEDED libblasoffload.so.0),
// the alternative's choice and its best: passed over for the best other choice, OpenBLAS before reference, though
// the shim is not our file.
TEST_F(FakeRoot, PassesOverShims) {
  for (const std::string soname : {"libblas64.so.3", "libblas.so.3"}) {
    const std::string dir = soname == "libblas.so.3" ? "" : "64";
    link(lib("blasoffload/" + soname), BO_TEST_SHIM);
    link(lib(soname), root_ + lib("blasoffload/" + soname));
    file(lib("blas" + dir + "/" + soname));
    file(lib("openblas" + dir + "-pthread/" + soname));
    record(soname, "auto\n" + lib(soname) + "\n\n" + lib("blasoffload/" + soname) + "\n500\n" +
                       lib("blas" + dir + "/" + soname) + "\n10\n" + lib("openblas" + dir + "-pthread/" + soname) +
                       "\n5\n\n");
    EXPECT_EQ(order(soname == "libblas.so.3" ? CpuLibraryKind::kBlas : CpuLibraryKind::kBlas64, ""),
              (std::vector<std::string>{
                  lib("openblas" + dir + "-pthread/" + soname) + " | a " + soname + " alternative, priority 5",
                  lib("blas" + dir + "/" + soname) + " | a " + soname + " alternative, priority 10"}))
        << soname;
  }
}

TEST(IsBlasoffloadLibrary, ByItsSonameOrWhatItNeeds) {
  EXPECT_TRUE(is_blasoffload_library(BO_TEST_SHIM));           // needs libblasoffload.so.0
  EXPECT_TRUE(is_blasoffload_library(BO_TEST_SELF));           // is libblasoffload.so.0
  EXPECT_FALSE(is_blasoffload_library(BO_TEST_REF_BLAS64));    // needs libgfortran, libc
  EXPECT_FALSE(is_blasoffload_library("/nonexistent.so"));     // no file
  EXPECT_FALSE(is_blasoffload_library("/proc/self/cmdline"));  // not ELF
}

// A candidate whose symbol lands in blasoffload (the shim's dgemm_ is libblasoffload.so's) is passed over, by the
// symbol's library even where `is_ours` does not claim the address (another build of us), and by `is_ours` alone.
TEST(LoadCpuLibrary, PassesOverCandidatesResolvingToBlasoffload) {
  const std::vector<CpuLibraryCandidate> candidates = {{BO_TEST_SHIM, "the shim", false},
                                                       {BO_TEST_REF_BLAS64, "reference", true}};
  LoadedCpuLibrary l = load_cpu_library(candidates, "dgemm_", [](const void*) { return false; });
  ASSERT_NE(l.handle, nullptr);
  EXPECT_EQ(l.path, BO_TEST_REF_BLAS64);
  ASSERT_EQ(l.passed_over.size(), 1u);
  EXPECT_EQ(l.passed_over[0], std::string(BO_TEST_SHIM) + ": its dgemm_ is blasoffload's");
  // The reference library itself, were its address claimed as ours: nothing is kept.
  l = load_cpu_library({candidates[1]}, "dgemm_", [](const void*) { return true; });
  EXPECT_EQ(l.handle, nullptr);
  EXPECT_EQ(l.passed_over.size(), 1u);
}
#endif

}  // namespace
}  // namespace blasoffload
