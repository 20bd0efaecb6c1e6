// The tuning spaces of the kernel families, declared as data: each family's parameters with their candidate
// values, the hardware constraints a point must meet and the pruning rules (seed 000 section 5.1) that
// keep the compiled set small. registry.cu instantiates exactly the points that pass; the tuner prints the
// same enumeration; tests check both. Plain constexpr C++17 (no CUDA), so CPU-only code can include it.
#pragma once
#include <array>
#include <cstddef>
#include <string>

namespace bok::space {

inline constexpr int kMaxValues = 8;

struct Axis {
  const char* name;
  int count;
  int values[kMaxValues];
};

// Why a point is or is not compiled.
enum class Verdict {
  kCompiled,  // passes every constraint and pruning rule: instantiated and tuned
  kInvalid,   // violates a hardware or shape constraint: cannot be built
  kPruned     // buildable but excluded by a heuristic (named by the family's `why`)
};

template <int D>
struct Space {
  const char* family;  // name prefix, e.g. "snrm2_1p"
  std::array<Axis, D> axes;
  constexpr int size() const {
    int s = 1;
    for (const Axis& a : axes) s *= a.count;
    return s;
  }
  // Mixed-radix decode, the last axis fastest.
  constexpr std::array<int, D> point(int index) const {
    std::array<int, D> p{};
    for (int d = D - 1; d >= 0; --d) {
      p[d] = axes[d].values[index % axes[d].count];
      index /= axes[d].count;
    }
    return p;
  }
};

// ---- snrm2, one launch (snrm2.cuh Snrm2OnePass<THREADS, UNROLL, VEC>) ----
inline constexpr Space<3> kSnrm2{"snrm2_1p",
                                 {{{"threads", 4, {128, 256, 512, 1024}},
                                   {"unroll", 4, {1, 2, 4, 8}},
                                   {"vec", 2, {1, 4}}}}};
constexpr Verdict snrm2_verdict(const std::array<int, 3>& p, const char** why = nullptr) {
  const int threads = p[0], unroll = p[1], vec = p[2];
  if (threads % 32 || threads > 1024) return Verdict::kInvalid;
  // Scalar loads are only for strided x, which the grid never times (incx = 1): vectorised only.
  if (vec != 4) return (why ? *why = "scalar loads: only strided x uses them" : nullptr), Verdict::kPruned;
  // More than 8192 elements per block leaves SMs idle below n ~ 1e6 and is never faster above.
  if (threads * unroll * vec > 8192) return (why ? *why = "work per block > 8192" : nullptr), Verdict::kPruned;
  if (threads == 1024) return (why ? *why = "1024 threads: no better than 512 (one block per SM)" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}

// ---- sgemv, A x (sgemv.cuh SgemvN<TX, TY, UNROLL, VR>) ----
inline constexpr Space<4> kSgemvN{"sgemv_n",
                                  {{{"tx", 4, {8, 16, 32, 64}},
                                    {"ty", 4, {2, 4, 8, 16}},
                                    {"unroll", 3, {2, 4, 8}},
                                    {"rows", 2, {1, 4}}}}};
constexpr Verdict sgemv_n_verdict(const std::array<int, 4>& p, const char** why = nullptr) {
  const int tx = p[0], ty = p[1], unroll = p[2], rows = p[3];
  if (tx * ty > 1024 || tx * ty < 32) return Verdict::kInvalid;
  if (rows == 1) return (why ? *why = "one row per thread: 4x fewer bytes in flight" : nullptr), Verdict::kPruned;
  // 128..512 threads: fewer leaves latency unhidden, more limits blocks per SM for the split-k grid.
  if (tx * ty < 128 || tx * ty > 512) return (why ? *why = "threads outside 128..512" : nullptr), Verdict::kPruned;
  // Narrow row blocks (8 or 16 threads x 4 rows) only for short, wide matrices (m of a few dozen), where a
  // 32 x 4 block leaves most threads idle: with the most column threads (ty = 16) only.
  if (tx < 32 && ty != 16) return (why ? *why = "narrow row block: only with 16 column threads (short wide A)" : nullptr), Verdict::kPruned;
  if (unroll * rows * 4 > 128) return Verdict::kInvalid;  // registers for loads in flight
  return Verdict::kCompiled;
}

// ---- sgemv, A^T x (sgemv.cuh SgemvTV<WARPS, UNROLL>) ----
inline constexpr Space<2> kSgemvT{"sgemv_tv",
                                  {{{"warps", 5, {1, 2, 4, 8, 16}},
                                    {"unroll", 4, {1, 2, 4, 8}}}}};
constexpr Verdict sgemv_t_verdict(const std::array<int, 2>& p, const char** why = nullptr) {
  const int warps = p[0], unroll = p[1];
  if (warps * 32 > 1024) return Verdict::kInvalid;
  if (warps == 1) return (why ? *why = "one warp per block: too few warps per SM at the block limit" : nullptr), Verdict::kPruned;
  if (unroll == 8 && warps >= 8) return (why ? *why = "32 KB in flight per block: no gain" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}

// ---- strsv wavefront (strsv_wave.cuh StrsvWave<NB, THREADS>) ----
inline constexpr Space<2> kStrsv{"strsv_wave",
                                 {{{"nb", 3, {32, 64, 128}},
                                   {"threads", 4, {128, 256, 512, 1024}}}}};
constexpr Verdict strsv_verdict(const std::array<int, 2>& p, const char** why = nullptr) {
  const int nb = p[0], threads = p[1], warps = threads / 32;
  if (nb != 64 && nb != 128) return Verdict::kInvalid;  // 2 or 4 elements per vector load
  if (threads < nb || nb % warps || nb / warps > 32) return Verdict::kInvalid;
  if (2 * (nb / warps) * (nb / 32) > 128) return Verdict::kInvalid;  // two tiles in registers
  if (threads == 1024) return (why ? *why = "1024 threads: one tile line per warp, no memory parallelism left" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}

// ---- sgemm, warp-tiled multistage (sgemm_warp.cuh SgemmWarp<BM, BN, BK, WM, WN, TM, TN, STAGES>) ----
inline constexpr Space<8> kSgemmWarp{"sgemm_wt",
                                     {{{"bm", 3, {64, 128, 256}},
                                       {"bn", 3, {64, 128, 256}},
                                       {"bk", 3, {8, 16, 32}},
                                       {"wm", 2, {32, 64}},
                                       {"wn", 2, {32, 64}},
                                       {"tm", 2, {4, 8}},
                                       {"tn", 3, {4, 8, 16}},
                                       {"stages", 3, {2, 3, 4}}}}};
constexpr Verdict sgemm_warp_verdict(const std::array<int, 8>& p, const char** why = nullptr) {
  const int bm = p[0], bn = p[1], bk = p[2], wm = p[3], wn = p[4], tm = p[5], tn = p[6], stages = p[7];
  if (bm % wm || bn % wn) return Verdict::kInvalid;
  const int threads = (bm / wm) * (bn / wn) * 32;
  if (threads > 1024) return Verdict::kInvalid;
  if (wm % tm || wn % tn || (wm / tm) * (wn / tn) != 32) return Verdict::kInvalid;  // 32 lanes tile the warp tile
  if (tm * tn > 128) return Verdict::kInvalid;                                        // accumulators in registers
  if (size_t(stages) * bk * (bm + bn) * 4 > size_t(227) * 1024) return Verdict::kInvalid;  // shared memory
  if (threads != 128 && threads != 256)
    return (why ? *why = "threads not 128 or 256 (register file: one or two blocks per SM)" : nullptr), Verdict::kPruned;
  if (bk != 16) return (why ? *why = "k-step 8 doubles the barriers, 32 the shared memory per stage" : nullptr), Verdict::kPruned;
  if (stages != 3) return (why ? *why = "3 stages cover the load latency; 4 only costs shared memory" : nullptr), Verdict::kPruned;
  if (tm * tn < 64) return (why ? *why = "thread tile < 64 FMAs per 2 fragment loads: shared-memory bound" : nullptr), Verdict::kPruned;
  if (tn > 2 * tm) return (why ? *why = "more fragment loads per FMA than the squarer tile of the same size" : nullptr), Verdict::kPruned;
  if (wm < wn) return (why ? *why = "warp tile wider than tall: the mirror of a kept one" : nullptr), Verdict::kPruned;
  if (threads == 128 && bm * bn > 64 * 128) return (why ? *why = "large tile on 4 warps: too few warps per SM" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}

// Name of a point's family, exactly as the kernel template's name() (tests check they agree).
inline std::string family_name(const char* family, const int* p, int d) {
  const std::string f = family;
  auto s = [](int v) { return std::to_string(v); };
  if (f == "snrm2_1p") return f + "_" + s(p[0]) + "_" + s(p[1]) + "_v" + s(p[2]);
  if (f == "sgemv_n") return f + "_" + s(p[0]) + "x" + s(p[1]) + "_u" + s(p[2]) + "_r" + s(p[3]);
  if (f == "sgemv_tv") return f + "_" + s(p[0]) + "w_u" + s(p[1]);
  if (f == "strsv_wave") return f + "_" + s(p[0]) + "_" + s(p[1]);
  if (f == "sgemm_wt")
    return f + "_" + s(p[0]) + "x" + s(p[1]) + "x" + s(p[2]) + "_w" + s(p[3]) + "x" + s(p[4]) + "_t" + s(p[5]) + "x" +
           s(p[6]) + "_s" + s(p[7]);
  std::string r = f;
  for (int i = 0; i < d; ++i) r += "_" + s(p[i]);
  return r;
}

}  // namespace bok::space
