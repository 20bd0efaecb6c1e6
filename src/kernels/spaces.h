// The tuning spaces of the kernel families, declared as data: each family's parameters with their candidate
// values, the hardware constraints a point must meet and the pruning rules (seed 000 section 5.1) that
// keep the compiled set small. registry.cu instantiates exactly the points that pass; the tuner prints the
// same enumeration; tests check both. Plain constexpr C++17 (no CUDA), so CPU-only code can include it.
// Each family exists per element type (s: float, d: double): the hardware constraints take the element size
// (bytes per vector load, registers, shared memory); the double spaces are pruned to a few points (compile time;
// FP64 speed tuning is later work).
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

// ---- snrm2, one launch (nrm2.cuh Nrm2OnePass<float, THREADS, UNROLL, VEC>) ----
inline constexpr Space<3> kSnrm2{"snrm2_1p",
                                 {{{"threads", 4, {128, 256, 512, 1024}},
                                   {"unroll", 4, {1, 2, 4, 8}},
                                   {"vec", 2, {1, 4}}}}};
// The same for double (nrm2.cuh Nrm2OnePass<double, THREADS, UNROLL, VEC>): 16-byte loads are VEC = 2.
inline constexpr Space<3> kDnrm2{
    "dnrm2_1p", {{{"threads", 4, {128, 256, 512, 1024}}, {"unroll", 4, {1, 2, 4, 8}}, {"vec", 2, {1, 2}}}}};
// elem: bytes per element (4 float, 8 double).
constexpr Verdict snrm2_verdict(const std::array<int, 3>& p, const char** why = nullptr, int elem = 4) {
  const int threads = p[0], unroll = p[1], vec = p[2];
  if (threads % 32 || threads > 1024) return Verdict::kInvalid;
  if (vec != 1 && vec * elem != 16) return Verdict::kInvalid;  // scalar or 16-byte loads
  // Scalar loads are only for strided x, which the grid never times (incx = 1): vectorised only.
  if (vec == 1) return (why ? *why = "scalar loads: only strided x uses them" : nullptr), Verdict::kPruned;
  // More than 32 KB (8192 floats) per block leaves SMs idle below n ~ 1e6 and is never faster above.
  if (threads * unroll * vec * elem > 32768) return (why ? *why = "work per block > 32 KB" : nullptr), Verdict::kPruned;
  if (threads == 1024) return (why ? *why = "1024 threads: no better than 512 (one block per SM)" : nullptr), Verdict::kPruned;
  if (elem == 8 && (threads == 128 || unroll == 1 || unroll == 8))
    return (why ? *why = "double: a coarse space (256/512 threads, unroll 2/4)" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}
constexpr Verdict dnrm2_verdict(const std::array<int, 3>& p, const char** why = nullptr) {
  return snrm2_verdict(p, why, 8);
}

// ---- sgemv, A x (gemv.cuh GemvN<float, TX, TY, UNROLL, VR>) ----
inline constexpr Space<4> kSgemvN{"sgemv_n",
                                  {{{"tx", 4, {8, 16, 32, 64}},
                                    {"ty", 4, {2, 4, 8, 16}},
                                    {"unroll", 3, {2, 4, 8}},
                                    {"rows", 2, {1, 4}}}}};
// The same for double (GemvN<double, ...>): 16-byte loads are 2 rows.
inline constexpr Space<4> kDgemvN{
    "dgemv_n", {{{"tx", 4, {8, 16, 32, 64}}, {"ty", 4, {2, 4, 8, 16}}, {"unroll", 3, {2, 4, 8}}, {"rows", 2, {1, 2}}}}};
constexpr Verdict sgemv_n_verdict(const std::array<int, 4>& p, const char** why = nullptr, int elem = 4) {
  const int tx = p[0], ty = p[1], unroll = p[2], rows = p[3];
  if (tx * ty > 1024 || tx * ty < 32) return Verdict::kInvalid;
  if (rows != 1 && rows * elem != 16) return Verdict::kInvalid;  // scalar or 16-byte loads
  if (rows == 1) return (why ? *why = "one row per thread: 4x fewer bytes in flight" : nullptr), Verdict::kPruned;
  // 128..512 threads: fewer leaves latency unhidden, more limits blocks per SM for the split-k grid.
  if (tx * ty < 128 || tx * ty > 512) return (why ? *why = "threads outside 128..512" : nullptr), Verdict::kPruned;
  // Narrow row blocks (8 or 16 threads x 4 rows) only for short, wide matrices (m of a few dozen), where a
  // 32 x 4 block leaves most threads idle: with the most column threads (ty = 16) only.
  if (tx < 32 && ty != 16) return (why ? *why = "narrow row block: only with 16 column threads (short wide A)" : nullptr), Verdict::kPruned;
  if (unroll * rows * elem > 128) return Verdict::kInvalid;  // registers for loads in flight
  if (elem == 8 && (tx != 32 || ty == 16 || unroll == 8))
    return (why ? *why = "double: a coarse space (32 x 4/8 threads, unroll 2/4)" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}
constexpr Verdict dgemv_n_verdict(const std::array<int, 4>& p, const char** why = nullptr) {
  return sgemv_n_verdict(p, why, 8);
}

// ---- sgemv, A^T x (gemv.cuh GemvTV<float, WARPS, UNROLL>) ----
inline constexpr Space<2> kSgemvT{"sgemv_tv",
                                  {{{"warps", 5, {1, 2, 4, 8, 16}},
                                    {"unroll", 4, {1, 2, 4, 8}}}}};
inline constexpr Space<2> kDgemvT{"dgemv_tv", {{{"warps", 5, {1, 2, 4, 8, 16}}, {"unroll", 4, {1, 2, 4, 8}}}}};
constexpr Verdict sgemv_t_verdict(const std::array<int, 2>& p, const char** why = nullptr, int elem = 4) {
  const int warps = p[0], unroll = p[1];
  if (warps * 32 > 1024) return Verdict::kInvalid;
  if (warps == 1) return (why ? *why = "one warp per block: too few warps per SM at the block limit" : nullptr), Verdict::kPruned;
  if (unroll == 8 && warps >= 8) return (why ? *why = "32 KB in flight per block: no gain" : nullptr), Verdict::kPruned;
  if (elem == 8 && (warps == 2 || warps == 16 || unroll == 1 || unroll == 8))
    return (why ? *why = "double: a coarse space (4/8 warps, unroll 2/4)" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}
constexpr Verdict dgemv_t_verdict(const std::array<int, 2>& p, const char** why = nullptr) {
  return sgemv_t_verdict(p, why, 8);
}

// ---- strsv wavefront (trsv_wave.cuh TrsvWave<float, NB, THREADS>) ----
inline constexpr Space<2> kStrsv{"strsv_wave",
                                 {{{"nb", 3, {32, 64, 128}},
                                   {"threads", 4, {128, 256, 512, 1024}}}}};
inline constexpr Space<2> kDtrsv{"dtrsv_wave", {{{"nb", 3, {32, 64, 128}}, {"threads", 4, {128, 256, 512, 1024}}}}};
// Dynamic shared memory of TrsvWave<T, NB, THREADS> (trsv_wave.cuh smem_bytes).
constexpr long trsv_wave_smem(int nb, int threads, int elem) {
  const long mats = 3L * nb * (nb + 1), t1 = long(nb / 2) * (nb / 2),
             t2 = long(threads / 32) * nb + 3L * nb + long(threads / nb > 0 ? threads / nb : 1) * nb;
  return long(elem) * (mats + (t1 > t2 ? t1 : t2));
}
constexpr Verdict strsv_verdict(const std::array<int, 2>& p, const char** why = nullptr, int elem = 4) {
  const int nb = p[0], threads = p[1], warps = threads / 32;
  if (nb != 64 && nb != 128) return Verdict::kInvalid;  // 2 or 4 elements per vector load
  if (nb / 32 * elem > 16) return Verdict::kInvalid;    // at most 16 bytes per vector load
  if (threads < nb || nb % warps || nb / warps > 32) return Verdict::kInvalid;
  if (2 * (nb / warps) * (nb / 32) * (elem / 4) > 128) return Verdict::kInvalid;  // two tiles in registers
  if (trsv_wave_smem(nb, threads, elem) > 227L * 1024) return Verdict::kInvalid;
  if (threads == 1024) return (why ? *why = "1024 threads: one tile line per warp, no memory parallelism left" : nullptr), Verdict::kPruned;
  return Verdict::kCompiled;
}
constexpr Verdict dtrsv_verdict(const std::array<int, 2>& p, const char** why = nullptr) {
  return strsv_verdict(p, why, 8);
}

// ---- sgemm, warp-tiled multistage (gemm_warp.cuh GemmWarp<float, BM, BN, BK, WM, WN, TM, TN, STAGES>) ----
inline constexpr Space<8> kSgemmWarp{"sgemm_wt",
                                     {{{"bm", 3, {64, 128, 256}},
                                       {"bn", 3, {64, 128, 256}},
                                       {"bk", 3, {8, 16, 32}},
                                       {"wm", 2, {32, 64}},
                                       {"wn", 2, {32, 64}},
                                       {"tm", 2, {4, 8}},
                                       {"tn", 3, {4, 8, 16}},
                                       {"stages", 3, {2, 3, 4}}}}};
// The same for double (GemmWarp<double, ...>): 16-byte fragments and copies are 2 elements.
inline constexpr Space<8> kDgemmWarp{"dgemm_wt",
                                     {{{"bm", 3, {64, 128, 256}},
                                       {"bn", 3, {64, 128, 256}},
                                       {"bk", 3, {8, 16, 32}},
                                       {"wm", 2, {32, 64}},
                                       {"wn", 2, {32, 64}},
                                       {"tm", 2, {4, 8}},
                                       {"tn", 3, {4, 8, 16}},
                                       {"stages", 3, {2, 3, 4}}}}};
constexpr Verdict sgemm_warp_verdict(const std::array<int, 8>& p, const char** why = nullptr, int elem = 4) {
  const int bm = p[0], bn = p[1], bk = p[2], wm = p[3], wn = p[4], tm = p[5], tn = p[6], stages = p[7];
  if (bm % wm || bn % wn) return Verdict::kInvalid;
  const int threads = (bm / wm) * (bn / wn) * 32;
  if (threads > 1024) return Verdict::kInvalid;
  if (wm % tm || wn % tn || (wm / tm) * (wn / tn) != 32) return Verdict::kInvalid;  // 32 lanes tile the warp tile
  if ((tm * elem) % 16 || (tn * elem) % 16) return Verdict::kInvalid;               // 16-byte fragments
  if (tm * tn * (elem / 4) > 128) return Verdict::kInvalid;                         // accumulators in registers
  if (size_t(stages) * bk * (bm + bn) * elem > size_t(227) * 1024) return Verdict::kInvalid;  // shared memory
  if (elem == 8) {  // double: a coarse space (4 x 8 thread tiles of 32 warps' worth, 16-deep k-steps, 3 stages)
    const bool keep = (threads == 128 || threads == 256) && bk == 16 && stages == 3 && tm == 4 && tn == 8 &&
                      !(threads == 128 && bm * bn > 64 * 128);
    return keep ? Verdict::kCompiled
                : ((why ? *why = "double: a coarse space (4 x 8 thread tiles, k-step 16, 3 stages)" : nullptr),
                   Verdict::kPruned);
  }
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
constexpr Verdict dgemm_warp_verdict(const std::array<int, 8>& p, const char** why = nullptr) {
  return sgemm_warp_verdict(p, why, 8);
}

// Name of a point's family, exactly as the kernel template's name() (tests check they agree).
inline std::string family_name(const char* family, const int* p, int d) {
  const std::string f = family;
  const std::string g = f.size() > 1 ? f.substr(1) : f;  // without the precision letter
  auto s = [](int v) { return std::to_string(v); };
  if (g == "nrm2_1p") return f + "_" + s(p[0]) + "_" + s(p[1]) + "_v" + s(p[2]);
  if (g == "gemv_n") return f + "_" + s(p[0]) + "x" + s(p[1]) + "_u" + s(p[2]) + "_r" + s(p[3]);
  if (g == "gemv_tv") return f + "_" + s(p[0]) + "w_u" + s(p[1]);
  if (g == "trsv_wave") return f + "_" + s(p[0]) + "_" + s(p[1]);
  if (g == "gemm_wt")
    return f + "_" + s(p[0]) + "x" + s(p[1]) + "x" + s(p[2]) + "_w" + s(p[3]) + "x" + s(p[4]) + "_t" + s(p[5]) + "x" +
           s(p[6]) + "_s" + s(p[7]);
  std::string r = f;
  for (int i = 0; i < d; ++i) r += "_" + s(p[i]);
  return r;
}

}  // namespace bok::space
