// The library's one logger: levels from BLASOFFLOAD_LOG, output to stderr or BLASOFFLOAD_LOG_FILE.
#pragma once

#include <string>

#include "policy/config.h"

namespace blasoffload {

void log_configure(LogLevel level, const std::string& file);
LogLevel log_level();

// Warnings are printed whatever the level: they report something the user must fix or know.
void log_warning(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Fatal conditions: to stderr always, and to the log file too when there is one.
void log_fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));   // level >= summary
void log_call(const char* fmt, ...) __attribute__((format(printf, 1, 2)));   // level >= calls
void log_debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));  // level >= debug
// Writes a whole pre-formatted block (the summary) without prefixing each line.
void log_raw(const std::string& text);

}  // namespace blasoffload
