// The policy's own decisions in whole processes: frozen (the calibration alone, call by call) and adaptive (the
// start-up amortised and run in the background, then corrected by measurements).
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <regex>
#include <string>
#include <vector>

#include "policy_process_fixture.h"

namespace bo_policy_process {
namespace {

// ---- a. auto + frozen: the calibration alone decides, call by call ------------------------------------------

TEST_F(PolicyProcess, FrozenSmallCallsStayOnCpuLargeGoToGpu) {
  const PolicyFile p = Good();
  const Outcome r = RunProbe(PolicyEnv(p, "frozen"), kMixedScript);
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", kTiny, 7},
                  {"gpu", kModel, 5},
                  {"gpu", kModel, 3},
                  {"gpu", kModel, 2},
                  {"gpu", kModel, 3},
                  {"cpu", kTiny, 2}});
  // Frozen decisions are the calibration's own numbers: the CPU side is work / the file's rate, uncorrected.
  double cpu_ms = 0, gpu_ms = 0;
  ASSERT_GE(r.calls.size(), 8u);
  ASSERT_TRUE(ModelNumbers(r.calls[7].reason, &cpu_ms, &gpu_ms)) << r.calls[7].text;
  EXPECT_NEAR(cpu_ms, p.SgemmCpuMs(384, 384, 384), 0.02 * p.SgemmCpuMs(384, 384, 384)) << r.calls[7].text;
  EXPECT_LT(gpu_ms, cpu_ms / 20) << r.calls[7].text;
  EXPECT_EQ(Count(r, "sgemm"), 5) << r.Dump();
  EXPECT_EQ(Count(r, "sgemv"), 3) << r.Dump();
  EXPECT_EQ(Count(r, "strsv"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "snrm2"), 3) << r.Dump();
  // Frozen: initialised synchronously, once, and shut down at exit.
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("shutdown"), 1) << r.Dump();
  const std::vector<long> row = r.SummaryRow("sgemm");
  ASSERT_EQ(row.size(), 5u) << r.log;
  EXPECT_EQ(row[1], 5);  // cpu
  EXPECT_EQ(row[2], 5);  // gpu
  EXPECT_NE(r.log.find("GPU: blasoffload FAKE CUDA module"), std::string::npos) << r.log;
}

// The same program decides the same way every run in frozen mode.
TEST_F(PolicyProcess, FrozenDecisionsRepeatRunToRun) {
  const PolicyFile p = Good();
  const Outcome a = RunProbe(PolicyEnv(p, "frozen"), kMixedScript), b = RunProbe(PolicyEnv(p, "frozen"), kMixedScript);
  ExpectProbePassed(a);
  ExpectProbePassed(b);
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (std::size_t i = 0; i < a.calls.size(); ++i)
    EXPECT_EQ(a.calls[i].where + " " + a.calls[i].reason, b.calls[i].where + " " + b.calls[i].reason) << i;
}

// strsm and ssyrk under a file written before they had shape classes (PolicyFile writes only the older ones): their
// CPU curves come from the file's sgemm curves (strsm at half the panel rate, ssyrk at the square rate), the summary
// says so, tiny calls stay on the CPU and large ones go to the GPU; quick returns (alpha = 0, k = 0) never reach it.
TEST_F(PolicyProcess, FrozenStrsmAndSsyrkWithCurvesDerivedFromAnOlderFile) {
  const PolicyFile p = Good();
  const Outcome r = RunProbe(
      PolicyEnv(p, "frozen"),
      Script(
          "strsm LLNN 8 8  ssyrk UN 8 8  strsm LLNN 384 384  strsm RUTU 300 200 pad=3 cblas  ssyrk LT 384 384 beta=0 "
          "ssyrk UN 300 250 cblas  strsm LUNN 384 384 alpha=0  ssyrk UN 384 384 alpha=0 beta=0.5  ssyrk LN 200 0 "
          "beta=2"));
  ExpectProbePassed(r);
  ExpectCalls(r, {{"cpu", kTiny, 2}, {"gpu", kModel, 4}});
  ASSERT_EQ(r.calls.size(), 6u) << r.Dump();
  EXPECT_EQ(r.calls[2].args, "LLNN m=384 n=384") << r.calls[2].text;
  EXPECT_EQ(r.calls[4].args, "LT n=384 k=384") << r.calls[4].text;
  double cpu_ms = 0, gpu_ms = 0;
  const double flops = 384.0 * 384 * 384;
  ASSERT_TRUE(ModelNumbers(r.calls[2].reason, &cpu_ms, &gpu_ms)) << r.calls[2].text;
  EXPECT_NEAR(cpu_ms, flops / (0.5 * p.cpu_gflops * 1e9) * 1e3, 0.02 * cpu_ms) << r.calls[2].text;
  ASSERT_TRUE(ModelNumbers(r.calls[4].reason, &cpu_ms, &gpu_ms)) << r.calls[4].text;
  EXPECT_NEAR(cpu_ms, flops / (p.cpu_gflops * 1e9) * 1e3, 0.02 * cpu_ms) << r.calls[4].text;
  EXPECT_EQ(Count(r, "strsm"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "ssyrk"), 2) << r.Dump();
  EXPECT_EQ(Count(r, "sgemm"), 0) << r.Dump();
  // calls cpu gpu fallback errors: the quick returns count as calls, on neither side.
  EXPECT_EQ(r.SummaryRow("strsm"), (std::vector<long>{4, 1, 2, 0, 0})) << r.log;
  EXPECT_EQ(r.SummaryRow("ssyrk"), (std::vector<long>{5, 1, 2, 0, 0})) << r.log;
  EXPECT_NE(r.log.find("strsm, strsm.narrow, ssyrk, dgemm.square"), std::string::npos) << r.log;
  EXPECT_EQ(r.log.find("warning"), std::string::npos) << "an older file is no reason for a warning\n" << r.Dump();
}

// ---- b. auto + adaptive: the one-time start-up is amortised, then runs in the background ---------------------

TEST_F(PolicyProcess, AdaptiveAmortisesInitThenInitialisesInBackgroundThenUsesGpu) {
  PolicyFile p = Good();
  // Twice init_ms is reached within the block wherever a call's measured gain is 0.5 ms or more: the reference BLAS
  // took 3-7 ms a call on earlier machines, 1.9 ms on a 2026-11-29 CI machine (where an init_ms of 50 was out of the 40
  // calls' reach).
  p.init_ms = 15;
  Env env = PolicyEnv(p, "adaptive");
  env["FAKE_CUDA_INIT_MS"] = "1500";  // far longer than the calls before the pause take on the CPU (60 x 7 ms at most)
  constexpr std::size_t kBlock = 60, kAfterPause = 2 + kBlock;
  const Outcome r = RunProbe(env, Script("sgemm NN 8 8 8 x2  sgemm NN 192 192 192 x" + std::to_string(kBlock) +
                                         "  sleep 2500  sgemm NN 192 192 192 x3  sgemv N 2000 2000 x2"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), kAfterPause + 5) << r.Dump();
  EXPECT_EQ(r.calls[0].where, "cpu");
  EXPECT_EQ(r.calls[1].where, "cpu");

  // The GPU-worthy calls before the pause: amortising..., then GPU initialising..., all on the CPU.
  std::size_t i = 2;
  double last_gain = -1;
  int amortising = 0;
  for (std::smatch m; i < kAfterPause && std::regex_match(r.calls[i].reason, m, kAmortising); ++i, ++amortising) {
    // The gain printed is the sum after the call: each call's measured time less its GPU prediction added to it.
    const double gain = std::stod(m[1]), of = std::stod(m[2]), cpu = std::stod(m[3]), gpu = std::stod(m[4]);
    std::smatch t;
    ASSERT_TRUE(std::regex_search(r.calls[i].text, t, std::regex(R"(took ([0-9.]+) ms)"))) << r.calls[i].text;
    const double took = std::stod(t[1]);
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
    EXPECT_NEAR(of, 2 * p.init_ms, 0.5) << "the gain to reach is twice the calibrated init_ms: " << r.calls[i].text;
    // Below the goal when the call was decided (to 0.1 ms: a gain of 99.96 of 100 reads 100.0).
    if (last_gain >= 0) EXPECT_LT(last_gain, of + 0.05) << r.calls[i].text;
    EXPECT_GT(cpu, 20 * gpu) << r.calls[i].text;
    // The measured saving, not the predicted one (the file's CPU is slower than this machine's).
    EXPECT_NEAR(gain - std::max(last_gain, 0.0), took - gpu, 0.15) << r.calls[i].text;
    last_gain = gain;
  }
  EXPECT_GE(amortising, 1) << "no call was amortising the start-up\n" << r.Dump();
  const std::size_t first_initialising = i;
  for (; i < kAfterPause && std::regex_search(r.calls[i].reason, std::regex(kInitialising)); ++i)
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
  EXPECT_GE(i - first_initialising, 1u) << "no call ran while the GPU was initialising\n" << r.Dump();
  // Should the start-up finish before the pause, the first call after it is the GPU's, and the rest follow the model
  // as it learns (the fake GPU's CPU loops may be slower than the CPU BLAS: then the CPU wins the bucket back).
  const std::size_t first_up = i;
  for (; i < r.calls.size(); ++i) {
    if (i == first_up) EXPECT_EQ(r.calls[i].where, "gpu") << "the first call after the start-up: " << r.calls[i].text;
    EXPECT_TRUE(std::regex_search(r.calls[i].reason, std::regex(kModelAny))) << r.calls[i].text;
  }
  // Another class, never measured: the model alone, GPU-worthy by a factor of about 40.
  EXPECT_EQ(r.calls[kAfterPause + 3].where, "gpu") << r.calls[kAfterPause + 3].text;
  EXPECT_GE(Count(r, "sgemm"), 1) << r.Dump();
  EXPECT_GE(Count(r, "sgemv"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
}

// While work of ours runs beside the program (the GPU start-up; the module's own thread, as the real one unpins freed
// memory), OpenBLAS (pthreads) whose threads fill the CPUs runs one thread less, lent at the call that starts the work
// and given back at the first call, even a tiny one, after it ended: with BLASOFFLOAD_LEND_CORE=on from 2 threads, by
// default (auto) from 8; never with off, with frozen decisions, nor with a CPU BLAS that is not OpenBLAS.
TEST_F(PolicyProcess, OpenblasLendsAThreadWhileOurWorkRunsBesideIt) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int cpus = CPU_COUNT(&set);
  if (cpus < 2) GTEST_SKIP() << "one CPU: OpenBLAS has no thread to lend";
  const char* kOpenblasDir = "/usr/lib/x86_64-linux-gnu/openblas-pthread";
  ASSERT_EQ(access((std::string(kOpenblasDir) + "/libblas.so.3").c_str(), R_OK), 0) << "libopenblas0-pthread";
  Env openblas = BaseEnv();
  openblas["LD_LIBRARY_PATH"] = kOpenblasDir;
  openblas["OPENBLAS_NUM_THREADS"] = std::to_string(cpus);
  PolicyFile file = Good();
  file.cpu = CpuUnder(openblas);  // the policy file is OpenBLAS's: its sgemm n = 192 is the GPU's
  if (file.cpu.report.find(", " + std::to_string(cpus) + " threads)") == std::string::npos)
    GTEST_SKIP() << "OpenBLAS does not run " << cpus << " threads here (its build's maximum?): " << file.cpu.report;
  Env env = PolicyEnv(file, "adaptive", "debug");
  env["LD_LIBRARY_PATH"] = kOpenblasDir;
  env["OPENBLAS_NUM_THREADS"] = std::to_string(cpus);
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["BLASOFFLOAD_LEND_CORE"] = "on";
  env["FAKE_CUDA_INIT_MS"] = "300";
  // The start-up (0.3 s), then the module's thread (1.5 s) from the start-up's end; tiny calls between and after.
  env["FAKE_CUDA_BUSY_MS"] = "1500";
  const std::vector<std::string> script =
      Script("sgemm NN 192 192 192 sleep 900 snrm2 4 sleep 2200 snrm2 4 sgemm NN 192 192 192");
  const std::string p = std::to_string(cpus), q = std::to_string(cpus - 1);

  const Outcome lent = RunProbe(env, script);
  ExpectProbePassed(lent);
  ASSERT_EQ(lent.calls.size(), 4u) << lent.Dump();
  ASSERT_EQ(lent.TraceCount("busy-end"), 1) << lent.Dump();
  const std::string lend =
      "runs " + q + " of its " + p + " threads while work of ours runs beside it (it reports " + q + ")";
  const auto at = [&](const std::string& text) { return lent.log.find(text); };
  ASSERT_NE(at(lend), std::string::npos) << lent.Dump();
  EXPECT_EQ(lent.log.find(lend, at(lend) + 1), std::string::npos) << "lent once: the wants overlapped\n" << lent.Dump();
  EXPECT_LT(at(lend), at("sgemm(")) << "the call that started the start-up runs with the thread lent\n" << lent.Dump();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      lent.log, m,
      std::regex("runs its " + p + " threads again after ([0-9]+) ms with " + q + " \\(it reports " + p + "\\)")))
      << lent.Dump();
  // Given back at the tiny call after the module's thread ended (1.8 s or more after the first call), not at the one
  // while it ran.
  EXPECT_GE(std::stod(m[1]), 1800) << lent.Dump();
  const std::size_t back = at("threads again after"), first_nrm2 = at("snrm2("),
                    second_nrm2 = lent.log.find("snrm2(", first_nrm2 + 1);
  EXPECT_GT(back, first_nrm2) << lent.Dump();
  EXPECT_LT(back, second_nrm2) << lent.Dump();
  EXPECT_NE(at("OpenBLAS ran " + q + " of its " + p + " threads 1 time while work of ours ran beside it"),
            std::string::npos)
      << lent.Dump();

  env.erase("BLASOFFLOAD_LEND_CORE");
  const Outcome automatic = RunProbe(env, script);
  ExpectProbePassed(automatic);
  EXPECT_EQ(automatic.log.find("while work of ours runs") != std::string::npos, cpus >= 8) << automatic.Dump();

  env["BLASOFFLOAD_LEND_CORE"] = "off";
  const Outcome off = RunProbe(env, script);
  ExpectProbePassed(off);
  EXPECT_EQ(off.log.find("while work of ours runs"), std::string::npos) << off.Dump();
  EXPECT_EQ(off.TraceCount("busy-end"), 1) << "the work itself runs as before\n" << off.Dump();

  Env frozen = PolicyEnv(file, "frozen", "debug");  // the same bits every run: nothing lent
  for (const char* k :
       {"LD_LIBRARY_PATH", "OPENBLAS_NUM_THREADS", "BLASOFFLOAD_STARTUP", "FAKE_CUDA_INIT_MS", "FAKE_CUDA_BUSY_MS"})
    frozen[k] = env[k];
  frozen["BLASOFFLOAD_LEND_CORE"] = "on";
  const Outcome same_bits = RunProbe(frozen, script);
  ExpectProbePassed(same_bits);
  EXPECT_EQ(same_bits.TraceCount("busy-end"), 1) << same_bits.Dump();
  EXPECT_EQ(same_bits.log.find("while work of ours runs"), std::string::npos) << same_bits.Dump();

  Env ref = PolicyEnv(Good(), "adaptive", "debug");  // the reference BLAS's file
  for (const char* k : {"BLASOFFLOAD_STARTUP", "FAKE_CUDA_INIT_MS", "FAKE_CUDA_BUSY_MS"}) ref[k] = env[k];
  ref["BLASOFFLOAD_LEND_CORE"] = "on";
  const Outcome reference = RunProbe(ref, script);
  ExpectProbePassed(reference);
  EXPECT_EQ(reference.TraceCount("busy-end"), 1) << reference.Dump();
  EXPECT_EQ(reference.log.find("while work of ours runs"), std::string::npos) << reference.Dump();
}

// The program ends while the background start-up is still running: it must still exit 0, print its summary, and
// never call the module's shutdown() during init().
TEST_F(PolicyProcess, AdaptiveExitWhileInitialisingIsClean) {
  PolicyFile p = Good();
  // The GPU-worthy calls' measured gains cover twice this by the third of them wherever each gains 1 ms or more (3-7 ms
  // on earlier machines, 1.8-2.0 ms on a 2026-11-29 CI machine, where the first alone fell short of 2 ms); none is long
  // enough to wait for the start-up (policy.cpp kWaitForStartFraction), so the second or the third starts it, and the
  // third runs on the CPU while it is under way. An init_ms below 1 is not a valid file's.
  p.init_ms = 1;
  Env env = PolicyEnv(p, "adaptive", "calls");
  env["FAKE_CUDA_INIT_MS"] = "300";
  const Outcome r = RunProbe(env, Script("sgemm NN 8 8 8 x2 sgemm NN 192 192 192 x3"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), 5u) << r.Dump();
  // The start-up was under way at the last call, and so when main() returned.
  EXPECT_TRUE(std::regex_search(r.calls[4].reason, std::regex(kInitialising))) << r.calls[4].text;
  EXPECT_EQ(r.calls[4].where, "cpu");
  EXPECT_EQ(r.TraceCount("init-begin"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("violation"), 0) << r.Dump();
  EXPECT_EQ(Count(r, "sgemm"), 0) << r.Dump();
  EXPECT_NE(r.log.find("blasoffload summary (pid"), std::string::npos) << r.Dump();
}

// The program ends while the GPU starts in the background. The fake module, like the CUDA runtime, registers an exit
// handler of its own when its init() begins, which runs before the core's atexit handler: exit from the main thread
// must wait for the start-up before any exit handler (the runtime's teardown under a running init() crashed processes
// on the GPU), and then shut the module down in order. Up to BLASOFFLOAD_EXIT_WAIT_MS only: past it, the process ends
// without the start-up (and the fake reports the teardown it then meets).
TEST_F(PolicyProcess, ExitFromTheMainThreadWaitsForTheStartUpBeforeAnyExitHandler) {
  PolicyFile p = Good();
  Env env = PolicyEnv(p, "adaptive");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_INIT_MS"] = "1500";
  // The pause lets init() begin before the exit (an exit during the module's loading starts no CUDA: below).
  const std::vector<std::string> script = Script("sgemm NN 192 192 192 sleep 100");
  const Outcome r = RunProbe(env, script);
  ExpectProbePassed(r);
  EXPECT_EQ(r.TraceCount("violation"), 0) << r.Dump();
  ASSERT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
  ASSERT_EQ(r.TraceCount("runtime-exit"), 1) << r.Dump();
  const auto at = [&](const std::string& event) {
    return std::find_if(r.trace.begin(), r.trace.end(), [&](const std::string& t) { return t.rfind(event, 0) == 0; }) -
           r.trace.begin();
  };
  EXPECT_LT(at("init-end ok"), at("runtime-exit")) << r.Dump();
  EXPECT_EQ(r.TraceCount("shutdown"), 1) << r.Dump();
  EXPECT_EQ(r.log.find("ending without it"), std::string::npos) << r.Dump();

  env["FAKE_CUDA_INIT_MS"] = "6000";
  env["BLASOFFLOAD_EXIT_WAIT_MS"] = "300";
  const Outcome bounded = RunProbe(env, script);
  EXPECT_TRUE(bounded.ExitedCleanly()) << bounded.Dump();
  EXPECT_LT(bounded.seconds, 3.0) << "exit waited past BLASOFFLOAD_EXIT_WAIT_MS\n" << bounded.Dump();
  EXPECT_EQ(bounded.TraceCount("init-end ok"), 0) << bounded.Dump();
  EXPECT_EQ(bounded.TraceCount("shutdown"), 0) << "shut down under a running init()\n" << bounded.Dump();
  EXPECT_NE(bounded.log.find("did not finish within 300 ms; ending without it"), std::string::npos) << bounded.Dump();
  EXPECT_NE(bounded.log.find("GPU: still starting (in the background)"), std::string::npos) << bounded.Dump();
}

// A start-up still under way when the program exits does only what the GPU needs to exist: the exit waits for it, and
// no call will use it. The fake's init() opens "cuBLAS" for 3 s after its 1 s "context" unless told the program is
// exiting (the context is long enough that the exit, 100 ms after the call, comes during it even on a busy machine);
// eager start-up at the only call, which runs on the CPU meanwhile. Before, exit waited the whole 4 s and measured the
// link.
TEST_F(PolicyProcess, ExitCutsAStartUpShortToWhatTheGpuNeedsToExist) {
  PolicyFile p = Good();
  p.has_gpu = false;  // no calibration of this GPU: a start-up that completes measures the link
  Env env = PolicyEnv(p, "adaptive", "debug");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_INIT_MS"] = "1000";
  env["FAKE_CUDA_CUBLAS_MS"] = "3000";
  const Outcome r = RunProbe(env, Script("sgemm NN 192 192 192 sleep 100"));  // exit during the "context"
  ExpectProbePassed(r);
  EXPECT_EQ(r.TraceCount("violation"), 0) << r.Dump();
  ASSERT_EQ(r.TraceCount("init-end ok"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("cublas-left"), 1) << r.Dump();
  EXPECT_EQ(r.TraceCount("cublas-open"), 0) << r.Dump();
  EXPECT_EQ(r.TraceCount("measure-link"), 0) << "the link measured for a process that is ending\n" << r.Dump();
  EXPECT_EQ(r.TraceCount("shutdown"), 1) << r.Dump();
  EXPECT_LT(r.seconds, 3.0) << "exit waited for the whole start-up\n" << r.Dump();
  EXPECT_NE(r.log.find("cuSOLVER and the link's measurement left out"), std::string::npos) << r.Dump();

  // An exit while the module's libraries load: CUDA is not started at all, and nothing is shut down.
  Env loading = env;
  loading["FAKE_CUDA_LOAD_MS"] = "3000";
  const Outcome early = RunProbe(loading, Script("sgemm NN 192 192 192"));
  ExpectProbePassed(early);
  EXPECT_EQ(early.TraceCount("violation"), 0) << early.Dump();
  EXPECT_EQ(early.TraceCount("init-begin"), 0) << early.Dump();
  EXPECT_EQ(early.TraceCount("shutdown"), 0) << early.Dump();
  EXPECT_NE(early.log.find("the program began to exit during the GPU start-up"), std::string::npos) << early.Dump();

  // A program that goes on after the start-up gets all of it.
  const Outcome on = RunProbe(env, Script("sgemm NN 192 192 192 sleep 5000 sgemm NN 192 192 192"));
  ExpectProbePassed(on);
  EXPECT_EQ(on.TraceCount("cublas-open"), 1) << on.Dump();
  EXPECT_EQ(on.TraceCount("cublas-left"), 0) << on.Dump();
  EXPECT_EQ(on.TraceCount("measure-link"), 1) << on.Dump();
}

// A GPU far slower than predicted (every fake call takes 200 ms more; the model expects well under a millisecond):
// the measurements move the bucket to the CPU within a few calls (the first GPU call of a class and bucket is not
// learned from: one-time costs), and the bounded exploration spends at most a small share of the run trying the GPU
// again.
TEST_F(PolicyProcess, AdaptiveLeavesAGpuFarSlowerThanPredicted) {
  Env env = PolicyEnv(Good(), "adaptive", "calls");
  env["FAKE_CUDA_CALL_MS"] = "200";
  constexpr int kCalls = 40;
  const Outcome r = RunEagerSgemms(env, kCalls);
  ASSERT_EQ(r.calls.size(), std::size_t(kCalls));
  const long gpu = Count(r, "sgemm");
  EXPECT_GE(gpu, 2) << "the GPU was never tried (eager start, a model that prefers it)\n" << r.Dump();
  EXPECT_LE(gpu, 5) << "too many calls on a GPU measured 200 ms a call\n" << r.Dump();
  // After the GPU's last call, the CPU by the model (or the exploration's rare GPU try): never the GPU again for the
  // model's sake.
  std::size_t last_gpu = 0;
  for (std::size_t i = 0; i < r.calls.size(); ++i)
    if (r.calls[i].where == "gpu") last_gpu = i;
  EXPECT_LT(last_gpu, 10u) << r.Dump();
  for (std::size_t i = last_gpu + 1; i < r.calls.size(); ++i) {
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
    double cpu = 0, g = 0;
    ASSERT_TRUE(ModelNumbers(r.calls[i].reason, &cpu, &g)) << r.calls[i].text;
    EXPECT_GT(g, cpu) << "the GPU's corrected prediction should exceed the CPU's: " << r.calls[i].text;
  }
  EXPECT_TRUE(std::regex_search(r.log, std::regex("adaptive: [0-9]+ CPU and [0-9]+ GPU calls learned from")))
      << r.Dump();
}

// The same slow calls, but the module reports the extra time as one-time costs (what the real module does for a call
// that grew its buffers or loaded a kernel): learning leaves it out, so the GPU keeps its calls, and the log says how
// much of each call was one-time. Without the subtraction this is the test above: the GPU loses them within a few.
TEST_F(PolicyProcess, AdaptiveLeavesOutTheModulesOneTimeCosts) {
  Env env = PolicyEnv(Good(), "adaptive", "calls");
  env["FAKE_CUDA_ONE_TIME_MS"] = "40";
  constexpr int kCalls = 20;
  const Outcome r = RunEagerSgemms(env, kCalls);
  ASSERT_EQ(r.calls.size(), std::size_t(kCalls));
  // The first call starts the GPU and runs on the CPU; the exploration may try the CPU once or twice more.
  EXPECT_GE(Count(r, "sgemm"), kCalls - 4) << "calls taught by one-time costs to leave the GPU\n" << r.Dump();
  int reported = 0;
  for (const CallLine& c : r.calls) {
    if (c.where != "gpu") continue;
    EXPECT_NE(c.text.find(" ms of it one-time)"), std::string::npos) << c.text;
    reported += std::regex_search(c.text, std::regex(R"(\((4[0-9]|5[0-9])\.[0-9]{3} ms of it one-time\))"));
    // The GPU side's prediction, whole or shared with the CPU (the fake's loops make the GPU slower than predicted).
    std::smatch m;
    ASSERT_TRUE(std::regex_search(c.reason, m, std::regex(R"(model: cpu ([0-9.]+) ms, (gpu|hybrid) ([0-9.]+) ms)")))
        << c.text;
    EXPECT_LT(std::stod(m[3]), std::stod(m[1])) << "the GPU's corrected prediction rose above the CPU's: " << c.text;
  }
  EXPECT_GE(reported, kCalls - 4) << "the one-time part (40 ms a call) not in the call log\n" << r.Dump();
}

// A GPU call that would first grow the module's staging buffers (the fake: 100 ms for a call larger than any before)
// waits until its bucket's predicted gains cover that (frozen decisions: 28.2 ms a call): three calls on the CPU, the
// fourth on the GPU paying the growth, the rest on the GPU. Adaptive, with a growth the run's calls could never repay
// (5 s; learning brings the CPU's prediction down to what the reference BLAS takes, about 3 ms): never paid.
TEST_F(PolicyProcess, AGrowthOfTheStagingBuffersWaitsUntilTheGainsCoverIt) {
  constexpr int kCalls = 12;
  Env env = PolicyEnv(Good(), "frozen", "calls");
  env["FAKE_CUDA_GROWTH_MS"] = "100";
  const Outcome r = RunEagerSgemms(env, kCalls);
  ASSERT_EQ(r.calls.size(), std::size_t(kCalls));
  std::size_t first = 0;
  while (first < r.calls.size() && r.calls[first].reason.find("amortising staging buffers") == std::string::npos)
    ++first;
  ASSERT_LT(first + 4, r.calls.size()) << "no call waited for the growth\n" << r.Dump();
  for (std::size_t i = 0; i < first; ++i) EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
  for (std::size_t i = first; i < first + 3; ++i) {
    EXPECT_EQ(r.calls[i].where, "cpu") << r.calls[i].text;
    EXPECT_NE(r.calls[i].reason.find("amortising staging buffers"), std::string::npos) << r.calls[i].text;
  }
  EXPECT_EQ(r.calls[first + 3].where, "gpu") << "the gains (4 x 28 ms) cover the growth (100 ms)\n" << r.Dump();
  EXPECT_NE(r.calls[first + 3].text.find("ms of it one-time)"), std::string::npos) << r.calls[first + 3].text;
  for (std::size_t i = first + 4; i < r.calls.size(); ++i) EXPECT_EQ(r.calls[i].where, "gpu") << r.calls[i].text;
  EXPECT_NE(r.log.find("staging buffers: 3 GPU-worthy calls run on the CPU"), std::string::npos) << r.Dump();
  EXPECT_NE(r.log.find("; 1 growths paid"), std::string::npos) << r.Dump();

  env = PolicyEnv(Good(), "adaptive", "calls");
  env["FAKE_CUDA_GROWTH_MS"] = "5000";
  const Outcome never = RunEagerSgemms(env, kCalls);
  EXPECT_EQ(Count(never, "sgemm"), 0) << "a 5 s growth paid by calls that gain a few ms each\n" << never.Dump();
  for (std::size_t i = 1; i < never.calls.size(); ++i)
    EXPECT_NE(never.calls[i].reason.find("amortising staging buffers"), std::string::npos) << never.calls[i].text;
}

// Calls above the floor that the model gives the CPU by far (sgemm n = 16: about 16 us on this file's slow CPU
// against at least the 50 us GPU call): calls alike are then taken to the CPU without the model, one in 32 decided in
// full; each is logged with the numbers it was remembered with, and the summary counts them.
TEST_F(PolicyProcess, CallsTheModelGaveTheCpuByFarSkipTheModel) {
  Env env = PolicyEnv(Good(), "adaptive", "calls");
  const Outcome r = RunProbe(env, Script("sgemm NN 16 16 16 x40"));
  ExpectProbePassed(r);
  ASSERT_EQ(r.calls.size(), 40u) << r.Dump();
  for (const CallLine& c : r.calls) {
    EXPECT_EQ(c.where, "cpu") << c.text;
    double cpu = 0, gpu = 0;
    ASSERT_TRUE(ModelNumbers(c.reason, &cpu, &gpu)) << "not decided by the model (above the floor?): " << c.text;
    EXPECT_GE(gpu, 2 * cpu) << c.text;
  }
  // 40 calls: the 1st and the 33rd decided in full, the other 38 from memory.
  EXPECT_NE(r.log.find("  38 calls taken to the CPU without the model"), std::string::npos) << r.Dump();
  EXPECT_EQ(r.TraceCount("load"), 0) << "no call was worth starting the GPU for\n" << r.Dump();
}

// Not where a device copy of an operand may come to pay: a 1100 x 1100 sgemv (4.8 MB) the model gives the CPU by far
// is decided in full every time (the module counts the uses of a residency candidate only in the model's queries),
// a 400 x 400 one (640 KB) from memory.
TEST_F(PolicyProcess, CallsWithAMatrixADeviceCopyCouldServeAreAlwaysModelled) {
  PolicyFile p = Good();
  p.cpu_gbs = 30;  // sgemv 400^2 about 21 us, 1100^2 about 160 us on the CPU
  p.link_gbs = 5;  // the GPU at least 50 us plus the matrix at 5 GB/s: over twice the CPU's time at both sizes
  Env env = PolicyEnv(p, "adaptive", "summary");
  const Outcome r = RunProbe(env, Script("sgemv N 400 400 x40  sgemv N 1100 1100 x40"));
  ExpectProbePassed(r);
  EXPECT_NE(r.log.find("  38 calls taken to the CPU without the model"), std::string::npos) << r.Dump();
  const std::vector<long> row = r.SummaryRow("sgemv");
  ASSERT_EQ(row.size(), 5u) << r.Dump();
  EXPECT_EQ(row[0], 80) << r.Dump();
  EXPECT_EQ(row[1], 80) << "every call on the CPU\n" << r.Dump();
}

// A clean residency candidate (the fake module: its copy made at 0.5 ns a byte) is credited what the model moves for
// it and charged its copy's making shared over its reuses, or staged (the module told so, once per call) while that
// share costs more than staging it: after one reuse, half of 2.4 ms of copy-making against 0.19 ms (sgemv's matrix,
// Good()'s link: 25 GB/s staged) or 0.1 ms (the triangle); after a thousand the copy is almost free. A triangle's
// credit is its elements, half a square's.
TEST_F(PolicyProcess, ACopyIsMadeOnceItsShareOfTheMakingCostsLessThanStagingTheMatrix) {
  struct Run {
    double gemv = 0, trsv = 0;
    std::string gemv_why, trsv_why;
    long staged = 0;
  };
  auto run = [&](const std::string& reuses) {
    Run out;
    Env env = PolicyEnv(Good(), "frozen");
    if (!reuses.empty()) env["FAKE_CUDA_RESIDENT"] = reuses;
    const Outcome r = RunProbe(env, Script("sgemv N 1100 1100  strsv LNN 1100"));
    ExpectProbePassed(r);
    EXPECT_EQ(r.calls.size(), 2u) << r.Dump();
    if (r.calls.size() != 2u) return out;
    for (const CallLine& c : r.calls) EXPECT_EQ(c.where, "gpu") << c.text;
    double cpu = 0;
    EXPECT_TRUE(ModelNumbers(r.calls[0].reason, &cpu, &out.gemv)) << r.calls[0].text;
    EXPECT_TRUE(ModelNumbers(r.calls[1].reason, &cpu, &out.trsv)) << r.calls[1].text;
    out.gemv_why = r.calls[0].reason;
    out.trsv_why = r.calls[1].reason;
    out.staged = r.TraceCount("stage-candidates");
    return out;
  };
  const Run none = run(""), one = run("1"), many = run("1000");
  EXPECT_EQ(none.staged, 0);
  // One reuse: staged, predicted as without a candidate, and said so.
  EXPECT_NEAR(one.gemv, none.gemv, 0.002) << one.gemv_why;
  EXPECT_NEAR(one.trsv, none.trsv, 0.002) << one.trsv_why;
  EXPECT_EQ(one.staged, 2) << "the module was not told to stage both calls";
  for (const std::string& why : {one.gemv_why, one.trsv_why})
    EXPECT_EQ(why.rfind("staged: a device copy has not paid yet; model:", 0), 0u) << why;
  // A thousand: copies made; the matrix's transfer is spared, the triangle's half of it (less 2.4 us of copy-making
  // each), and the rest of the making (2.4 ms less that share) is said.
  EXPECT_EQ(many.staged, 0);
  for (const std::string& why : {many.gemv_why, many.trsv_why})
    EXPECT_EQ(why.rfind("makes a device copy (2.418 ms more than its share); model:", 0), 0u) << why;
  const double gemv_drop = none.gemv - many.gemv, trsv_drop = none.trsv - many.trsv;
  EXPECT_GT(gemv_drop, 0.15);
  EXPECT_NEAR(trsv_drop, 0.5 * gemv_drop - 0.0012, 0.004) << "the triangle was credited more or less than it moves";
}

// The residency's questions cost a CPU-routed call milliseconds at a matrix's first uses (reading /proc, protecting
// sample pages): the module is asked only where even a device copy that exists already would let the GPU win, by more
// than the questions cost (50 us a call). A CPU fast enough to beat the GPU's call overhead on a 1100 x 1100 sgemv
// (4.8 MB at 1000 GB/s): never asked; one that loses to a copy by less than the questions (90 us at 54 GB/s, against
// 55 us on the GPU from a copy): never asked; a slow one: asked every call.
TEST_F(PolicyProcess, TheModuleIsNotAskedAboutMatricesWhereEvenACopyWouldLeaveTheCpuFaster) {
  auto questions = [&](double cpu_gbs, long* gpu_calls) {
    PolicyFile p = Good();
    p.cpu_gbs = cpu_gbs;
    Env env = PolicyEnv(p, "frozen");  // the CPU's prediction stays put
    env["BLASOFFLOAD_STARTUP"] = "eager";
    const Outcome r = RunProbe(env, Script("sgemm NN 192 192 192 sleep 1000 sgemv N 1100 1100 x10"));
    ExpectProbePassed(r);
    EXPECT_EQ(r.TraceCount("init-end ok"), 1) << "the GPU did not come up\n" << r.Dump();
    *gpu_calls = Count(r, "sgemv");
    return Count(r, "host_resident");
  };
  long fast_gpu = -1, slow_gpu = -1;
  EXPECT_EQ(questions(1000, &fast_gpu), 0) << "asked about a matrix no copy could make worth the GPU";
  EXPECT_EQ(fast_gpu, 0);
  EXPECT_EQ(questions(54, &fast_gpu), 0) << "asked where a copy would save less than the questions cost";
  EXPECT_EQ(fast_gpu, 0);
  EXPECT_GE(questions(0.5, &slow_gpu), 10);
  EXPECT_GE(slow_gpu, 9);
}

// A call that makes a copy takes the copy's whole making, where its prediction carries a share: learning expects the
// rest too, or each copy made would teach the class a GPU many times slower. The fake's copies of the 1200 x 1200
// matrix are made at 5 ns a byte (28.8 ms, a thousandth of it shared to the call) and its calls take that much more.
// With the rest expected, the GPU's prediction stays near its first; without, the first call learned from sets it
// about 20x higher.
TEST_F(PolicyProcess, LearningExpectsACopyMakingCallToTakeTheWholeMaking) {
  Env env = PolicyEnv(Good(), "adaptive");
  env["BLASOFFLOAD_STARTUP"] = "eager";
  env["FAKE_CUDA_RESIDENT"] = "1000";
  env["FAKE_CUDA_RESIDENT_NS"] = "5";
  env["FAKE_CUDA_CALL_MS"] = "28.8";
  const Outcome r = RunProbe(env, Script("sgemm NN 192 192 192 sleep 1000 sgemv N 1200 1200 x12"));
  ExpectProbePassed(r);
  std::vector<double> gpu;
  for (const CallLine& c : r.calls) {
    double cpu = 0, g = 0;
    if (c.where == "gpu" && c.routine == "sgemv" && ModelNumbers(c.reason, &cpu, &g)) gpu.push_back(g);
  }
  ASSERT_GE(gpu.size(), 8u) << r.Dump();
  EXPECT_NE(r.calls.back().reason.find("makes a device copy (28.771 ms more than its share)"), std::string::npos)
      << r.Dump();
  EXPECT_LT(gpu.back(), 2.0 * gpu.front()) << "copy-making calls taught the GPU slower than they were\n" << r.Dump();
}

}  // namespace
}  // namespace bo_policy_process
