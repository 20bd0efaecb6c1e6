// The GPU link's rates where no calibration of this GPU exists: measured at the start-up (module API measure_link),
// then the staged rate following the program's own large staged uploads (module API staged_gbs_seen). On the lent
// H100 the start-up's 64 MiB beside a busy CPU BLAS read 8.7-13.7 GB/s staged where the mix's factors of 256-512 MiB
// moved at about 28: uncalibrated dgetrs n = 8192 with one right-hand side stayed on the CPU (30 ms a call), its GPU
// side predicted at 46 ms where it took 18.5 staged, then 2.7 from a device copy.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "offload/cuda_module_api.h"
#include "policy/calibration.h"

namespace blasoffload::policy {

class MeasuredLink {
 public:
  // A staged rate within this share of the current one is left as it is: the rates are not that exact, and each
  // change builds a new model.
  static constexpr double kTolerance = 0.15;
  // The most changes a process makes (each model built is kept for the process's life: readers may still hold it).
  static constexpr int kMaxUpdates = 8;

  // Guards the rates, and the models the caller builds from them.
  std::mutex& mutex() { return mu_; }

  // Under mutex(): the start-up's measurement, which took `ms`; from then on apply() puts the rates into calibrations.
  void set(const bo_cuda_rates& r, double ms);
  // Whether set() has run (any thread).
  bool measured() const { return measured_.load(std::memory_order_acquire); }
  // Under mutex() where set() or follow() may run beside: the current rates into a calibration (nothing before set()).
  void apply(Calibration* c) const;

  // Whether the module has timed uploads not yet looked at (one relaxed load: asked after every learned GPU call).
  bool news(std::int64_t samples) const { return samples > seen_.load(std::memory_order_relaxed); }
  // Under mutex(): the module's answer (staged_gbs_seen). True when the staged rate is now `gbs`; *was: the one
  // before.
  bool follow(std::int64_t samples, double gbs, double* was);

  // The summary's lines (takes mutex()); empty before set().
  std::string summary();

 private:
  std::mutex mu_;
  std::atomic<bool> measured_{false};
  bo_cuda_rates rates_{};
  double ms_ = 0, startup_staged_gbs_ = 0;
  std::atomic<std::int64_t> seen_{0};
  int updates_ = 0;
};

// Once per node and GPU: MPI ranks of one node each started the GPU and measured its link at the same moment, ranks
// sharing a GPU disturbing each other's measurement and every rank paying it. The first process to take the lock file
// (`path` + ".lock", flock) measures and writes `path`; the others wait for the lock up to `wait_ms` and read what it
// wrote; a file younger than `max_age_s` (written by this user) is used as it is. Returns the measurement's status
// (BO_CUDA_OK with *out filled), BO_CUDA_NO_DEVICE when the wait ended without rates (the built-in numbers stay and
// the staged rate still follows the program's uploads). *shared: the rates came from the file.
int measure_link_once_per_node(const std::string& path, int wait_ms, double max_age_s,
                               const std::function<int(bo_cuda_rates*)>& measure, bo_cuda_rates* out, bool* shared);

// The MPI job this process is a rank of, as its launcher tells (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid,
// SLURM_JOB_ID.SLURM_STEP_ID); "" outside one.
std::string mpi_job();

// Where a rank of MPI job `job` keeps the measurement of the GPU the module names (`module_name`: its index and
// model) for the job's other ranks on this node: /dev/shm (node-local; /tmp where it is missing), one file per user,
// job and GPU. "" outside a job (no job: the process measures alone, as every process did before).
std::string node_link_path(const std::string& module_name, const std::string& job);

}  // namespace blasoffload::policy
