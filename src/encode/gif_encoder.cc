#include "encode/gif_encoder.h"

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
}

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <span>
#include <filesystem>
#include <string>
#include <vector>

#include "encode/av_util.h"
#include "encode/encoder.h"

namespace pagereel::encode {

namespace fs = std::filesystem;

namespace {

struct GraphFree {
  void operator()(AVFilterGraph* g) const { avfilter_graph_free(&g); }
};
struct FileClose {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// A filter graph with named buffer sources and one sink, described in FFmpeg's filter
// language. Sources are "in" (RGBA frames) and, when `with_palette`, "pal" (the palette).
class Graph {
 public:
  Status Build(const std::string& description, int width, int height, AVRational time_base,
               bool with_palette) {
    graph_.reset(avfilter_graph_alloc());
    if (!graph_) return ResourceExhaustedError("out of memory building a filter graph");
    char args[256];
    std::snprintf(args, sizeof args, "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d", width, height,
                  AV_PIX_FMT_RGBA, time_base.num, time_base.den);
    int err = avfilter_graph_create_filter(&in_, avfilter_get_by_name("buffer"), "in", args,
                                           nullptr, graph_.get());
    if (err < 0) return AvError("creating the GIF filter input", err);
    if (with_palette) {
      std::snprintf(args, sizeof args, "video_size=16x16:pix_fmt=%d:time_base=%d/%d",
                    AV_PIX_FMT_RGB32, time_base.num, time_base.den);
      err = avfilter_graph_create_filter(&pal_, avfilter_get_by_name("buffer"), "pal", args,
                                         nullptr, graph_.get());
      if (err < 0) return AvError("creating the GIF palette input", err);
    }
    err = avfilter_graph_create_filter(&out_, avfilter_get_by_name("buffersink"), "out", nullptr,
                                       nullptr, graph_.get());
    if (err < 0) return AvError("creating the GIF filter output", err);

    AVFilterInOut* outputs = avfilter_inout_alloc();
    outputs->name = av_strdup("in");
    outputs->filter_ctx = in_;
    if (with_palette) {
      AVFilterInOut* pal = avfilter_inout_alloc();
      pal->name = av_strdup("pal");
      pal->filter_ctx = pal_;
      outputs->next = pal;
    }
    AVFilterInOut* inputs = avfilter_inout_alloc();
    inputs->name = av_strdup("out");
    inputs->filter_ctx = out_;
    err = avfilter_graph_parse_ptr(graph_.get(), description.c_str(), &inputs, &outputs, nullptr);
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    if (err < 0) return AvError("setting up the GIF filters", err);
    err = avfilter_graph_config(graph_.get(), nullptr);
    if (err < 0) return AvError("configuring the GIF filters", err);
    return Status::Ok();
  }

  Status Push(AVFilterContext* source, AVFrame* frame) {
    // PUSH runs the graph now, so palettegen folds each frame into its statistics and lets
    // it go; without it the frames queue up in the graph until the end.
    int err = av_buffersrc_add_frame_flags(source, frame,
                                           AV_BUFFERSRC_FLAG_KEEP_REF | AV_BUFFERSRC_FLAG_PUSH);
    if (err < 0) return AvError("filtering a GIF frame", err);
    return Status::Ok();
  }

  // The next filtered frame, nullptr when none is ready yet or the graph has ended.
  Result<FramePtr> Pull() {
    FramePtr frame(av_frame_alloc());
    int err = av_buffersink_get_frame(out_, frame.get());
    if (err == AVERROR(EAGAIN) || err == AVERROR_EOF) return FramePtr();
    if (err < 0) return AvError("filtering a GIF frame", err);
    return frame;
  }

  AVFilterContext* in() { return in_; }
  AVFilterContext* pal() { return pal_; }

 private:
  std::unique_ptr<AVFilterGraph, GraphFree> graph_;
  AVFilterContext* in_ = nullptr;   // Owned by graph_.
  AVFilterContext* pal_ = nullptr;  // Owned by graph_.
  AVFilterContext* out_ = nullptr;  // Owned by graph_.
};

// A packed RGBA copy of a frame: the GIF writer needs the frame twice (palette statistics,
// then mapping), so it keeps its own.
struct RgbaCopy final : PreparedFrame {
  std::vector<uint8_t> rgba;
};

class RgbaCopier final : public Converter {
 public:
  RgbaCopier(int width, int height) : width_(width), height_(height) {}

  Result<std::unique_ptr<PreparedFrame>> Convert(const RgbaView& view) override {
    if (view.width != width_ || view.height != height_) {
      return InternalError("frame size does not match the GIF");
    }
    auto out = std::make_unique<RgbaCopy>();
    out->rgba = PackRgba(view.data, view.width, view.height, view.stride);
    return std::unique_ptr<PreparedFrame>(std::move(out));
  }

 private:
  const int width_;
  const int height_;
};

// Where the frames wait between the passes: beside the target (a partial name that stale
// partials are cleaned up by), or an unnamed file in the scratch folder for a film in memory.
Result<std::FILE*> OpenFrameStore(const FilmWriterOptions& options, fs::path* named) {
  if (options.to == WriteTo::kPath && options.scratch_dir.empty()) {
    *named = PartialPath(options.path).string() + ".frames";
    std::FILE* f = std::fopen(named->c_str(), "w+b");
    if (f == nullptr) return ErrnoError("creating " + named->string(), errno);
    return f;
  }
  std::error_code ec;
  fs::path folder = options.scratch_dir.empty() ? fs::temp_directory_path(ec)
                                                : fs::path(options.scratch_dir);
  int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("making a file for the GIF's frames in " + folder.string(), errno);
  std::FILE* f = ::fdopen(fd, "w+b");
  if (f == nullptr) {
    const int err = errno;
    ::close(fd);
    return ErrnoError("making a file for the GIF's frames in " + folder.string(), err);
  }
  return f;
}

class GifEncoder final : public Encoder {
 public:
  explicit GifEncoder(const FilmWriterOptions& options)
      : options_(options.film),
        output_(options.to == WriteTo::kMemory
                    ? Sink{Sink::Kind::kMemoryFile, "the GIF in memory",
                           [this](std::span<const uint8_t> bytes) {
                             bytes_.assign(bytes.begin(), bytes.end());
                             return Status::Ok();
                           }}
                    : Sink{Sink::Kind::kFile, options.path, nullptr}) {}

  ~GifEncoder() override {
    frames_.reset();
    std::error_code ec;
    if (!frames_path_.empty()) fs::remove(frames_path_, ec);
  }

  Status Init(const FilmWriterOptions& options) {
    time_base_ = AVRational{static_cast<int>(options_.fps.den), static_cast<int>(options_.fps.num)};
    PR_RETURN_IF_ERROR(stats_.Build("[in]palettegen=stats_mode=full[out]", options_.width,
                                    options_.height, time_base_, false));
    PR_ASSIGN_OR_RETURN(std::FILE* store, OpenFrameStore(options, &frames_path_));
    frames_.reset(store);
    frame_.reset(av_frame_alloc());
    frame_->format = AV_PIX_FMT_RGBA;
    frame_->width = options_.width;
    frame_->height = options_.height;
    int err = av_frame_get_buffer(frame_.get(), 0);
    if (err < 0) return AvError("allocating a frame", err);
    return Status::Ok();
  }

  std::unique_ptr<Converter> NewConverter() const override {
    return std::make_unique<RgbaCopier>(options_.width, options_.height);
  }

  Status WritePrepared(std::unique_ptr<PreparedFrame> prepared) override {
    auto* copy = dynamic_cast<RgbaCopy*>(prepared.get());
    if (copy == nullptr) return InternalError("a frame prepared for another encoder");
    int err = av_frame_make_writable(frame_.get());
    if (err < 0) return AvError("preparing a frame", err);
    const size_t row = static_cast<size_t>(options_.width) * 4;
    for (int y = 0; y < options_.height; ++y) {
      const uint8_t* src = copy->rgba.data() + static_cast<size_t>(y) * row;
      std::copy_n(src, row, frame_->data[0] + static_cast<size_t>(y) * frame_->linesize[0]);
    }
    if (std::fwrite(copy->rgba.data(), 1, copy->rgba.size(), frames_.get()) != copy->rgba.size()) {
      return ErrnoError("writing " + StoreName(), errno);
    }
    frame_->pts = count_++;
    return stats_.Push(stats_.in(), frame_.get());
  }

  Status Finish() override {
    // Pass 1 ends: the palette of the whole film.
    PR_RETURN_IF_ERROR(stats_.Push(stats_.in(), nullptr));
    PR_ASSIGN_OR_RETURN(FramePtr palette, stats_.Pull());
    if (!palette) return InternalError("palettegen produced no palette");
    if (std::fflush(frames_.get()) != 0) return ErrnoError("writing " + StoreName(), errno);

    // Pass 2: map every frame to it and encode.
    Graph map;
    PR_RETURN_IF_ERROR(map.Build("[in][pal]paletteuse=dither=sierra2_4a[out]", options_.width,
                                 options_.height, time_base_, true));
    palette->pts = 0;
    PR_RETURN_IF_ERROR(map.Push(map.pal(), palette.get()));
    PR_RETURN_IF_ERROR(map.Push(map.pal(), nullptr));

    auto configure = [&](AVCodecContext* c, AVDictionary**) {
      c->width = options_.width;
      c->height = options_.height;
      c->time_base = time_base_;
      c->framerate = AVRational{time_base_.den, time_base_.num};
      c->pix_fmt = AV_PIX_FMT_PAL8;
    };
    AVDictionary* mux_opts = nullptr;
    av_dict_set(&mux_opts, "loop", "0", 0);  // Loop forever, as GIFs on the web do.
    Status opened = output_.Open("gif", "gif", configure, &mux_opts);
    av_dict_free(&mux_opts);
    PR_RETURN_IF_ERROR(opened);

    std::rewind(frames_.get());
    const size_t row = static_cast<size_t>(options_.width) * 4;
    for (int64_t i = 0; i < count_; ++i) {
      int err = av_frame_make_writable(frame_.get());
      if (err < 0) return AvError("preparing a frame", err);
      for (int y = 0; y < options_.height; ++y) {
        if (std::fread(frame_->data[0] + static_cast<size_t>(y) * frame_->linesize[0], 1, row,
                       frames_.get()) != row) {
          return IoError("reading back " + StoreName());
        }
      }
      frame_->pts = i;
      PR_RETURN_IF_ERROR(map.Push(map.in(), frame_.get()));
      PR_RETURN_IF_ERROR(Drain(map));
    }
    PR_RETURN_IF_ERROR(map.Push(map.in(), nullptr));
    PR_RETURN_IF_ERROR(Drain(map));
    return output_.Finish();
  }

  const std::string& final_path() const override { return output_.target(); }
  std::string TakeBytes() override { return std::move(bytes_); }

 private:
  std::string StoreName() const {
    return frames_path_.empty() ? "the GIF's frames" : frames_path_.string();
  }

  Status Drain(Graph& graph) {
    for (;;) {
      PR_ASSIGN_OR_RETURN(FramePtr mapped, graph.Pull());
      if (!mapped) return Status::Ok();
      PR_RETURN_IF_ERROR(output_.Send(mapped.get()));
    }
  }

  const FilmSpec options_;
  std::string bytes_;  // A GIF in memory, once finished.
  AvOutput output_;
  fs::path frames_path_;  // Empty for an unnamed file.
  std::unique_ptr<std::FILE, FileClose> frames_;
  Graph stats_;
  FramePtr frame_;
  AVRational time_base_{1, 30};
  int64_t count_ = 0;
};

}  // namespace

Result<std::unique_ptr<Encoder>> OpenGifEncoder(const FilmWriterOptions& options) {
  auto encoder = std::make_unique<GifEncoder>(options);
  PR_RETURN_IF_ERROR(encoder->Init(options));
  return std::unique_ptr<Encoder>(std::move(encoder));
}

}  // namespace pagereel::encode
