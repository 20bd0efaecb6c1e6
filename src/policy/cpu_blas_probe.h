// What the loaded CPU BLAS says about itself (OpenBLAS: version, kernel core, threads), and advice when its
// kernels are far below what this CPU runs (Debian's OpenBLAS 0.3.21 picks generic kernels on CPUs it does
// not know: about 5x slower sgemm on an AVX-512 Xeon unless OPENBLAS_CORETYPE is set).
#pragma once
#include <string>

namespace blasoffload {

struct CpuBlasReport {
  std::string identity;  // e.g. "OpenBLAS 0.3.21 (kernels: Haswell, 2 threads)"; empty if it says nothing
  std::string advice;    // one sentence with the fix; empty if none
  bool serious = false;  // generic kernels on a vector-capable CPU (not merely an older vector generation)
};

// Asks the library that defines `sgemm_address` (only read-only queries: openblas_get_config,
// openblas_get_corename, openblas_get_num_threads, renamed prefix + name + suffix as OpenBLAS builds with a symbol
// prefix or suffix export them: scipy_openblas_get_config64_).
CpuBlasReport probe_cpu_blas(const void* sgemm_address, const std::string& prefix = "", const std::string& suffix = "");

// A function the library that defines `sgemm_address` (or a library it depends on) exports, without loading
// anything: nullptr when none. The probe's queries and OpenBLAS's thread controls (policy/lent_core.h) use it.
void* cpu_blas_function(const void* sgemm_address, const char* name);

// The advice for an OpenBLAS kernel core on a CPU with or without AVX-512 (pure; empty if none).
std::string openblas_core_advice(const std::string& core, bool cpu_avx512, bool* serious);

}  // namespace blasoffload
