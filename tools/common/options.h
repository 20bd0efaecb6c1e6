// The tools' one option parser: --name=VALUE or --name VALUE, --help to stdout, --version, and errors that name the
// unknown option (with the nearest known one) or the value that is not a number.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace blasoffload::tools {

class OptionParser {
 public:
  // `program`: the tool's name; `summary`: one line on what it does; `version`: the version to print.
  OptionParser(std::string program, std::string summary, std::string version)
      : program_(std::move(program)), summary_(std::move(summary)), version_(std::move(version)) {}

  void flag(const std::string& name, bool* out, const std::string& help) {
    opts_.push_back({name, "", help,
                     [out](const std::string&) {
                       *out = true;
                       return std::string();
                     },
                     false});
  }
  void text(const std::string& name, std::string* out, const std::string& metavar, const std::string& help) {
    opts_.push_back({name, metavar, help,
                     [out](const std::string& v) {
                       *out = v;
                       return std::string();
                     },
                     true});
  }
  // A real number in [min, max].
  void number(const std::string& name, double* out, double min, double max, const std::string& metavar,
              const std::string& help) {
    opts_.push_back({name, metavar, help,
                     [out, min, max](const std::string& v) {
                       errno = 0;
                       char* end = nullptr;
                       const double d = std::strtod(v.c_str(), &end);
                       if (v.empty() || *end || errno == ERANGE || !std::isfinite(d))
                         return std::string("not a number");
                       if (d < min || d > max) return "not in [" + fmt(min) + ", " + fmt(max) + "]";
                       *out = d;
                       return std::string();
                     },
                     true});
  }
  // A comma-separated list, empty items dropped.
  void list(const std::string& name, std::vector<std::string>* out, const std::string& metavar,
            const std::string& help) {
    opts_.push_back({name, metavar, help,
                     [out](const std::string& v) {
                       std::string t;
                       for (char c : v + ",")
                         if (c == ',') {
                           if (!t.empty()) out->push_back(t);
                           t.clear();
                         } else {
                           t += c;
                         }
                       return std::string();
                     },
                     true});
  }
  // Extra text printed after the options in --help.
  void epilogue(const std::string& text) { epilogue_ = text; }

  // Parses argv. Returns -1 to go on, or the exit status to return now (0 after --help/--version, 2 on a usage
  // error, which is reported on stderr).
  int parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::fputs(help().c_str(), stdout);
        return 0;
      }
      if (a == "--version") {
        std::printf("%s %s\n", program_.c_str(), version_.c_str());
        return 0;
      }
      if (a.rfind("--", 0) != 0) return error("unexpected argument '" + a + "'");
      const auto eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const Opt* o = find(name);
      if (!o) {
        std::string msg = "unknown option '--" + name + "'";
        if (const std::string near = nearest(name); !near.empty()) msg += "; did you mean --" + near + "?";
        return error(msg);
      }
      std::string value;
      if (o->takes_value) {
        if (eq != std::string::npos) {
          value = a.substr(eq + 1);
        } else if (i + 1 < argc) {
          value = argv[++i];
        } else {
          return error("--" + name + " needs a value (--" + name + "=" + o->metavar + ")");
        }
      } else if (eq != std::string::npos) {
        return error("--" + name + " takes no value");
      }
      if (const std::string why = o->set(value); !why.empty()) return error("--" + name + "=" + value + ": " + why);
    }
    return -1;
  }

  std::string help() const {
    std::string h = "usage: " + program_ + " [options]\n" + summary_ + "\n\noptions:\n";
    for (const auto& o : opts_) {
      std::string left = "  --" + o.name + (o.takes_value ? "=" + o.metavar : "");
      left.resize(std::max<std::size_t>(left.size() + 2, 24), ' ');
      h += left + o.help + "\n";
    }
    h += "  --help                show this help and exit\n  --version             print the version and exit\n";
    if (!epilogue_.empty()) h += "\n" + epilogue_ + "\n";
    return h;
  }

 private:
  struct Opt {
    std::string name, metavar, help;
    std::function<std::string(const std::string&)> set;  // "" or why the value is wrong
    bool takes_value;
  };

  static std::string fmt(double d) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", d);
    return b;
  }

  const Opt* find(const std::string& name) const {
    for (const auto& o : opts_)
      if (o.name == name) return &o;
    return nullptr;
  }

  std::string nearest(const std::string& name) const {
    std::string best;
    std::size_t best_d = 3;  // at most two edits away
    for (const auto& o : opts_) {
      const std::string& b = o.name;
      std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
      for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
      for (std::size_t i = 1; i <= name.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
          cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (name[i - 1] == b[j - 1] ? 0 : 1)});
        prev.swap(cur);
      }
      if (prev[b.size()] < best_d) best_d = prev[b.size()], best = b;
    }
    return best;
  }

  int error(const std::string& msg) const {
    std::fprintf(stderr, "%s: %s\nTry '%s --help'.\n", program_.c_str(), msg.c_str(), program_.c_str());
    return 2;
  }

  std::string program_, summary_, version_, epilogue_;
  std::vector<Opt> opts_;
};

}  // namespace blasoffload::tools
