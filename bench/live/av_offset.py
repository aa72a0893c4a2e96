# How far a live output's sound is from its pictures: flashes (frames whose mean luma is over
# half) against beep onsets in the decoded audio (bench/live/av_sync.sh). Usage: av_offset.py FILE FPS
import subprocess, sys, struct
f = sys.argv[1]
fps = float(sys.argv[2])
w, h = 64, 36
raw = subprocess.run(["ffmpeg", "-v", "error", "-i", f, "-vf", "scale=%d:%d" % (w, h), "-f", "rawvideo", "-pix_fmt", "gray", "-"], stdout=subprocess.PIPE).stdout
n = len(raw) // (w * h)
lum = [sum(raw[i*w*h:(i+1)*w*h]) / (w*h) for i in range(n)]
flashes = [i for i in range(n) if lum[i] > 128 and (i == 0 or lum[i-1] <= 128)]
pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", f, "-ac", "1", "-ar", "48000", "-f", "s16le", "-"], stdout=subprocess.PIPE).stdout
s = struct.unpack("<%dh" % (len(pcm) // 2), pcm)
onsets = []
i = 0
while i < len(s):
    if abs(s[i]) > 3000:
        onsets.append(i); i += 24000
    else:
        i += 1
# The video's first pts and the audio's first pts (as a player would align them).
def start(sel):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", sel, "-show_entries", "stream=start_time", "-of", "csv=p=0", f], stdout=subprocess.PIPE, text=True).stdout.strip()
    return float(out or 0)
vs, as_ = start("v:0"), start("a:0")
print("video start %.4f audio start %.4f; %d flashes, %d onsets" % (vs, as_, len(flashes), len(onsets)))
for fl in flashes:
    t = vs + fl / fps
    if t < 2.5:
        continue  # The first beep comes while the browser's audio output starts up.
    near = [as_ + o / 48000 for o in onsets if abs(as_ + o / 48000 - t) < 0.5]
    if near:
        print("flash at %.3f s: sound %+.1f ms" % (t, (near[0] - t) * 1000))
