// The auto-mode policy's words: each decision's reason for BLASOFFLOAD_LOG=calls and the summary's lines.
#include <cstdio>
#include <string>

#include "policy/lent_core.h"
#include "policy/policy.h"
#include "policy/policy_state.h"
#include "policy/shape_classes.h"

namespace blasoffload::policy {

void describe(const Settings& s, const Call& c, const Decision& d, char* buf, std::size_t size) {
  const int r = c.call.routine;
  switch (d.reason) {
    case Reason::kMode:
      if (d.cpu_share > 0)
        std::snprintf(buf, size, "mode %s, CPU share %.2f", mode_name(s.routine_mode[r]), double(d.cpu_share));
      else
        std::snprintf(buf, size, "mode %s", mode_name(s.routine_mode[r]));
      return;
    case Reason::kMinSize:
      std::snprintf(buf, size, "min-size %.0f %s %lld", double(d.size), d.target == Target::kGpu ? ">=" : "<",
                    static_cast<long long>(s.min_size[r]));
      return;
    case Reason::kSmall:
      std::snprintf(buf, size, "small");
      return;
    case Reason::kNoGpu:
      std::snprintf(buf, size, "no GPU");
      return;
    case Reason::kDeviceOperands:
      std::snprintf(buf, size, "device operands");
      return;
    case Reason::kCpuVariant:
      std::snprintf(buf, size, "variant the GPU path does not cover");
      return;
    default:
      break;
  }
  char model[96];
  if (d.cpu_share > 0)
    std::snprintf(model, sizeof model, "model: cpu %.3f ms, hybrid %.3f ms with CPU share %.2f", d.cpu_us * 1e-3,
                  d.gpu_us * 1e-3, double(d.cpu_share));
  else
    std::snprintf(model, sizeof model, "model: cpu %.3f ms, gpu %.3f ms", d.cpu_us * 1e-3, d.gpu_us * 1e-3);
  // A GPU call and the module's device copies of its unchanged host matrices.
  char copies[80] = "";
  if (d.target == Target::kGpu && d.stage_copies)
    std::snprintf(copies, sizeof copies, "staged: a device copy has not paid yet; ");
  else if (d.target == Target::kGpu && d.copy_rest_us > 0)
    std::snprintf(copies, sizeof copies, "makes a device copy (%.3f ms more than its share); ",
                  double(d.copy_rest_us) * 1e-3);
  if (d.reason == Reason::kExploring)
    std::snprintf(buf, size, "exploring the other side; %s%s", copies, model);
  else if (d.reason == Reason::kInitialising)
    std::snprintf(buf, size, "GPU initialising; %s", model);
  else if (d.reason == Reason::kGrowing)
    std::snprintf(buf, size, "amortising staging buffers (%.1f of %.1f ms); %s",
                  g->growth.credit_us(d.cls, d.bucket) * 1e-3, double(d.growth_us) * 1e-3, model);
  else if (d.reason == Reason::kSolverOpening)
    std::snprintf(buf, size, "amortising opening cuSOLVER (%.1f of %.0f ms); %s", g->solver_gain_us.load() * 1e-3,
                  kStartupGainFactor * kSolverOpenUs * 1e-3, model);
  else if (d.reason == Reason::kAmortising)
    std::snprintf(buf, size, "amortising init (%.1f of %.0f ms); %s", g->gain_us.load() * 1e-3,
                  kStartupGainFactor * g->model.load()->init_ms(), model);
  else
    std::snprintf(buf, size, "%s%s", copies, model);
}

std::string summary() {
  if (!g) return "";
  std::string out = "  " + g->message + "\n";
  char line[256];
  const double started = g->init_started_after_us.load();
  if (started >= 0) {
    std::snprintf(line, sizeof line,
                  "  GPU start-up began in the background after %.1f ms of gain (one-time cost %.0f ms)\n",
                  started * 1e-3, g->model.load()->init_ms());
    out += line;
  } else if (g->gain_us.load() > 0) {
    std::snprintf(line, sizeof line,
                  "  GPU never started: the measured gain (%.1f ms) did not reach twice its one-time cost (%.0f ms)\n",
                  g->gain_us.load() * 1e-3, g->model.load()->init_ms());
    out += line;
  }
  out += g->link.summary();
  out += lent_core_note();
  if (const std::uint64_t r = g->memo.remembered()) {
    std::snprintf(line, sizeof line,
                  "  %llu calls taken to the CPU without the model (calls alike it had given the CPU by far; one in "
                  "%d decided in full)\n",
                  static_cast<unsigned long long>(r), DecisionMemo::kRecheck);
    out += line;
  }
  if (const unsigned long long n = g->growth.deferred()) {
    std::snprintf(line, sizeof line,
                  "  staging buffers: %llu GPU-worthy calls run on the CPU until their gains covered growing them; "
                  "%llu growths paid\n",
                  n, static_cast<unsigned long long>(g->growth.paid()));
    out += line;
  }
  const std::uint64_t lc = g->learning.learned(0), lg = g->learning.learned(1);
  if (lc + lg) {
    std::snprintf(line, sizeof line, "  adaptive: %llu CPU and %llu GPU calls learned from, %llu explored",
                  static_cast<unsigned long long>(lc), static_cast<unsigned long long>(lg),
                  static_cast<unsigned long long>(g->learning.explored()));
    out += line;
    out += "\n  adaptive corrections (measured/predicted, by class and size):";
    int shown = 0;
    for (int i = 0; i < class_count(); ++i)
      for (int b = 0; b < Learning::kBuckets; ++b) {
        const double cpu = g->learning.correction(i, b, 0), gpu = g->learning.correction(i, b, 1);
        if ((cpu == 1.0f && gpu == 1.0f) || ++shown > 16) continue;
        std::snprintf(line, sizeof line, " %s@4^%d cpu %.2f gpu %.2f;", class_name(i), b, cpu, gpu);
        out += line;
      }
    out += "\n";
  }
  return out;
}

}  // namespace blasoffload::policy
