/* The benchmarks' data: uniform in (-1, 1) from a counter, never exactly zero (zeros would let a BLAS skip work, and
 * times of zeros are not times of data). Counter-based so that any number of threads fills the same values. C and
 * C++ (bench/lapack is C). */
#ifndef BLASOFFLOAD_BENCH_HASH_UNIFORM_H
#define BLASOFFLOAD_BENCH_HASH_UNIFORM_H

#include <stdint.h>

static inline float hash_uniform(uint64_t i, uint64_t seed) {
  uint64_t z = i * 0x9E3779B97F4A7C15ull + seed * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (float)(((double)(z >> 40) + 0.5) / 8388608.0 - 1.0);
}

#endif
