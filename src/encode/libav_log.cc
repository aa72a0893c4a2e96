#include "encode/libav_log.h"

extern "C" {
#include <libavutil/log.h>
}

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <regex>

#include "base/mutex.h"

namespace pagereel::encode {

namespace {

Mutex g_sink_mu;
std::function<void(std::string_view)>* g_sink GUARDED_BY(g_sink_mu) = nullptr;
thread_local LibavLogCapture* t_capture = nullptr;

void Callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (level > av_log_get_level()) return;
  char text[1024];
  int print_prefix = 1;
  va_list copy;
  va_copy(copy, vl);
  av_log_format_line2(avcl, level, fmt, copy, text, sizeof text, &print_prefix);
  va_end(copy);
  std::string line(text);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  // "[srt @ 0x55d0c0a1b2c0] ..." -> "[srt] ...": addresses mean nothing to a reader.
  static const std::regex kAddress(" @ 0x[0-9a-fA-F]+");
  line = std::regex_replace(line, kAddress, "");
  if (line.empty()) return;
  if (t_capture != nullptr) t_capture->Keep(line);
  MutexLock lock(&g_sink_mu);
  if (g_sink != nullptr) {
    (*g_sink)(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace

void SetLibavLogSink(std::function<void(std::string_view line)> sink) {
  static std::once_flag installed;
  std::call_once(installed, [] { av_log_set_callback(&Callback); });
  MutexLock lock(&g_sink_mu);
  delete g_sink;
  g_sink = sink ? new std::function<void(std::string_view)>(std::move(sink)) : nullptr;
}

LibavLogCapture::LibavLogCapture() : previous_(t_capture) { t_capture = this; }
LibavLogCapture::~LibavLogCapture() { t_capture = previous_; }

}  // namespace pagereel::encode
