// What the files of blasoffload_regret share: the CPU BLAS's Fortran symbols, the options, one shape, and the
// functions each file offers the others.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" {
void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            size_t lta, size_t ltb);
void sgemv_(const char* t, const int* m, const int* n, const float* alpha, const float* a, const int* lda,
            const float* x, const int* incx, const float* beta, float* y, const int* incy, size_t lt);
void strsv_(const char* uplo, const char* t, const char* diag, const int* n, const float* a, const int* lda, float* x,
            const int* incx, size_t lu, size_t lt, size_t ld);
float snrm2_(const int* n, const float* x, const int* incx);
void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, size_t lta, size_t ltb);
void dgemv_(const char* t, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy, size_t lt);
void dtrsv_(const char* uplo, const char* t, const char* diag, const int* n, const double* a, const int* lda, double* x,
            const int* incx, size_t lu, size_t lt, size_t ld);
double dnrm2_(const int* n, const double* x, const int* incx);
}

namespace bo_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The usage text (regret.cpp); an unknown routine prints it too.
extern const char kUsage[];

struct Options {
  std::string routine;
  std::vector<std::string> shapes;
  bool quick = false;
  bool large = false;
  bool tiny = false;
  double warmup_s = 0.5;
  int warmup_calls = 3;
  double min_s = 0.5;
  int max_reps = 20000;
  double sample_us = 200;
  double rotate_mb = 256;
  int round = 0;
};

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  std::string text;
};

// ---- Shapes (regret_shapes.cpp) ----

// A routine's name without its precision letter ("gemm_nn" of "dgemm_nn"); empty for an unknown precision.
std::string kind_of(const std::string& routine);
// One entry of --shapes for the routine ("N", "MxN", "MxNxK", "NxK" as its kind takes them); false when malformed.
bool parse_shape(const std::string& routine, const std::string& text, Shape* s);
// The routine's default list (empty for an unknown routine).
std::vector<std::string> default_shapes(const std::string& routine, bool quick, bool large);

// ---- Output (regret_report.cpp) ----

std::string json_escape(const char* s);
// BLASOFFLOAD_MODE, or "none" when unset.
const char* mode_name();
// The first line: what ran, where each precision's gemm resolved, and the CPU BLAS's configuration.
void print_context(const char* program, const Options& o);

// ---- Measuring (regret_measure.cpp) ----

// The grid: one line per shape of the routine; exit status 1 when a shape could not be allocated, 2 on bad input.
int run_grid(const Options& o);
// --tiny: the decision-overhead cases.
int run_tiny(const Options& o);

}  // namespace bo_bench
