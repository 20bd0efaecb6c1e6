// Formats and writes log lines; one write(2) per line so lines from many threads never interleave.
#include "dispatch/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace blasoffload {
namespace {

LogLevel g_level = LogLevel::kOff;
int g_fd = STDERR_FILENO;

void vwrite_fd(int fd, const char* fmt, va_list ap) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "blasoffload: ");
  int m = std::vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
  if (m < 0) return;
  n += (m < static_cast<int>(sizeof buf) - n - 1) ? m : static_cast<int>(sizeof buf) - n - 2;
  buf[n++] = '\n';
  ssize_t ignored = ::write(fd, buf, n);
  (void)ignored;
}

void vwrite(const char* fmt, va_list ap) { vwrite_fd(g_fd, fmt, ap); }

}  // namespace

void log_configure(LogLevel level, const std::string& file) {
  g_level = level;
  if (!file.empty()) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      g_fd = fd;
    } else {
      log_warning("cannot open BLASOFFLOAD_LOG_FILE=%s; logging to stderr", file.c_str());
    }
  }
}

LogLevel log_level() { return g_level; }

#define BO_LOG_BODY(cond) \
  if (!(cond)) return;    \
  va_list ap;             \
  va_start(ap, fmt);      \
  vwrite(fmt, ap);        \
  va_end(ap)

void log_warning(const char* fmt, ...) { BO_LOG_BODY(true); }
void log_fatal(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwrite_fd(STDERR_FILENO, fmt, ap);
  va_end(ap);
  if (g_fd != STDERR_FILENO) {
    va_start(ap, fmt);
    vwrite_fd(g_fd, fmt, ap);
    va_end(ap);
  }
}
void log_info(const char* fmt, ...) { BO_LOG_BODY(g_level >= LogLevel::kSummary); }
void log_call(const char* fmt, ...) { BO_LOG_BODY(g_level >= LogLevel::kCalls); }
void log_debug(const char* fmt, ...) { BO_LOG_BODY(g_level >= LogLevel::kDebug); }

#undef BO_LOG_BODY

void log_raw(const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t w = ::write(g_fd, p, left);
    if (w <= 0) return;
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

}  // namespace blasoffload
