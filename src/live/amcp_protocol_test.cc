// AMCP as pagereel reads it: lines, CasparCG's tokens, requests, replies, and what a page is
// given (INVOKE calls, template data, template names), on the lines CasparCG clients and
// SPX actually send.
#include "live/amcp_protocol.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/scratch_dir.h"

namespace pagereel::live::amcp {
namespace {

namespace fs = std::filesystem;
using Tokens = std::vector<std::string>;

TEST(AmcpLinesTest, LinesEndInCrLfOrLfAndALongOneIsNoticed) {
  LineSplitter lines(16);
  lines.Feed("VERSION\r\nINFO");
  EXPECT_EQ(lines.Next(), "VERSION");
  EXPECT_EQ(lines.Next(), std::nullopt);  // "INFO" is not finished yet.
  lines.Feed("\nCG 1-20 PLAY 1\r");
  EXPECT_EQ(lines.Next(), "INFO");
  EXPECT_EQ(lines.Next(), std::nullopt);
  lines.Feed("\n");
  EXPECT_EQ(lines.Next(), "CG 1-20 PLAY 1");
  EXPECT_FALSE(lines.overflowed());
  lines.Feed(std::string(17, 'x'));
  EXPECT_TRUE(lines.overflowed());
  EXPECT_EQ(lines.Next(), std::nullopt);
  LineSplitter exact(16);
  exact.Feed(std::string(16, 'x') + "\r\n");
  EXPECT_FALSE(exact.overflowed());
  EXPECT_EQ(exact.Next(), std::string(16, 'x'));
}

TEST(AmcpTokensTest, AsCasparCGCutsThem) {
  EXPECT_EQ(Tokenize("CG 1-20 ADD 1 \"lower third\" 1"),
            (Tokens{"CG", "1-20", "ADD", "1", "lower third", "1"}));
  EXPECT_EQ(Tokenize("  PLAY   1-10  "), (Tokens{"PLAY", "1-10"}));
  EXPECT_EQ(Tokenize("CG 1 UPDATE 1 \"\""), (Tokens{"CG", "1", "UPDATE", "1", ""}));
  // SPX's XML data: escaped quotes inside the quoted token.
  EXPECT_EQ(Tokenize(R"x(CG 1-20 UPDATE 1 "<templateData><componentData id=\"f0\"><data id=\"text\" value=\"Ada\"/></componentData></templateData>")x"),
            (Tokens{"CG", "1-20", "UPDATE", "1",
                    R"x(<templateData><componentData id="f0"><data id="text" value="Ada"/></componentData></templateData>)x"}));
  // casparcg-connection escapes \ $ and " in JSON.
  EXPECT_EQ(Tokenize(R"x(CG 1-20 UPDATE 1 "{\"f0\":\"5 \$ \\ n\"}")x"),
            (Tokens{"CG", "1-20", "UPDATE", "1", R"x({"f0":"5 $ \ n"})x"}));
  EXPECT_EQ(Tokenize(R"x(CG 1-20 INVOKE 1 "setScore(\"home\", 3)")x"),
            (Tokens{"CG", "1-20", "INVOKE", "1", R"x(setScore("home", 3))x"}));
  // A parenthesised list is one token, quotes kept.
  EXPECT_EQ(Tokenize(R"x(CG 1-20 INVOKE 1 go("a b", 2) x)x"),
            (Tokens{"CG", "1-20", "INVOKE", "1", R"x(go("a b", 2))x", "x"}));
  EXPECT_EQ(Tokenize("A \"line\\nbreak\""), (Tokens{"A", "line\nbreak"}));
  EXPECT_EQ(Tokenize("unclosed \"quote and more"), (Tokens{"unclosed", "quote and more"}));
  EXPECT_EQ(Tokenize(")))((("), (Tokens{")))((("}));
  EXPECT_EQ(Tokenize(""), Tokens{});
  EXPECT_EQ(Tokenize("trailing\\"), (Tokens{"trailing"}));
}

TEST(AmcpParseTest, CommandsChannelLayersAndRequestIds) {
  Parsed p = Parse("CG 1-20 ADD 1 \"ticker\" 1 \"{}\"");
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->command, "CG ADD");
  EXPECT_EQ(p.request->channel, 1);
  EXPECT_EQ(p.request->layer, 20);
  EXPECT_EQ(p.request->params, (Tokens{"1", "ticker", "1", "{}"}));

  p = Parse("req abc cg 1 play 0");
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->request_id, "abc");
  EXPECT_EQ(p.request->command, "CG PLAY");
  EXPECT_EQ(p.request->channel, 1);
  EXPECT_FALSE(p.request->layer);

  p = Parse("INFO");
  ASSERT_TRUE(p.request);
  EXPECT_EQ(p.request->command, "INFO");
  EXPECT_FALSE(p.request->channel);
  p = Parse("INFO 1-20");
  EXPECT_EQ(p.request->command, "INFO");
  EXPECT_EQ(p.request->layer, 20);
  EXPECT_EQ(Parse("INFO PATHS").request->command, "INFO PATHS");
  EXPECT_EQ(Parse("LOCK 1 ACQUIRE s3cret").request->params, (Tokens{"1", "ACQUIRE", "s3cret"}));
  EXPECT_EQ(Parse("PING 42").request->params, (Tokens{"42"}));
  EXPECT_EQ(Parse("/ VERSION").request->command, "VERSION");
  EXPECT_EQ(Parse(" CLEAR 2").request->channel, 2);  // SPX's " CLEAR 2".

  EXPECT_FALSE(Parse("").request);
  EXPECT_FALSE(Parse("").error);
  EXPECT_FALSE(Parse("   ").error);

  p = Parse("FLY 1-10");
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, Code::kError);
  p = Parse("REQ 7 FLY");
  EXPECT_EQ(p.error->request_id, "7");
  p = Parse("CG 1-20 ADD 1 \"ticker\"");  // No play-on-load flag.
  ASSERT_TRUE(p.error);
  EXPECT_EQ(p.error->code, Code::kMissing);
  EXPECT_EQ(p.error->command, "CG ADD");
  p = Parse("PLAY");  // No channel.
  EXPECT_EQ(p.error->code, Code::kMissing);
  p = Parse("CG 99999999999-1 PLAY 1");  // Not a channel (too many digits): not understood.
  EXPECT_EQ(p.error->code, Code::kError);
  EXPECT_EQ(Parse("REQ").error->code, Code::kMissing);
}

TEST(AmcpParseTest, HttpIsToldApart) {
  EXPECT_TRUE(LooksLikeHttp("POST / HTTP/1.1"));
  EXPECT_TRUE(LooksLikeHttp("GET /x?y HTTP/1.0"));
  EXPECT_TRUE(LooksLikeHttp("Host: 127.0.0.1:5250"));
  EXPECT_TRUE(LooksLikeHttp("Content-Type: text/plain"));
  EXPECT_FALSE(LooksLikeHttp("CG 1-20 ADD 1 \"http://h/x.html\" 1"));
  EXPECT_FALSE(LooksLikeHttp("PLAY 1-10 [HTML] https://example.com/"));
  EXPECT_FALSE(LooksLikeHttp("VERSION"));
}

TEST(AmcpRepliesTest, AsClientsReadThem) {
  EXPECT_EQ(Reply("", Code::kOk, "CG"), "202 CG OK\r\n");
  EXPECT_EQ(Reply("a1", Code::kOk, "PLAY"), "RES a1 202 PLAY OK\r\n");
  EXPECT_EQ(Reply("", Code::kInfoOne, "VERSION", {"2.3.0 pagereel"}),
            "201 VERSION OK\r\n2.3.0 pagereel\r\n");
  EXPECT_EQ(Reply("", Code::kInfoMany, "INFO", {"1 720p2500 PLAYING"}),
            "200 INFO OK\r\n1 720p2500 PLAYING\r\n\r\n");
  EXPECT_EQ(Reply("", Code::kNotFound, "CG ADD"), "404 CG ADD FAILED\r\n");
  EXPECT_EQ(Reply("", Code::kMissing, "CG ADD"), "402 CG ADD ERROR\r\n");
  EXPECT_EQ(Reply("", Code::kAccess, "CG PLAY"), "503 CG PLAY FAILED\r\n");
  EXPECT_EQ(ErrorReply("", "FLY 1"), "400 ERROR\r\nFLY 1\r\n");
  // What is echoed is printable UTF-8, cut.
  EXPECT_EQ(ErrorReply("", "A\xff\r\x01" "B"), "400 ERROR\r\nA???B\r\n");
  EXPECT_EQ(ErrorReply("", std::string(300, 'x')).size(), std::string("400 ERROR\r\n").size() + 205);
}

TEST(AmcpInvokeTest, NamesAndJsonArgumentsOnly) {
  EXPECT_EQ(*InvokeExpression("next"), "next()");
  EXPECT_EQ(*InvokeExpression("\"next()\""), "next()");
  EXPECT_EQ(*InvokeExpression("gfx.setScore(\"home\", 3)"), "gfx.setScore(\"home\",3)");
  EXPECT_EQ(*InvokeExpression("f({\"a\":[1,2]})"), "f({\"a\":[1,2]})");
  for (const char* bad : {"alert(1);x()", "f(1)(2)", "f('single')", "f(", "document.body.remove()x",
                          "f(a)", "", "1x()", "f(1); g()"}) {
    EXPECT_FALSE(InvokeExpression(bad).ok()) << bad;
  }
  EXPECT_NE(std::string(InvokeExpression("f('x')").status().message()).find("JSON"),
            std::string::npos);
}

TEST(AmcpTemplateDataTest, XmlOrJsonAsOneString) {
  EXPECT_EQ(*TemplateData("<templateData/>"), "<templateData/>");
  EXPECT_EQ(*TemplateData(" \"{\"f0\":\"x\"}\" "), "{\"f0\":\"x\"}");
  EXPECT_EQ(*TemplateData(""), "");
  EXPECT_EQ(TemplateData("stored_set").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TemplateData("{\xff}").status().code(), StatusCode::kInvalidArgument);
}

TEST(AmcpTemplateUrlTest, NamesAreFoundInTheFolderAndNeverOutsideIt) {
  testing::ScratchDir dir("amcp-templates");
  const fs::path root = dir.path() / "templates";
  fs::create_directories(root / "Sports" / "Score");
  std::ofstream(root / "ticker.html") << "t";
  std::ofstream(root / "Sports" / "Score" / "index.html") << "s";
  std::ofstream(dir.path() / "secret.html") << "no";
  const std::string folder = root.string();

  Result<std::string> url = TemplateUrl("ticker", folder);
  ASSERT_TRUE(url.ok()) << url.status().ToString();
  EXPECT_TRUE(url->starts_with("file://")) << *url;
  EXPECT_TRUE(url->ends_with("/templates/ticker.html")) << *url;
  EXPECT_TRUE(TemplateUrl("TICKER", folder)->ends_with("/ticker.html"));
  EXPECT_TRUE(TemplateUrl("ticker.html", folder).ok());
  EXPECT_TRUE(TemplateUrl("sports/score", folder)->ends_with("/Sports/Score/index.html"));
  EXPECT_TRUE(TemplateUrl("SPORTS\\SCORE", folder).ok());
  EXPECT_EQ(*TemplateUrl("http://127.0.0.1:8000/t.html", folder), "http://127.0.0.1:8000/t.html");
  EXPECT_EQ(TemplateUrl("nothing", folder).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(TemplateUrl("../secret", folder).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TemplateUrl("/etc/passwd", folder).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TemplateUrl("javascript://x", folder).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TemplateUrl("ticker", "").status().code(), StatusCode::kNotFound);

  EXPECT_EQ(ListTemplates(folder), (Tokens{"Sports/Score", "ticker"}));
}

TEST(AmcpFormatTest, ChannelFormatsAsCasparCGNamesThem) {
  EXPECT_EQ(FormatName(1280, 720, 25), "720p2500");
  EXPECT_EQ(FormatName(1920, 1080, 60000.0 / 1001), "1080p5994");
  EXPECT_EQ(XmlEscape("a<b & \"c\"\n"), "a&lt;b &amp; &quot;c&quot; ");
}

}  // namespace
}  // namespace pagereel::live::amcp
