// Where libav's own log lines go. By default libav writes them to stderr (at error level and
// worse, after QuietenLibav); a live show, whose stderr is an operator's terminal, routes
// them to a sink of its own instead (the as-run log), and a thread that wants the lines
// about its own work (an output connecting to a peer) keeps them in a LibavLogCapture to
// put in its error message.
//
// SetLibavLogSink and LibavLogCapture may be used from any thread; the sink is called on
// whichever thread libav logged from (encoder threads too), one line at a time.
#ifndef PAGEREEL_ENCODE_LIBAV_LOG_H_
#define PAGEREEL_ENCODE_LIBAV_LOG_H_

#include <functional>
#include <string>
#include <string_view>

namespace pagereel::encode {

// Lines libav logs go to `sink` (without the trailing newline, the object's address left
// out: "[srt] Connection to srt://127.0.0.1:9 failed: ...") instead of stderr; an empty
// function sends them to stderr again.
void SetLibavLogSink(std::function<void(std::string_view line)> sink);

// While it lives, the lines libav logs on the thread that made it are kept here as well
// (the newest ones). Not to be shared between threads.
class LibavLogCapture {
 public:
  LibavLogCapture();
  ~LibavLogCapture();
  LibavLogCapture(const LibavLogCapture&) = delete;
  LibavLogCapture& operator=(const LibavLogCapture&) = delete;

  // The newest line since Clear(), or "".
  std::string Last() const { return last_; }
  void Clear() { last_.clear(); }
  // For libav's log callback.
  void Keep(std::string_view line) { last_ = std::string(line); }

 private:
  LibavLogCapture* previous_;
  std::string last_;
};

}  // namespace pagereel::encode

#endif  // PAGEREEL_ENCODE_LIBAV_LOG_H_
