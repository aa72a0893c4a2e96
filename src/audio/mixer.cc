#include "audio/mixer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "encode/av_util.h"

namespace pagereel::audio {

namespace {

using encode::AvError;
using encode::CodecContextFree;
using encode::FramePtr;
using encode::PacketFree;

// amix takes at most this many inputs; one is the film's silence.
constexpr size_t kMaxSpans = 32000;

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// Media bytes in memory as libavformat's input: a read cursor over shared bytes.
class MemoryInput {
 public:
  explicit MemoryInput(std::shared_ptr<const std::string> bytes) : bytes_(std::move(bytes)) {}

  static int Read(void* opaque, uint8_t* data, int size) {
    auto* in = static_cast<MemoryInput*>(opaque);
    if (in->pos_ >= in->bytes_->size()) return AVERROR_EOF;
    const size_t n = std::min(in->bytes_->size() - in->pos_, static_cast<size_t>(size));
    std::memcpy(data, in->bytes_->data() + in->pos_, n);
    in->pos_ += n;
    return static_cast<int>(n);
  }

  static int64_t Seek(void* opaque, int64_t offset, int whence) {
    auto* in = static_cast<MemoryInput*>(opaque);
    const int64_t size = static_cast<int64_t>(in->bytes_->size());
    int64_t to = 0;
    switch (whence & ~AVSEEK_FORCE) {
      case AVSEEK_SIZE: return size;
      case SEEK_SET: to = offset; break;
      case SEEK_CUR: to = static_cast<int64_t>(in->pos_) + offset; break;
      case SEEK_END: to = size + offset; break;
      default: return AVERROR(EINVAL);
    }
    if (to < 0) return AVERROR(EINVAL);
    in->pos_ = static_cast<size_t>(to);
    return to;
  }

 private:
  std::shared_ptr<const std::string> bytes_;
  size_t pos_ = 0;
};

// One pass of decoding a media file's best audio stream from memory, frame by frame.
class MediaDecoder {
 public:
  static Result<std::unique_ptr<MediaDecoder>> Open(std::shared_ptr<const std::string> bytes) {
    std::unique_ptr<MediaDecoder> d(new MediaDecoder(std::move(bytes)));
    PR_RETURN_IF_ERROR(d->Init());
    return d;
  }

  ~MediaDecoder() {
    avformat_close_input(&format_);
    if (io_ != nullptr) {
      av_freep(&io_->buffer);
      avio_context_free(&io_);
    }
  }

  // The next decoded frame (valid until the next call), or nullptr at the end. Packets
  // the decoder refuses (damaged media) are skipped, as players skip them.
  Result<AVFrame*> Next() {
    for (;;) {
      av_frame_unref(frame_.get());
      int err = avcodec_receive_frame(codec_.get(), frame_.get());
      if (err >= 0) return frame_.get();
      if (err == AVERROR_EOF) return nullptr;
      if (err != AVERROR(EAGAIN)) continue;  // A frame it could not decode.
      if (draining_) return nullptr;
      err = av_read_frame(format_, packet_.get());
      if (err == AVERROR_EOF) {
        draining_ = true;
        avcodec_send_packet(codec_.get(), nullptr);
        continue;
      }
      if (err < 0) return AvError("reading", err);
      if (packet_->stream_index == stream_) avcodec_send_packet(codec_.get(), packet_.get());
      av_packet_unref(packet_.get());
    }
  }

 private:
  explicit MediaDecoder(std::shared_ptr<const std::string> bytes) : input_(std::move(bytes)) {}

  Status Init() {
    constexpr int kBufferSize = 64 * 1024;
    auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
    io_ = buffer == nullptr ? nullptr
                            : avio_alloc_context(buffer, kBufferSize, 0, &input_, &MemoryInput::Read,
                                                 nullptr, &MemoryInput::Seek);
    format_ = avformat_alloc_context();
    if (io_ == nullptr || format_ == nullptr) {
      if (io_ == nullptr) av_free(buffer);
      return ResourceExhaustedError("no memory to read media");
    }
    format_->pb = io_;
    format_->flags |= AVFMT_FLAG_CUSTOM_IO;
    int err = avformat_open_input(&format_, nullptr, nullptr, nullptr);  // Frees format_ on failure.
    if (err < 0) return AvError("reading", err);
    err = avformat_find_stream_info(format_, nullptr);
    if (err < 0) return AvError("reading", err);
    const AVCodec* codec = nullptr;
    stream_ = av_find_best_stream(format_, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (stream_ == AVERROR_STREAM_NOT_FOUND) return InvalidArgumentError("it has no sound");
    if (stream_ < 0 || codec == nullptr) return AvError("finding a decoder", stream_);
    codec_.reset(avcodec_alloc_context3(codec));
    if (!codec_) return ResourceExhaustedError("no memory for a decoder");
    err = avcodec_parameters_to_context(codec_.get(), format_->streams[stream_]->codecpar);
    if (err >= 0) err = avcodec_open2(codec_.get(), codec, nullptr);
    if (err < 0) return AvError("opening its decoder", err);
    packet_.reset(av_packet_alloc());
    frame_.reset(av_frame_alloc());
    if (!packet_ || !frame_) return ResourceExhaustedError("no memory to decode media");
    return Status::Ok();
  }

  MemoryInput input_;
  AVIOContext* io_ = nullptr;         // Ours (custom I/O): freed after format_.
  AVFormatContext* format_ = nullptr;
  std::unique_ptr<AVCodecContext, CodecContextFree> codec_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
  FramePtr frame_;
  int stream_ = -1;
  bool draining_ = false;
};

// What the film's filters take in: the decoder's frames as they come, with their layout
// named (a decoder that gives only a channel count gets the usual layout for it).
void NameLayout(AVFrame* frame) {
  if (frame->ch_layout.order != AV_CHANNEL_ORDER_UNSPEC) return;
  const int channels = frame->ch_layout.nb_channels;
  av_channel_layout_uninit(&frame->ch_layout);
  av_channel_layout_default(&frame->ch_layout, channels);
}

}  // namespace

// The filter graph and one input per span.
struct Mixer::Graph {
  struct Input {
    std::string what;  // "sound 'id' (source), media abc...": for problems.
    Rational at;       // The span's start, for problems.
    std::shared_ptr<const std::string> bytes;
    bool loop = false;
    std::unique_ptr<MediaDecoder> decoder;
    FramePtr first;  // Decoded while opening; fed first.
    AVFilterContext* source = nullptr;  // abuffer, owned by the graph.
    int sample_rate = 0;
    int format = -1;
    int channels = 0;
    int64_t next_pts = 0;      // In samples of the media's rate, counted over every loop.
    int64_t pass_samples = 0;  // Decoded in this pass through the media.
    bool done = false;
  };

  ~Graph() { avfilter_graph_free(&graph); }

  AVFilterGraph* graph = nullptr;
  AVFilterContext* sink = nullptr;
  std::vector<Input> inputs;
  FramePtr pending;  // The frame being handed out by Read().
  int64_t pending_used = 0;

  // Gives the input the graph has asked most of one more frame (or its end).
  Status FeedOne(std::vector<Problem>* problems);
  Status Feed(Input& input, std::vector<Problem>* problems);
};

namespace {

// Closes an input's abuffer: its span is over (or cut short).
void CloseInput(AVFilterContext* source, int64_t pts) { av_buffersrc_close(source, pts, 0); }

// The filters that turn `span` of a media decoded with `channels` channels into the film's
// samples [start, start + length) at 48 kHz stereo float, with silence before `start`.
std::string Chain(const Span& span, int channels, int64_t start, int64_t length) {
  std::string f;
  // A mono source plays on both sides at full level, as browsers play it (swresample's
  // own mono-to-stereo matrix would lower it by 3 dB).
  if (channels == 1) f += "pan=stereo|c0=c0|c1=c0,";
  f += "aresample=" + std::to_string(encode::kSoundRate) +
       ",aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo";
  // Pts count samples from 0, so atrim's samples are media positions at 48 kHz.
  f += ",asetpts=N/SR/TB";
  const int64_t offset = SampleAt(span.offset);
  if (offset > 0) f += ",atrim=start_sample=" + std::to_string(offset) + ",asetpts=N/SR/TB";
  if (span.rate != 1) {
    if (span.preserves_pitch) {
      // atempo takes 0.5 to 100 at a time; slower rates are chained halvings.
      double rate = span.rate;
      while (rate < 0.5) {
        f += ",atempo=0.5";
        rate /= 0.5;
      }
      f += ",atempo=" + Number(rate);
    } else {
      const long long rate = std::llround(encode::kSoundRate * span.rate);
      f += ",asetrate=" + std::to_string(rate) + ",aresample=" + std::to_string(encode::kSoundRate);
    }
    f += ",asetpts=N/SR/TB";
  }
  if (span.volume != 1) f += ",volume=volume=" + Number(span.volume) + ":precision=float";
  f += ",atrim=end_sample=" + std::to_string(length);
  if (start > 0) f += ",adelay=delays=" + std::to_string(start) + "S:all=1";
  return f;
}

}  // namespace

Status Mixer::Graph::Feed(Input& input, std::vector<Problem>* problems) {
  auto cut_short = [&](const std::string& why) {
    problems->push_back({input.at, input.what + " was cut short: " + why});
    CloseInput(input.source, input.next_pts);
    input.done = true;
    return Status::Ok();
  };
  FramePtr frame = std::move(input.first);
  if (!frame) {
    Result<AVFrame*> next = input.decoder->Next();
    if (!next.ok()) return cut_short(std::string(next.status().message()));
    if (*next == nullptr) {
      if (!input.loop || input.pass_samples == 0) {
        CloseInput(input.source, input.next_pts);
        input.done = true;
        return Status::Ok();
      }
      // Looping: the media again from its start, numbered on from where it ended.
      Result<std::unique_ptr<MediaDecoder>> again = MediaDecoder::Open(input.bytes);
      if (!again.ok()) return cut_short(std::string(again.status().message()));
      input.decoder = std::move(again).value();
      input.pass_samples = 0;
      return Feed(input, problems);
    }
    frame.reset(av_frame_clone(*next));
    if (!frame) return ResourceExhaustedError("no memory for a decoded frame");
  }
  NameLayout(frame.get());
  if (frame->sample_rate != input.sample_rate || frame->format != input.format ||
      frame->ch_layout.nb_channels != input.channels) {
    return cut_short("its sound changes format part way (" + std::to_string(frame->sample_rate) +
                     " Hz, " + std::to_string(frame->ch_layout.nb_channels) + " channels)");
  }
  frame->pts = input.next_pts;
  input.next_pts += frame->nb_samples;
  input.pass_samples += frame->nb_samples;
  const int err = av_buffersrc_add_frame_flags(input.source, frame.get(), 0);
  if (err < 0 && err != AVERROR_EOF) return AvError("mixing " + input.what, err);
  return Status::Ok();
}

Status Mixer::Graph::FeedOne(std::vector<Problem>* problems) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Input* wanted = nullptr;
    unsigned most = 0;
    for (Input& input : inputs) {
      if (input.done) continue;
      const unsigned requests = av_buffersrc_get_nb_failed_requests(input.source);
      if (requests > most) {
        most = requests;
        wanted = &input;
      }
    }
    if (wanted != nullptr) return Feed(*wanted, problems);
    // No input was asked yet: let the graph ask for what it needs first.
    const int err = avfilter_graph_request_oldest(graph);
    if (err < 0 && err != AVERROR(EAGAIN) && err != AVERROR_EOF) return AvError("mixing the film's sound", err);
    if (err == AVERROR_EOF) return Status::Ok();
  }
  return InternalError("the film's sound mix stalled: no input was asked for more");
}

Mixer::Mixer(int64_t samples) : samples_(samples) {}
Mixer::~Mixer() = default;

Result<std::unique_ptr<Mixer>> Mixer::Open(const Timeline& timeline, const MediaStore& media,
                                           int64_t samples) {
  encode::QuietenLibav();
  std::unique_ptr<Mixer> mixer(new Mixer(samples));
  if (samples <= 0) return mixer;
  auto graph = std::make_unique<Graph>();
  graph->graph = avfilter_graph_alloc();
  if (graph->graph == nullptr) return ResourceExhaustedError("no memory for the sound mix");
  graph->graph->nb_threads = 1;  // Audio filters have no slice threads to use.

  // amix adds its inputs in order, and float sums depend on the order: sounds go in by
  // their first sample, then id, so the same sounds mix to the same samples however the
  // timeline lists them.
  std::vector<const Sound*> sounds;
  for (const Sound& sound : timeline.sounds) {
    if (!sound.spans.empty()) sounds.push_back(&sound);
  }
  std::stable_sort(sounds.begin(), sounds.end(), [](const Sound* a, const Sound* b) {
    const int64_t sa = SampleAt(a->spans.front().start);
    const int64_t sb = SampleAt(b->spans.front().start);
    return sa < sb || (sa == sb && a->id < b->id);
  });

  std::string chains;
  std::string mix_inputs = "[base]";
  for (const Sound* each : sounds) {
    const Sound& sound = *each;
    const std::string what = "sound '" + sound.id + "' (" + sound.source + "), media " + Short(sound.media);
    Result<std::shared_ptr<const std::string>> bytes = media.Get(sound.media);
    if (!bytes.ok()) {
      mixer->problems_.push_back(
          {sound.spans.front().start, what + " was left out: " + std::string(bytes.status().message())});
      continue;
    }
    for (const Span& span : sound.spans) {
      const int64_t start = SampleAt(span.start);
      const int64_t end = span.end ? std::min(SampleAt(*span.end), samples) : samples;
      if (start >= samples || end <= start || span.volume == 0) continue;  // Nothing to hear.
      Graph::Input input;
      input.what = what;
      input.at = span.start;
      input.bytes = *bytes;
      input.loop = span.loop;
      Result<std::unique_ptr<MediaDecoder>> decoder = MediaDecoder::Open(*bytes);
      Result<AVFrame*> first = decoder.ok() ? (*decoder)->Next() : Result<AVFrame*>(decoder.status());
      if (!first.ok() || *first == nullptr) {
        mixer->problems_.push_back(
            {span.start, what + " was left out: it could not be decoded" +
                             (first.ok() ? ": it holds no sound" : ": " + std::string(first.status().message()))});
        break;  // Its other spans would fail alike.
      }
      if (graph->inputs.size() == kMaxSpans) {
        mixer->problems_.push_back({span.start, what + " was left out: the film has more than " +
                                                    std::to_string(kMaxSpans) + " spans of sound"});
        break;
      }
      input.decoder = std::move(decoder).value();
      input.first.reset(av_frame_clone(*first));
      if (!input.first) return ResourceExhaustedError("no memory for a decoded frame");
      NameLayout(input.first.get());
      input.sample_rate = input.first->sample_rate;
      input.format = input.first->format;
      input.channels = input.first->ch_layout.nb_channels;

      const std::string name = "in" + std::to_string(graph->inputs.size());
      AVFilterContext* source =
          avfilter_graph_alloc_filter(graph->graph, avfilter_get_by_name("abuffer"), name.c_str());
      AVBufferSrcParameters* params = av_buffersrc_parameters_alloc();
      if (source == nullptr || params == nullptr) {
        av_free(params);
        return ResourceExhaustedError("no memory for the sound mix");
      }
      params->format = input.format;
      params->sample_rate = input.sample_rate;
      params->time_base = AVRational{1, input.sample_rate};
      av_channel_layout_copy(&params->ch_layout, &input.first->ch_layout);
      int err = av_buffersrc_parameters_set(source, params);
      av_channel_layout_uninit(&params->ch_layout);
      av_free(params);
      if (err >= 0) err = avfilter_init_str(source, nullptr);
      if (err < 0) return AvError("setting up the mix of " + what, err);
      input.source = source;

      const std::string label = "m" + std::to_string(graph->inputs.size());
      chains += "[" + name + "]" + Chain(span, input.channels, start, end - start) + "[" + label + "];";
      mix_inputs += "[" + label + "]";
      graph->inputs.push_back(std::move(input));
    }
  }
  mixer->spans_mixed_ = static_cast<int>(graph->inputs.size());

  // The film's length in silence first: amix ends with its first input (duration=first),
  // so the mix has exactly `samples` samples whatever the sounds do.
  const std::string n = std::to_string(samples);
  const std::string description =
      "anullsrc=r=48000:cl=stereo,atrim=end_sample=" + n + "[base];" + chains + mix_inputs +
      "amix=inputs=" + std::to_string(graph->inputs.size() + 1) +
      ":duration=first:normalize=0,atrim=end_sample=" + n +
      ",aformat=sample_fmts=flt:sample_rates=48000:channel_layouts=stereo[out]";

  int err = avfilter_graph_create_filter(&graph->sink, avfilter_get_by_name("abuffersink"), "out",
                                         nullptr, nullptr, graph->graph);
  if (err < 0) return AvError("setting up the sound mix", err);
  AVFilterInOut* outputs = nullptr;  // The graph's open outputs: our sources.
  for (size_t i = graph->inputs.size(); i-- > 0;) {
    AVFilterInOut* link = avfilter_inout_alloc();
    if (link == nullptr) break;
    link->name = av_strdup(("in" + std::to_string(i)).c_str());
    link->filter_ctx = graph->inputs[i].source;
    link->pad_idx = 0;
    link->next = outputs;
    outputs = link;
  }
  AVFilterInOut* inputs = avfilter_inout_alloc();  // Its open input: the sink.
  if (inputs != nullptr) {
    inputs->name = av_strdup("out");
    inputs->filter_ctx = graph->sink;
    inputs->pad_idx = 0;
  }
  err = avfilter_graph_parse_ptr(graph->graph, description.c_str(), &inputs, &outputs, nullptr);
  avfilter_inout_free(&inputs);
  avfilter_inout_free(&outputs);
  if (err >= 0) err = avfilter_graph_config(graph->graph, nullptr);
  if (err < 0) return AvError("setting up the sound mix (" + description.substr(0, 200) + ")", err);
  graph->pending.reset(av_frame_alloc());
  if (!graph->pending) return ResourceExhaustedError("no memory for the sound mix");
  mixer->graph_ = std::move(graph);
  return mixer;
}

Result<int64_t> Mixer::Read(float* out, int64_t count) {
  int64_t written = 0;
  Graph* g = graph_.get();
  while (written < count && produced_ < samples_) {
    AVFrame* frame = g->pending.get();
    if (g->pending_used < frame->nb_samples) {
      const int64_t n = std::min({count - written, frame->nb_samples - g->pending_used, samples_ - produced_});
      const auto* from = reinterpret_cast<const float*>(frame->data[0]) + g->pending_used * encode::kSoundChannels;
      std::copy_n(from, n * encode::kSoundChannels, out + written * encode::kSoundChannels);
      g->pending_used += n;
      written += n;
      produced_ += n;
      continue;
    }
    av_frame_unref(frame);
    g->pending_used = 0;
    const int err = av_buffersink_get_frame(g->sink, frame);
    if (err >= 0) continue;
    if (err == AVERROR(EAGAIN)) {
      PR_RETURN_IF_ERROR(g->FeedOne(&problems_));
      continue;
    }
    if (err == AVERROR_EOF) {
      return InternalError("the film's sound mix ended after " + std::to_string(produced_) + " of its " +
                           std::to_string(samples_) + " samples");
    }
    return AvError("mixing the film's sound", err);
  }
  return written;
}

}  // namespace pagereel::audio
