// `pagereel live`: a show from a show file (TOML or JSON) or from command-line flags, run
// until SIGTERM/SIGINT or for a duration, with a status line on stderr as it runs and a
// summary at the end.
#ifndef PAGEREEL_APP_LIVE_APP_H_
#define PAGEREEL_APP_LIVE_APP_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "live/amcp_server.h"
#include "live/show.h"

namespace pagereel::app {

struct LiveRequest {
  std::string show_file;             // Empty: the show comes from the flags below.
  std::vector<std::string> sources;  // Pages, full frame, bottom layer first.
  std::vector<std::string> outputs;  // Files or URLs.
  std::string size = "1280x720";
  std::string fps = "25";
  double duration_seconds = 0;       // 0: until SIGTERM or SIGINT.
  // Clock settings; they override the show file's.
  std::optional<int> fifo_priority;
  std::optional<int> cpu;
  bool no_stagger = false;
  bool no_audio = false;  // The show without sound (overrides the show file's).
  std::optional<double> late_threshold_us;
  std::string as_run_log;
  double status_every_seconds = 5;   // A status line on stderr; 0: none.
  // HOST:PORT of the control and status server, overriding the show's; "none": no server.
  std::optional<std::string> control;
  // HOST:PORT of the AMCP server, overriding the show's; "none": no server. With --source,
  // source k (from 1) is AMCP layer k.
  std::optional<std::string> amcp;
};

// Runs the show; returns the exit code (0 ended as asked, 1 failed, 2 bad input).
int RunLive(const LiveRequest& request);

// The ticks --duration asks for at `fps`: 0 for no limit (0 s); kInvalidArgument for a
// duration that is negative, not a number, shorter than one frame (it would otherwise
// round to "no limit" and run until SIGTERM) or longer than ten years.
Result<int64_t> TicksForDuration(double seconds, Rational fps);

// The show the flags describe: each source full frame (the first opaque, the others
// transparent overlays), each output by its destination.
Result<live::ShowSpec> ShowFromFlags(const LiveRequest& request);

// What the AMCP server needs of a show: its address, token, channel and template folder,
// the sources with an amcp_layer, the picture format; refusals go to stderr (at most 20 a
// minute).
live::AmcpOptions AmcpOptionsFor(const live::ShowSpec& show);

// Reads a show file: TOML (Debian's toml++), or JSON when it ends in .json. Unknown keys,
// wrong types and bad values are refused with the file, line (TOML) and key.
Result<live::ShowSpec> LoadShowFile(const std::string& path);

// An output for a destination: udp://, srt:// (MPEG-TS), rtmp:// (FLV), a .m3u8 path (HLS),
// or a file: .mp4 (fragmented), .mkv, .ts. H.264 unless `codec` says prores or ffv1 (files
// in .mkv or .mov only).
Result<live::OutputSpec> OutputForDestination(const std::string& destination,
                                              const std::string& codec = "h264");

}  // namespace pagereel::app

#endif  // PAGEREEL_APP_LIVE_APP_H_
