// The module's host threads (see staging_pool.h). Threads are created on first use with every signal blocked
// (the program's handlers must never run on them), detached, and never destroyed: at exit they sleep on a
// condition variable and die with the process; a fork() child never uses them (the module is disabled there). Each is
// named by its creator before it can run (bo-stage, bo-worker: these never end, so the handle stays valid; the
// module's others, bo-uffd, bo-unpin and bo-gpu-start, name themselves), so that top and the mix benchmark's
// per-thread accounting tell our threads from the CPU BLAS's.
#include "offload/module/staging_pool.h"

#include <emmintrin.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <xmmintrin.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "offload/module/gpu_share.h"

namespace bom {
namespace {

std::atomic<long> g_threads_setting{0};  // 0: the default
std::atomic<int> g_node_ranks{1};        // set_node_ranks: ranks of this node sharing its cores

struct Job {
  const std::function<void(int64_t)>* fn;
  int64_t n;
  std::atomic<int64_t> next{0};
  int holders = 0;  // workers inside work_on(*this); guarded by the pool's mutex
};

// Claims and runs items of one job until none is left.
void work_on(Job& j) {
  for (int64_t i; (i = j.next.fetch_add(1, std::memory_order_relaxed)) < j.n;) (*j.fn)(i);
}

void spawn_blocked(void* (*main)(void*), void* arg, const char* name) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t t;
  if (pthread_create(&t, nullptr, main, arg) == 0) {
    pthread_setname_np(t, name);
    pthread_detach(t);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

class Pool {
 public:
  Pool() {
    long n = staging_threads_for(cores(), g_node_ranks.load());
    if (const long r = g_threads_setting.load()) n = r;
    grow(int(n));
  }
  static long cores() { return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)); }
  int threads() const { return threads_.load(); }
  // Up to `total` threads, the caller one of them.
  void grow(int total) {
    std::lock_guard<std::mutex> g(grow_mu_);
    while (threads_.load() < total - 1) {
      spawn_blocked(&Pool::main, this, "bo-stage");
      threads_.fetch_add(1);
    }
  }

  void run(int64_t n, const std::function<void(int64_t)>& fn) {
    if (n <= 0) return;
    if (threads_.load() == 0 || n == 1) {
      for (int64_t i = 0; i < n; ++i) fn(i);
      return;
    }
    Job j;
    j.fn = &fn;
    j.n = n;
    {
      std::lock_guard<std::mutex> g(mu_);
      jobs_.push_back(&j);
    }
    cv_.notify_all();
    work_on(j);
    // Every item is claimed; once no worker holds the job, every claimed item has finished.
    std::unique_lock<std::mutex> g(mu_);
    auto it = std::find(jobs_.begin(), jobs_.end(), &j);
    if (it != jobs_.end()) jobs_.erase(it);  // no worker can pick it up any more
    done_cv_.wait(g, [&] { return j.holders == 0; });
  }

 private:
  static void* main(void* self) {
    static_cast<Pool*>(self)->loop();
    return nullptr;
  }
  void loop() {
    std::unique_lock<std::mutex> g(mu_);
    for (;;) {
      cv_.wait(g, [&] { return !jobs_.empty(); });
      Job* j = jobs_.front();
      if (j->next.load() >= j->n) {  // exhausted: drop it so workers look at the next job
        jobs_.pop_front();
        continue;
      }
      ++j->holders;  // the job object lives until its owner sees no holder
      g.unlock();
      work_on(*j);
      g.lock();
      --j->holders;
      done_cv_.notify_all();
    }
  }
  std::atomic<int> threads_{0};
  std::mutex grow_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  std::deque<Job*> jobs_;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers may still sleep on it at exit
  return *p;
}

// Persistent workers with a fixed index.
struct Worker {
  std::mutex mu;
  std::condition_variable cv;
  const std::function<void()>* task = nullptr;
  bool busy = false;
  static void* main(void* self) {
    Worker* w = static_cast<Worker*>(self);
    std::unique_lock<std::mutex> g(w->mu);
    for (;;) {
      w->cv.wait(g, [&] { return w->task != nullptr; });
      const std::function<void()>* t = w->task;
      g.unlock();
      (*t)();
      g.lock();
      w->task = nullptr;
      w->cv.notify_all();
    }
    return nullptr;
  }
};
std::mutex g_workers_mu;
std::vector<Worker*>* g_workers = nullptr;

Worker* worker(int i) {
  std::lock_guard<std::mutex> g(g_workers_mu);
  if (!g_workers) g_workers = new std::vector<Worker*>();
  while (int(g_workers->size()) <= i) {
    Worker* w = new Worker();
    g_workers->push_back(w);
    spawn_blocked(&Worker::main, w, "bo-worker");
  }
  return (*g_workers)[i];
}

}  // namespace

void parallel_for(int64_t n, const std::function<void(int64_t)>& fn) { pool().run(n, fn); }
int staging_threads() { return pool().threads(); }
void staging_threads_for_gpus(int gpus) {
  if (gpus > 1 && !g_threads_setting.load())
    pool().grow(int(staging_threads_for(Pool::cores(), g_node_ranks.load(), gpus)));
}

void run_concurrently(const std::function<void()>* tasks, int count) {
  std::vector<Worker*> used;
  for (int i = 1; i < count; ++i) {
    Worker* w = worker(i - 1);
    std::unique_lock<std::mutex> g(w->mu);
    w->cv.wait(g, [&] { return w->task == nullptr; });  // another caller's task on this worker: wait for it
    w->task = &tasks[i];
    w->cv.notify_all();
    used.push_back(w);
  }
  if (count > 0) tasks[0]();
  for (Worker* w : used) {
    std::unique_lock<std::mutex> g(w->mu);
    w->cv.wait(g, [&] { return w->task == nullptr; });
  }
}

namespace {
// Parts of about 2 MiB: enough to amortise the hand-off, small enough to balance across threads; but from 4 MiB on at
// least one for each staging thread and the caller where parts stay at 256 KiB or more. The several-GPU paths' rings
// pack pieces of 16 MiB: in 2 MiB parts only 8 threads of 16 or 24 worked on each, and each GPU's lane moved 9-16 GB/s
// where the gemm pipeline's 32 MiB chunks (16 parts) packed at 30. Smaller copies keep the caller alone (under 4 MiB:
// one part) rather than wake the pool for them.
constexpr int64_t kPartBytes = int64_t(2) << 20;
constexpr int64_t kMinPartBytes = int64_t(256) << 10;
int64_t parts_for(int64_t bytes) {
  if (bytes < 2 * kPartBytes) return 1;
  const int64_t threads = std::min<int64_t>(int64_t(staging_threads()) + 1, bytes / kMinPartBytes);
  return std::max(bytes / kPartBytes, threads);
}

// Streaming (non-temporal) stores: the destination is not read first, which saves a third of the memory traffic of
// a plain copy; neither side of a staging copy is wanted in the cache afterwards. The fence makes the stores
// visible before the thread reports the piece done (the DMA or the caller reads them next). A byte copy: the same
// for every element size.
void copy_stream(char* dst, const char* src, int64_t n) {
  if (n < 16384) {
    std::memcpy(dst, src, size_t(n));
    return;
  }
  const int64_t head = int64_t((16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15);
  std::memcpy(dst, src, size_t(head));
  int64_t i = head;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)),
                  b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16)),
                  c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32)),
                  d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
  std::memcpy(dst + i, src + i, size_t(n - i));
  _mm_sfence();
}

template <bool kPack>
void copy_block(void* dst_v, const void* src_v, int64_t rows, int64_t cols, int64_t ld, int es) {
  if (rows <= 0 || cols <= 0) return;
  char* dst = static_cast<char*>(dst_v);
  const char* src = static_cast<const char*>(src_v);
  const int64_t col_bytes = rows * es;
  if (rows == ld || cols == 1) {  // one contiguous run: split it evenly
    const int64_t total = col_bytes * cols;
    const int64_t pieces = parts_for(total);
    parallel_for(pieces, [&](int64_t p) {
      const int64_t b = total * p / pieces, e = total * (p + 1) / pieces;
      copy_stream(dst + b, src + b, e - b);
    });
    return;
  }
  const int64_t parts = parts_for(col_bytes * cols);
  const int64_t cols_per = std::max<int64_t>(1, std::min(kPartBytes / col_bytes, (cols + parts - 1) / parts));
  const int64_t pieces = (cols + cols_per - 1) / cols_per;
  const int64_t ld_bytes = ld * es;
  parallel_for(pieces, [&](int64_t p) {
    const int64_t c0 = p * cols_per, c1 = std::min(cols, c0 + cols_per);
    for (int64_t j = c0; j < c1; ++j) {
      if (kPack)
        copy_stream(dst + j * col_bytes, src + j * ld_bytes, col_bytes);
      else
        copy_stream(dst + j * ld_bytes, src + j * col_bytes, col_bytes);
    }
  });
}
}  // namespace

void set_staging_threads_setting(const char* value) {
  if (!value || !*value) return;
  char* end = nullptr;
  const long r = std::strtol(value, &end, 10);
  if (end && *end == '\0' && r >= 1 && r <= 256) g_threads_setting.store(r);
}

void set_node_ranks(int ranks) { g_node_ranks.store(std::max(1, ranks)); }

void pack_block(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int elem_size) {
  copy_block<true>(dst, src, rows, cols, ld, elem_size);
}
void unpack_block(void* dst, const void* src, int64_t rows, int64_t cols, int64_t ld, int elem_size) {
  copy_block<false>(dst, src, rows, cols, ld, elem_size);
}

}  // namespace bom
