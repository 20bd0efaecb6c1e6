// Starts blasoffload-calibrate --auto in the background when no calibration matches (see auto_calibrate.h).
//
// How the process is started, and why: posix_spawn (a vfork-like clone in glibc: no copy of the program's memory, no
// pthread_atfork handlers run, so neither OpenBLAS's thread pool nor our own fork hook is touched) with every
// descriptor but the lock closed, signals reset, a session of its own (the terminal's Ctrl-C and hang-up do not
// reach it), stdin/stdout on /dev/null and stderr on PATH.auto.log. The tool forks once more at once and its first
// process exits: the library waits only for that (milliseconds: an exec and a fork), and the measuring process is
// then nobody's child, never seen by the program's waitpid. The environment is the program's (the same OPENBLAS_* /
// OMP_* settings, so the CPU BLAS reports the same identity), less libblasoffload in LD_PRELOAD and with
// BLASOFFLOAD_AUTO_CALIBRATE=off, so the tool measures the CPU libraries themselves.
//
// One calibration per path: a flock on PATH.lock taken before the start and passed to the tool as descriptor 3; the
// measuring process holds it to its end, and the kernel drops it however that ends (no stale-lock rule needed). The
// lock file keeps the last start's CPU BLAS, time and pid: a run that finds a start for the same CPU BLAS less than an
// hour old and still no usable file does not start another (a tool that fails, or a file keyed unlike this process,
// must not cost a calibration per run); nor one that finds a start for another CPU BLAS less than 15 minutes old.
#include "policy/auto_calibrate.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "config/paths.h"
#include "dispatch/log.h"

extern char** environ;

namespace blasoffload::policy {
namespace {

constexpr const char* kTool = "blasoffload-calibrate";
// A start for the same CPU BLAS that left no usable file is not repeated within the hour; one for another CPU BLAS
// (programs alternating between two libraries, each finding the other's file) not within the tool's own bound of
// 10 minutes and a margin, so that alternating programs do not keep one calibration running after another.
constexpr double kRetrySameS = 3600, kRetryOtherS = 900;
constexpr int kLockFdInChild = 3;

// The pid when the library was loaded: a different one at the first call means a fork child.
pid_t g_load_pid = 0;
__attribute__((constructor)) void record_load_pid() { g_load_pid = getpid(); }

bool executable(const std::string& p) { return access(p.c_str(), X_OK) == 0; }

// The tool: next to libblasoffload.so (the build tree), else in the installed layout's bin/ or libexec/.
std::string find_tool() {
  const std::string lib_dir = paths::object_dir(reinterpret_cast<const void*>(&find_tool));
  if (lib_dir.empty()) return "";
  if (executable(lib_dir + "/" + kTool)) return lib_dir + "/" + kTool;
  const std::string prefix = paths::prefix_of(lib_dir);
  if (prefix.empty()) return "";
  for (const char* d : {"/bin/", "/libexec/blasoffload/", "/libexec/"})
    if (executable(prefix + d + kTool)) return prefix + d + kTool;
  return "";
}

void make_dirs(const std::string& file) {
  for (size_t p = file.find('/', 1); p != std::string::npos; p = file.find('/', p + 1))
    mkdir(file.substr(0, p).c_str(), 0755);
}

std::string read_all(int fd) {
  std::string s;
  char buf[1024];
  for (off_t off = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n <= 0) break;
    s.append(buf, size_t(n));
    off += n;
  }
  return s;
}

// The program's environment for the tool: LD_PRELOAD without libblasoffload (the tool must time the CPU libraries,
// not us), auto-calibration off in the tool.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (kv.rfind("BLASOFFLOAD_AUTO_CALIBRATE=", 0) == 0) continue;
    if (kv.rfind("LD_PRELOAD=", 0) == 0) {
      std::string kept, item;
      const std::string list = kv.substr(11) + " ";
      for (char c : list) {
        if (c == ' ' || c == ':') {
          if (!item.empty() && item.find("libblasoffload") == std::string::npos)
            kept += (kept.empty() ? "" : ":") + item;
          item.clear();
        } else {
          item += c;
        }
      }
      if (!kept.empty()) env.push_back("LD_PRELOAD=" + kept);
      continue;
    }
    env.push_back(kv);
  }
  env.push_back("BLASOFFLOAD_AUTO_CALIBRATE=off");
  return env;
}

// Starts the tool with the lock at `lock_fd`; returns the intermediate process's pid, or -1 with errno's message in
// `why`.
pid_t spawn(const std::vector<std::string>& args, const std::string& log, int lock_fd, std::string* why) {
  std::vector<std::string> env = child_environment();
  std::vector<char*> argv, envp;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, lock_fd, kLockFdInChild);  // lock_fd > 3: dup2 clears close-on-exec
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&fa, kLockFdInChild + 1);
#endif
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifdef POSIX_SPAWN_SETSID
  flags |= POSIX_SPAWN_SETSID;
#endif
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *why = std::strerror(rc);
    return -1;
  }
  return pid;
}

std::string identity_line(const CpuIdentity& cpu) {
  return "cpu " + cpu.library + (cpu.report.empty() ? "" : " [" + cpu.report + "]") + "\n";
}

}  // namespace

std::string start_auto_calibration(const Settings& s, const CpuIdentity& cpu, const std::string& lapack_library) {
  const char* on = config_value("BLASOFFLOAD_AUTO_CALIBRATE");
  if (on && std::strcmp(on, "off") == 0) return "";
  if (s.policy_file.empty()) return "";
  const std::string& path = s.policy_file;
  if (s.policy_file_explicit) {
    log_debug(
        "policy: no auto-calibration: %s was named by BLASOFFLOAD_POLICY_FILE (only the default path is "
        "written automatically)",
        path.c_str());
    return "";
  }
  // A set-user-ID or set-group-ID program does not start programs on the strength of its environment.
  if (getuid() != geteuid() || getgid() != getegid()) return "";
  if (getpid() != g_load_pid) {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    if (cuda) {
      dlclose(cuda);
      log_debug("policy: no auto-calibration in a fork child of a CUDA process");
      return "";
    }
  }
  const std::string tool = find_tool();
  if (tool.empty()) {
    log_debug("policy: no auto-calibration: %s not found next to the library nor in its prefix's bin/", kTool);
    return "";
  }
  make_dirs(path);
  const std::string lock_path = path + ".lock", log_path = path + ".auto.log";
  const int opened = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (opened < 0) return "auto-calibration not started: cannot create " + lock_path + ": " + std::strerror(errno);
  // Above the child's descriptor 3, so that the dup2 in the child is a real one (it clears close-on-exec).
  const int fd = fcntl(opened, F_DUPFD_CLOEXEC, kLockFdInChild + 1);
  close(opened);
  if (fd < 0) return "";
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    log_debug("policy: an auto-calibration for %s is running in another process", path.c_str());
    return "auto-calibration already running in another process, results for the next run in " + path;
  }
  // Another process may have finished while this one read the file: look again under the lock.
  if (choose_calibration(path, false, cpu).from_file) return path + " was written meanwhile: the next run uses it";
  struct stat st {};
  const std::string before = read_all(fd);
  if (fstat(fd, &st) == 0 && !before.empty()) {
    const bool same = before.find(identity_line(cpu)) != std::string::npos;
    if (std::difftime(std::time(nullptr), st.st_mtime) < (same ? kRetrySameS : kRetryOtherS))
      return same
                 ? "auto-calibration not started: one for this CPU BLAS ran less than an hour ago and left no usable " +
                       path + " (see " + log_path + ")"
                 : "auto-calibration not started: one for another CPU BLAS ran less than 15 minutes ago";
  }
  char when[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string header = "blasoffload auto-calibration\n" + identity_line(cpu) + "started " + when + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, header.data(), header.size(), 0) != ssize_t(header.size()) ||
      lseek(fd, 0, SEEK_END) < 0)
    return "auto-calibration not started: cannot write " + lock_path;
  // It measures once this program has ended: beside a busy CPU BLAS, even at the lowest priority, it would cost the
  // program's threaded calls a scheduler slice each.
  std::vector<std::string> args = {
      tool,         "--auto",    "--lock-fd",   std::to_string(kLockFdInChild), "--out", path,
      "--cpu-blas", cpu.library, "--after-pid", std::to_string(getpid())};
  if (!lapack_library.empty()) args.insert(args.end(), {"--lapack", lapack_library});
  if (!s.cuda_module.empty())
    args.insert(args.end(), {"--module", s.cuda_module});
  else if (access("/dev/nvidiactl", F_OK) != 0)
    args.push_back("--no-gpu");
  // Tests: the tool's --quick sizes and timings, so that a test waits seconds, not minutes.
  if (const char* q = config_value("BLASOFFLOAD_TEST_AUTO_CALIBRATE_QUICK"); q && std::strcmp(q, "on") == 0)
    args.push_back("--quick");
  std::string why;
  const pid_t first = spawn(args, log_path, fd, &why);
  if (first < 0) return "auto-calibration not started: " + tool + ": " + why;
  // The tool's first process forks the measuring one and exits at once; a program's SIGCHLD handler may reap it
  // first (ECHILD), which is as good.
  int status = 0;
  while (waitpid(first, &status, 0) < 0 && errno == EINTR) {
  }
  long pid = -1;
  const std::string after = read_all(fd);
  if (const size_t at = after.rfind("pid "); at != std::string::npos)
    pid = std::strtol(after.c_str() + at + 4, nullptr, 10);
  if (pid <= 0) return "auto-calibration could not start (see " + log_path + ")";
  return "auto-calibration started in the background (pid " + std::to_string(pid) +
         ", measuring once this program has ended), results for the next run in " + path;
}

}  // namespace blasoffload::policy
