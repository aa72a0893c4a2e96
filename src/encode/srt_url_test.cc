#include "encode/srt_url.h"

#include <gtest/gtest.h>

namespace pagereel::encode {
namespace {

TEST(SrtUrlTest, FfmpegsNamesAndUnitsBecomeSrtsSettings) {
  Result<SrtUrl> url = ParseSrtUrl(
      "srt://example.org:9000?latency=250000&snddropdelay=40000&maxbw=1000000&tlpktdrop=0&"
      "streamid=%23!::r=live/show,m=publish&peeridletimeo=800&pkt_size=1316");
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->host, "example.org");
  EXPECT_EQ(url->port, 9000);
  EXPECT_FALSE(url->listener);
  EXPECT_EQ(SrtLatencyMs(*url), 250);
  EXPECT_EQ(url->peer_idle_ms, 800);
  EXPECT_EQ(url->streamid, "#!::r=live/show,m=publish");
  const std::vector<std::pair<std::string, int64_t>> flags = {
      {"SNDDROPDELAY", 40}, {"MAXBW", 1000000}, {"TLPKTDROP", 0}};
  EXPECT_EQ(url->flags, flags);
}

TEST(SrtUrlTest, TheUrlsOwnOptionsWinOverTheCallers) {
  Result<SrtUrl> url = ParseSrtUrl("srt://127.0.0.1:9?linger=3", {{"linger", "1"}, {"latency", "500000"}});
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_EQ(url->linger_s, 3);
  EXPECT_EQ(SrtLatencyMs(*url), 500);
  EXPECT_EQ(url->peer_idle_ms, kSrtPeerIdleMs);
  EXPECT_EQ(SrtLatencyMs(*ParseSrtUrl("srt://127.0.0.1:9")), 120);
}

TEST(SrtUrlTest, HostsPortsAndModes) {
  Result<SrtUrl> v6 = ParseSrtUrl("srt://[::1]:7000?mode=listener");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->listener);
  Result<SrtUrl> any = ParseSrtUrl("srt://:7000?mode=listener");
  ASSERT_TRUE(any.ok());
  EXPECT_EQ(any->host, "");
  EXPECT_FALSE(ParseSrtUrl("srt://:7000").ok());  // A caller needs a host.
  EXPECT_FALSE(ParseSrtUrl("srt://h:0").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://h:65536").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://h").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://[::1:7000").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://h:7000?streamid=%zz").ok());
  EXPECT_FALSE(ParseSrtUrl("udp://h:7000").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://h:7000?mode=rendezvous").ok());
  EXPECT_FALSE(ParseSrtUrl("srt://h:7000?peeridletimeo=5").ok());  // Below 100 ms.
}

}  // namespace
}  // namespace pagereel::encode
