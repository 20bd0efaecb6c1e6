// Who uploads a panel that several devices of one gemm need: in the whole-panel order (tile_plan.h) the devices of a
// row of blocks all need that band's A panels (of a column of blocks, its B panels). One of them uploads a panel from
// host memory and the others copy it from that device's memory, so the staging threads, which every device shares,
// pack each panel once, not once per device. Pure C++ (the copies are the driver's, gemm_tiles.cu), so CI tests the
// hand-over without a GPU.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "offload/module/tile_plan.h"

namespace bom {

// Panel q of a call: A's panel i is q = i, B's panel j is q = mt + j.
// The driver expected to upload each panel: its sharers (the blocks that need it) take turns, so that each packs an
// equal part. -1 where no block needs it.
std::vector<int> preferred_uploaders(const Plan& p, const std::vector<TileBlock>& blocks);
// Whether any panel is needed by more than one block (else there is nothing to share).
bool any_shared_panel(const std::vector<TileBlock>& blocks);

class PanelShare {
 public:
  PanelShare(std::vector<int> preferred, int drivers);

  // What driver `me` does for a panel it needs and does not hold: upload it from host memory (and then call
  // uploaded()), or copy it from driver `from`, whose upload of it is queued.
  struct Source {
    bool upload = true;
    int from = -1;
  };
  // Blocks while another driver queues its upload of the panel, and while the panel's preferred uploader may still
  // start it: it is working through its own block, is not itself waiting for a panel to be started, and has not failed.
  // A driver taking other blocks' items (stealing) never waits for a panel to be started: it uploads it.
  // Waiting drivers that would form a cycle (each waiting for the next to start a panel) cannot all wait: the last one
  // to join sees its uploader waiting and uploads.
  Source need(int64_t q, int me);
  // Without blocking: whether need() would return at once (the panel is ready, or it is me's to stage now).
  bool ready_for(int64_t q, int me) const;
  // Claims panel q for me to stage where nobody has started it and it is me's turn (or nobody's): true, and me stages
  // it and calls uploaded(). A driver about to wait for another's panel stages its own next ones meanwhile.
  bool claim_own(int64_t q, int me);
  // me's upload of panel q is queued (ok) or failed (the drivers waiting for it upload it themselves; a failed driver
  // is waited for no more).
  void uploaded(int64_t q, int me, bool ok);
  // me has finished its own block's items (it takes other blocks' now, or none): nobody waits for it to start a panel.
  void left_own_block(int me);

  // Counts for the tests: panels claimed for staging from the host, and copied between devices.
  int64_t uploads() const;
  int64_t copies() const;

 private:
  enum State : int8_t { kFree, kClaimed, kReady };
  struct Panel {
    State state = kFree;
    int by = -1;  // the driver uploading it (kClaimed) or holding it (kReady)
    int preferred = -1;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Panel> p_;
  bool waiting_to_start(int d) const;            // under mu_
  bool may_start(const Panel& x, int me) const;  // under mu_: x is free and me need not wait for its uploader
  std::vector<int64_t> waits_for_;               // per driver: the panel it waits for its uploader to start, or -1
  std::vector<uint8_t> away_;                    // per driver: past its own block, or failed
  int64_t uploads_ = 0, copies_ = 0;
};

}  // namespace bom
