// The process's userfaultfd: events and write tracking (see uffd_watch.h).
#include "offload/module/uffd_watch.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

// Newer than the build machine's kernel headers (Debian 12 ships 6.1's); the values are the kernel's ABI.
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
  uint64_t start, end, categories;
};
struct pm_scan_arg {
  uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages, category_inverted, category_mask,
      category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#define PAGE_IS_WRITTEN (1 << 1)
#endif

namespace bom {

UffdWatch& UffdWatch::get() {
  static UffdWatch* w = new UffdWatch();  // never destroyed: its reader thread outlives every static destructor
  return *w;
}

void UffdWatch::start_locked() {
  started_ = true;
#ifdef UFFD_USER_MODE_ONLY
  int fd = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
#else
  int fd = -1;
#endif
  if (fd < 0) fd = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
  if (fd < 0) {
    why_events_ = why_writes_ = std::string("userfaultfd unavailable (") + std::strerror(errno) + ")";
    return;
  }
  const uint64_t events = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = events | UFFD_FEATURE_WP_ASYNC;
  if (ioctl(fd, UFFDIO_API, &api) == 0) {
    wp_async_ = true;
  } else {
    // A kernel without asynchronous write-protect: a userfaultfd's API can be set once, so start a new one.
    why_writes_ = std::string("no UFFD_FEATURE_WP_ASYNC (Linux >= 6.7): ") + std::strerror(errno);
    close(fd);
    fd = int(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
    api = uffdio_api{};
    api.api = UFFD_API;
    api.features = events;
    if (fd < 0 || ioctl(fd, UFFDIO_API, &api) != 0) {
      why_events_ = std::string("userfaultfd without unmap/remove/remap events (") + std::strerror(errno) + ")";
      if (fd >= 0) close(fd);
      return;
    }
  }
  if (wp_async_) {
    pagemap_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    pm_scan_arg probe{};
    probe.size = sizeof probe;
    probe.category_mask = PAGE_IS_WRITTEN;
    probe.return_mask = PAGE_IS_WRITTEN;
    if (pagemap_ < 0 || ioctl(pagemap_, PAGEMAP_SCAN, &probe) < 0) {  // an empty range: only asks for the ioctl
      why_writes_ = std::string("no PAGEMAP_SCAN on /proc/self/pagemap (Linux >= 6.7): ") + std::strerror(errno);
      wp_async_ = false;
    }
  }
  uffd_ = fd;
  // The reader keeps unmapping threads from waiting on a call; signals stay with the program.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  if (pthread_create(&t, nullptr, &UffdWatch::reader_main, this) == 0) {
    pthread_detach(t);
  } else {
    why_events_ = why_writes_ = "no thread for userfaultfd events";
    close(fd);
    uffd_ = -1;
    wp_async_ = false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

bool UffdWatch::events(std::string* why) {
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_locked();
  if (why) *why = why_events_;
  return uffd_ >= 0;
}

bool UffdWatch::write_tracking(std::string* why) {
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_locked();
  if (why) *why = uffd_ < 0 ? why_events_ : why_writes_;
  return uffd_ >= 0 && wp_async_;
}

bool UffdWatch::watch(uintptr_t lo, uintptr_t hi) {
  std::lock_guard<std::mutex> g(mu_);
  if (!started_) start_locked();
  if (uffd_ < 0) return false;
  uffdio_register reg{};
  reg.range.start = lo;
  reg.range.len = hi - lo;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  return ioctl(uffd_, UFFDIO_REGISTER, &reg) == 0;
}

void* UffdWatch::reader_main(void* self) {
  UffdWatch* w = static_cast<UffdWatch*>(self);
  // Named from inside (it is detached and returns if poll fails): top and the mix benchmark tell it by the name.
  pthread_setname_np(pthread_self(), "bo-uffd");
  pollfd pfd{w->uffd_, POLLIN, 0};
  for (;;) {
    if (poll(&pfd, 1, -1) < 0 && errno != EINTR) return nullptr;
    w->read_events();
  }
}

// The unmapping thread resumes as soon as its event is read; `reading_` stays raised until the event is filed, so a
// call that starts after the unmap returned waits for it (changes_since) instead of missing it. Never allocates: an
// allocation could unmap and wait on this very thread.
void UffdWatch::read_events() {
  uffd_msg msg[16];
  for (;;) {
    reading_.fetch_add(1);
    const ssize_t r = read(uffd_, msg, sizeof msg);
    if (r <= 0) {
      reading_.fetch_sub(1);
      return;  // EAGAIN: nothing pending
    }
    {
      std::lock_guard<std::mutex> g(ev_mu_);
      for (ssize_t i = 0; i < r / ssize_t(sizeof(uffd_msg)); ++i) {
        const uffd_msg& m = msg[i];
        std::pair<uintptr_t, uintptr_t> range;
        if (m.event == UFFD_EVENT_UNMAP || m.event == UFFD_EVENT_REMOVE)
          range = {uintptr_t(m.arg.remove.start), uintptr_t(m.arg.remove.end)};
        else if (m.event == UFFD_EVENT_REMAP)
          range = {uintptr_t(m.arg.remap.from), uintptr_t(m.arg.remap.from + m.arg.remap.len)};
        else
          continue;
        ring_[filed_ % kRing] = range;
        ++filed_;
      }
    }
    reading_.fetch_sub(1);
    const int n = n_wakers_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) wake_[i](wake_ctx_[i]);
  }
}

uint64_t UffdWatch::sequence() {
  std::lock_guard<std::mutex> g(ev_mu_);
  return filed_;
}

void UffdWatch::changes_since(uint64_t* seq, const RangeFn& fn) {
  if (uffd_ < 0) return;
  read_events();
  while (reading_.load() > 0) sched_yield();  // the reader holds an event it has not filed yet
  std::pair<uintptr_t, uintptr_t> got[kRing];
  size_t n = 0;
  bool lost = false;
  {
    std::lock_guard<std::mutex> g(ev_mu_);
    if (filed_ - *seq > uint64_t(kRing)) {
      lost = true;
    } else {
      for (uint64_t i = *seq; i < filed_; ++i) got[n++] = ring_[i % kRing];
    }
    *seq = filed_;
  }
  if (lost) fn(0, UINTPTR_MAX);
  for (size_t i = 0; i < n; ++i) fn(got[i].first, got[i].second);
}

void UffdWatch::add_waker(void (*wake)(void*), void* ctx) {
  std::lock_guard<std::mutex> g(ev_mu_);
  const int n = n_wakers_.load();
  if (n >= kMaxWakers) return;
  wake_[n] = wake;
  wake_ctx_[n] = ctx;
  n_wakers_.store(n + 1, std::memory_order_release);
}

int64_t UffdWatch::scan_written(uintptr_t lo, uintptr_t hi, bool protect, const RangeFn& fn) {
  if (!wp_async_ || lo >= hi) return wp_async_ ? 0 : -1;
  page_region vec[256];
  int64_t pages = 0;
  uintptr_t at = lo;
  while (at < hi) {
    pm_scan_arg a{};
    a.size = sizeof a;
    a.flags = PM_SCAN_CHECK_WPASYNC | (protect ? PM_SCAN_WP_MATCHING : 0);
    a.start = at;
    a.end = hi;
    a.vec = uintptr_t(vec);
    a.vec_len = 256;
    a.category_mask = PAGE_IS_WRITTEN;
    a.return_mask = PAGE_IS_WRITTEN;
    const long r = ioctl(pagemap_, PAGEMAP_SCAN, &a);
    if (r < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    for (long i = 0; i < r; ++i) {
      pages += int64_t((vec[i].end - vec[i].start) / 4096);
      fn(uintptr_t(vec[i].start), uintptr_t(vec[i].end));
    }
    if (a.walk_end <= at) return -1;  // no progress: never loop forever on a kernel we misread
    at = uintptr_t(a.walk_end);
  }
  return pages;
}

bool UffdWatch::protect(uintptr_t lo, uintptr_t hi, bool on) {
  if (uffd_ < 0 || lo >= hi) return false;
  uffdio_writeprotect wp{};
  wp.range.start = lo;
  wp.range.len = hi - lo;
  wp.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0;
  for (;;) {
    if (ioctl(uffd_, UFFDIO_WRITEPROTECT, &wp) == 0) return true;
    if (errno != EAGAIN && errno != EINTR) return false;
  }
}

}  // namespace bom
