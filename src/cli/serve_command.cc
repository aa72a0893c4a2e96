// `pagereel serve`: the command line of the HTTP capture service. Every flag can also be
// given as an environment variable (PAGEREEL_LISTEN, PAGEREEL_BROWSERS...), as container
// users expect; a flag on the command line wins.
#include <CLI/CLI.hpp>

#include "app/serve_app.h"
#include "cli/commands.h"

namespace pagereel::cli {

void AddServeCommand(CLI::App& root, Action& run) {
  auto request = std::make_shared<app::ServeRequest>();
  CLI::App* cmd = root.add_subcommand(
      "serve", "Serve captures over HTTP: PNG, JPEG, WebP screenshots and PDFs of pages.");
  cmd->add_option("--listen", request->listen,
                  "HOST:PORT to listen on (numeric address; [::1]:8080 for IPv6). Loopback by "
                  "default: open it to the network on purpose.")
      ->envname("PAGEREEL_LISTEN")
      ->capture_default_str();
  cmd->add_option("--browsers", request->browsers,
                  "Browser processes (default: half the cores, at most one per GiB of free "
                  "memory).")
      ->envname("PAGEREEL_BROWSERS");
  cmd->add_option("--per-browser", request->per_browser,
                  "Captures one browser runs at once, each in its own browser context "
                  "(default 4). Capacity = browsers x per-browser.")
      ->envname("PAGEREEL_PER_BROWSER");
  cmd->add_option("--queue", request->queue,
                  "Captures that may wait for a free browser; beyond it: 503 with Retry-After.")
      ->envname("PAGEREEL_QUEUE")
      ->capture_default_str();
  cmd->add_option("--max-wait", request->max_wait_seconds,
                  "Seconds a capture may wait in line before it is answered 503.")
      ->envname("PAGEREEL_MAX_WAIT")
      ->capture_default_str();
  cmd->add_option("--timeout", request->timeout_seconds,
                  "Default seconds a page has to load and settle (a request's timeout= may "
                  "change it, up to --max-timeout); then 504.")
      ->envname("PAGEREEL_TIMEOUT")
      ->capture_default_str();
  cmd->add_option("--max-timeout", request->max_timeout_seconds,
                  "The longest timeout a request may ask for, in seconds.")
      ->envname("PAGEREEL_MAX_TIMEOUT")
      ->capture_default_str();
  cmd->add_option("--max-body-kb", request->max_body_kb,
                  "Largest request body (an HTML document or JSON), in KiB; beyond it: 413.")
      ->envname("PAGEREEL_MAX_BODY_KB")
      ->capture_default_str();
  cmd->add_option("--max-pdf-pages", request->max_pdf_pages,
                  "Most pages one PDF may have.")
      ->envname("PAGEREEL_MAX_PDF_PAGES")
      ->capture_default_str();
  cmd->add_option("--max-clip-frames", request->max_clip_frames,
                  "Most frames one GIF or clip may have (also bounded to 1280x720 x 150 "
                  "frames' worth of pixels).")
      ->envname("PAGEREEL_MAX_CLIP_FRAMES")
      ->capture_default_str();
  cmd->add_option("--max-clip-media-mb", request->max_clip_media_mb,
                  "Most media (MiB, in all) one MP4 or WebM clip fetches for its page's sound, "
                  "through the egress policy; a sound whose media would pass it is left out of "
                  "the clip and named in its answer.")
      ->envname("PAGEREEL_MAX_CLIP_MEDIA_MB")
      ->capture_default_str();
  cmd->add_option("--work-dir", request->work_dir,
                  "Folder for GIFs and clips while they are made (default: a new folder in "
                  "$TMPDIR, removed on exit).")
      ->envname("PAGEREEL_WORK_DIR");
  cmd->add_option("--recycle-after", request->recycle_after,
                  "Replace a browser after this many captures (0: never). It is drained "
                  "first: no capture fails for it.")
      ->envname("PAGEREEL_RECYCLE_AFTER")
      ->capture_default_str();
  cmd->add_option("--browser-memory-mb", request->browser_memory_mb,
                  "Replace a browser whose processes hold more resident memory than this "
                  "(0: no limit).")
      ->envname("PAGEREEL_BROWSER_MEMORY_MB")
      ->capture_default_str();
  cmd->add_option("--renderer-memory-mb", request->renderer_memory_mb,
                  "Kill a page's renderer that holds more resident memory than this while its "
                  "capture runs (checked four times a second); only that capture fails, 502 "
                  "(0: no limit; else 64 to 1048576).")
      ->envname("PAGEREEL_RENDERER_MEMORY_MB")
      ->capture_default_str();
  cmd->add_option("--allow", request->allow,
                  "Open more than public http(s) addresses to the pages: an origin "
                  "(http://127.0.0.1:8081, https://*.corp.example) or a CIDR block "
                  "(10.0.0.0/8). Repeat or separate with commas. By default every request a "
                  "page makes to loopback, private, link-local, CGNAT or cloud-metadata "
                  "addresses, or to file:, is refused, checked on the resolved address.")
      ->delimiter(',')
      ->envname("PAGEREEL_ALLOW");
  cmd->add_option("--resolve", request->resolve,
                  "Resolve a name by hand, as curl does: HOST:PORT:ADDR (PORT may be *). "
                  "The policy still checks ADDR.")
      ->delimiter(',')
      ->envname("PAGEREEL_RESOLVE");
  cmd->add_option("--token", request->token,
                  "Require 'Authorization: Bearer TOKEN' on every route but /healthz and "
                  "/readyz. Prefer the environment variable, which ps does not show.")
      ->envname("PAGEREEL_TOKEN");
  cmd->add_option("--grace", request->grace_seconds,
                  "On SIGTERM, seconds the captures in flight have to finish before the "
                  "browsers are killed.")
      ->envname("PAGEREEL_GRACE")
      ->capture_default_str();
  cmd->add_option("--browser", request->browser,
                  "chrome-headless-shell binary (default: $PAGEREEL_BROWSER or "
                  "/usr/lib/chromium/chromium-headless-shell).");
  cmd->footer(
      "Routes: GET|POST /v1/screenshot, /v1/pdf, /v1/gif, /v1/clip (MP4, WebM, with the page's sound); GET "
      "/healthz, /readyz, /metrics (Prometheus), /v1/status. docs/serve.md lists every "
      "parameter.\n\n"
      "Examples:\n"
      "  pagereel serve\n"
      "  curl -o shot.png 'http://127.0.0.1:8080/v1/screenshot?url=https://example.com&width=1280&height=720'\n"
      "  curl -o doc.pdf --data-binary @invoice.html -H 'Content-Type: text/html' "
      "'http://127.0.0.1:8080/v1/pdf?format=A4'\n"
      "  curl -o chart.gif 'http://127.0.0.1:8080/v1/gif?url=https://example.com/chart&width=640&height=360&duration=2'\n"
      "  PAGEREEL_LISTEN=0.0.0.0:8080 PAGEREEL_TOKEN=secret pagereel serve --browsers 2");
  cmd->callback([request, &run] { run = [request] { return app::RunServe(*request); }; });
}

}  // namespace pagereel::cli
