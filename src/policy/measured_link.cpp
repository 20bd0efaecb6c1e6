// The link measured at the start-up and followed on the program's uploads (see measured_link.h).
#include "policy/measured_link.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <thread>

namespace blasoffload::policy {

void MeasuredLink::set(const bo_cuda_rates& r, double ms) {
  rates_ = r;
  ms_ = ms;
  startup_staged_gbs_ = r.pageable_gbs;
  measured_.store(true, std::memory_order_release);
}

void MeasuredLink::apply(Calibration* c) const {
  if (!measured()) return;
  c->h2d_gbs = rates_.h2d_gbs;
  c->d2h_gbs = rates_.d2h_gbs;
  c->pageable_gbs = rates_.pageable_gbs;
}

bool MeasuredLink::follow(std::int64_t samples, double gbs, double* was) {
  if (!measured() || samples <= seen_.load(std::memory_order_relaxed)) return false;
  seen_.store(samples, std::memory_order_relaxed);
  const double current = rates_.pageable_gbs;
  if (!(gbs > 0) || !(current > 0) || std::fabs(gbs / current - 1.0) < kTolerance) return false;
  if (updates_ >= kMaxUpdates) return false;
  ++updates_;
  *was = current;
  rates_.pageable_gbs = gbs;
  return true;
}

std::string MeasuredLink::summary() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!measured()) return "";
  char line[256];
  std::snprintf(line, sizeof line,
                "  GPU link measured at start-up (no calibration of this GPU): %.1f GB/s to it, %.1f back, %.1f "
                "staged, in %.0f ms\n",
                rates_.h2d_gbs, rates_.d2h_gbs, startup_staged_gbs_, ms_);
  std::string out = line;
  if (updates_ > 0) {
    std::snprintf(line, sizeof line,
                  "  staged copies priced at %.1f GB/s, what the program's large staged uploads reached (%lld timed, "
                  "%d changes)\n",
                  rates_.pageable_gbs, static_cast<long long>(seen_.load(std::memory_order_relaxed)), updates_);
    out += line;
  }
  return out;
}

namespace {

// The rates in `path` if it is a regular file of this user, younger than max_age_s, holding three plausible rates.
bool read_rates(const std::string& path, double max_age_s, bo_cuda_rates* out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            std::difftime(std::time(nullptr), st.st_mtime) <= max_age_s;
  char buf[256] = {};
  ok = ok && read(fd, buf, sizeof buf - 1) > 0;
  close(fd);
  bo_cuda_rates r{};
  ok = ok &&
       std::sscanf(buf, "blasoffload link h2d %lf d2h %lf staged %lf", &r.h2d_gbs, &r.d2h_gbs, &r.pageable_gbs) == 3 &&
       r.h2d_gbs > 0 && r.d2h_gbs > 0 && r.pageable_gbs > 0;
  if (ok) *out = r;
  return ok;
}

// Written whole under a temporary name and renamed: a reader sees the old file or the new one, never half of one.
void write_rates(const std::string& path, const bo_cuda_rates& r) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wx");
  if (!f) return;
  std::fprintf(f, "blasoffload link h2d %.3f d2h %.3f staged %.3f\n", r.h2d_gbs, r.d2h_gbs, r.pageable_gbs);
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace

int measure_link_once_per_node(const std::string& path, int wait_ms, double max_age_s,
                               const std::function<int(bo_cuda_rates*)>& measure, bo_cuda_rates* out, bool* shared) {
  *shared = true;
  if (read_rates(path, max_age_s, out)) return BO_CUDA_OK;
  const int lock = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock < 0) {  // nowhere to coordinate: measure alone, as before
    *shared = false;
    return measure(out);
  }
  int status = BO_CUDA_NO_DEVICE;
  if (flock(lock, LOCK_EX | LOCK_NB) == 0) {
    // First here, or the one before finished since the look above.
    if (read_rates(path, max_age_s, out)) {
      status = BO_CUDA_OK;
    } else {
      *shared = false;
      status = measure(out);
      if (status == BO_CUDA_OK) write_rates(path, *out);
    }
  } else {
    // Another process measures: wait for its lock to go, then take what it wrote.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    bool free = false;
    while (!(free = flock(lock, LOCK_SH | LOCK_NB) == 0) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (free && read_rates(path, max_age_s, out)) status = BO_CUDA_OK;
  }
  close(lock);  // releases the lock
  return status;
}

std::string mpi_job() {
  // The launchers' own variables, not blasoffload settings: read as the environment has them (secure_getenv
  // semantics), as the module's choice of GPU by local rank reads theirs.
  for (const char* var : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"})
    if (const char* v = secure_getenv(var); v && *v) return v;
  if (const char* v = secure_getenv("SLURM_JOB_ID"); v && *v) {
    const char* step = secure_getenv("SLURM_STEP_ID");
    return std::string(v) + "." + (step ? step : "");
  }
  return "";
}

std::string node_link_path(const std::string& module_name, const std::string& job) {
  if (job.empty()) return "";
  // The GPU's index and model as the module names them ("... GPU 1 of 4: NVIDIA H200, sm_90, by ..."), not how it
  // was chosen or the runtime's version.
  const auto at = module_name.find("GPU ");
  std::string id = module_name.substr(at == std::string::npos ? 0 : at), key;
  if (const auto by = id.find(", by "); by != std::string::npos) id.resize(by);
  for (const char ch : job + "-" + id) {
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
      key += ch;
    else if (!key.empty() && key.back() != '-')
      key += '-';
  }
  struct stat st {};
  const std::string dir = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
  return dir + "/blasoffload-link-" + std::to_string(geteuid()) + "-job-" + key;
}

}  // namespace blasoffload::policy
