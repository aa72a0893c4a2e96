# How far a live output's sound is from its pictures: flashes (frames whose mean luma is over
# half) against beep onsets in the decoded audio (bench/live/av_sync.sh), each at its own pts
# as FFmpeg's showinfo and ashowinfo report them, as a player would place them. (By frame
# index and sample count it read 19 ms early on an MP4: there the first frame is stamped 0
# and the rest 21.3 ms later, after the AAC priming, and a constant-rate decode doubled the
# first frame.) Usage: av_offset.py FILE [FPS, unused]
import re, subprocess, sys, struct
f = sys.argv[1]
w, h = 64, 36
video = subprocess.run(["ffmpeg", "-v", "info", "-i", f, "-map", "0:v:0", "-vf", "scale=%d:%d,showinfo" % (w, h),
                        "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True)
frame_pts = [float(t) for t in re.findall(r"pts_time:\s*([0-9.\-]+)", video.stderr.decode())]
raw = video.stdout
n = min(len(raw) // (w * h), len(frame_pts))
lum = [sum(raw[i*w*h:(i+1)*w*h]) / (w*h) for i in range(n)]
flashes = [frame_pts[i] for i in range(n) if lum[i] > 128 and (i == 0 or lum[i-1] <= 128)]
sound = subprocess.run(["ffmpeg", "-v", "info", "-i", f, "-map", "0:a:0", "-af", "ashowinfo", "-ac", "1",
                        "-ar", "48000", "-f", "s16le", "-"], capture_output=True)
# Each decoded audio frame: the first sample's index in the PCM, and its pts.
chunks, first = [], 0
for t, count in re.findall(r"pts_time:\s*([0-9.\-]+).*?nb_samples:\s*(\d+)", sound.stderr.decode()):
    chunks.append((first, float(t)))
    first += int(count)
s = struct.unpack("<%dh" % (len(sound.stdout) // 2), sound.stdout)
def pts_of(sample):
    at = chunks[0]
    for chunk in chunks:
        if chunk[0] > sample:
            break
        at = chunk
    return at[1] + (sample - at[0]) / 48000
onsets, i = [], 0
while i < len(s):
    if abs(s[i]) > 3000:
        onsets.append(pts_of(i)); i += 24000
    else:
        i += 1
print("first picture at %.4f s, first sound at %.4f s; %d flashes, %d onsets"
      % (frame_pts[0] if frame_pts else 0, chunks[0][1] if chunks else 0, len(flashes), len(onsets)))
for t in flashes:
    if t < 2.5:
        continue  # The first beep comes while the browser's audio output starts up.
    near = [o for o in onsets if abs(o - t) < 0.5]
    if near:
        print("flash at %.3f s: sound %+.1f ms" % (t, (near[0] - t) * 1000))
