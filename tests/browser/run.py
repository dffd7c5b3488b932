#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Flame graphs in a real browser: `profile flamegraph` renders known folded stacks, headless
Chromium (Debian's chromium) opens the SVG, and the tests click, hover, type and search as a
person would, through the DevTools protocol. Also: hostile frame names give well-formed XML.

`make test` runs it after the unit and integration tests. Each test prints one line; the last
line is "browser: N passed, N failed".
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import traceback
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

SVGNS = "{http://www.w3.org/2000/svg}"
TESTS = []
ARGS = None
BROWSER = None

# 100 samples: a = 50 (x 30, y 20), b = 40 (x 25, z 15), c = 10
KNOWN = """\
# a known profile
main;a;x 30
main;a;y 20
main;b;x 25
main;b;z 15
main;c 10
"""


def test(fn):
    TESTS.append(fn)
    return fn


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def render(text, *opts, name="graph"):
    """Render folded TEXT (str or bytes) with `profile flamegraph OPTS`; the SVG's path."""
    folded = os.path.join(ARGS.workdir, name + ".folded")
    svg = os.path.join(ARGS.workdir, name + ".svg")
    with open(folded, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
    p = subprocess.run([ARGS.profile, "flamegraph", *opts, "-o", svg, folded],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, f"profile flamegraph exited {p.returncode}: {p.stderr}")
    return svg


def profile_workload(name, out, *opts, args=()):
    """Workload NAME (ARGS its arguments) profiled with OPTS into OUT in the work directory:
    its path."""
    wl = os.path.join(ARGS.build, "tests", "workloads", name)
    expect(os.access(wl, os.X_OK), f"{wl} is missing (make test builds it)")
    path = os.path.join(ARGS.workdir, out)
    p = subprocess.run([ARGS.profile, *opts, "-o", path, "--", wl, *args],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, f"profile exited {p.returncode}: {p.stderr}")
    return path


def browser():
    global BROWSER
    if BROWSER is None:
        expect(cdp.find_chromium(), "chromium is not installed (scripts/deps.sh installs it)")
        BROWSER = cdp.Browser()
    return BROWSER


def open_svg(path):
    b = browser()
    b.open("file://" + os.path.abspath(path))
    expect(b.eval("typeof fg_init === 'function' && !!document.getElementById('frames')"),
           "the SVG's script did not load")
    return b


FRAME_JS = """(function (title, nth) {
  var t = [].filter.call(document.querySelectorAll('#frames title'),
                         function (e) { return e.textContent.indexOf(title) === 0; })[nth || 0];
  if (!t) return null;
  var g = t.parentNode, r = g.children[1], box = r.getBoundingClientRect();
  var text = g.querySelector(':scope > text');
  return {x: parseFloat(r.getAttribute('x')), w: parseFloat(r.getAttribute('width')),
          cx: box.left + box.width / 2, cy: box.top + box.height / 2,
          shown: box.width > 0 && getComputedStyle(g).display !== 'none',
          parent: g.classList.contains('parent'), fill: r.getAttribute('fill'),
          label: text ? text.textContent : ''};
})(%s, %d)"""


def frame(b, title, nth=0):
    import json
    f = b.eval(FRAME_JS % (json.dumps(title), nth))
    expect(f is not None, f"no frame titled {title!r}")
    return f


def text_of(b, elem_id):
    return b.eval(f"document.getElementById('{elem_id}').textContent")


def visible(b, elem_id):
    return b.eval(f"getComputedStyle(document.getElementById('{elem_id}')).display !== 'none'")


def center(b, elem_id):
    return b.eval(f"(function () {{ var r = document.getElementById('{elem_id}')"
                  ".getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()")


# --- the tests -------------------------------------------------------------------------------
@test
def click_zooms_frame_to_full_width():
    b = open_svg(render(KNOWN))
    a = frame(b, "a (50 samples, 50.00%)")
    expect(abs(a["w"] - 590) < 0.2, f"a is {a['w']} px wide before the zoom, expected 590")
    b.click(a["cx"], a["cy"])
    a = frame(b, "a (")
    expect(abs(a["x"] - 10) < 0.2 and abs(a["w"] - 1180) < 0.2,
           f"after a click, a is at {a['x']} width {a['w']}, expected 10 and 1180")
    x = frame(b, "x (30 samples")
    expect(abs(x["w"] - 708) < 0.2, f"x (30 of a's 50) is {x['w']} px wide, expected 708")
    expect(frame(b, "main (")["parent"] and frame(b, "all (")["parent"],
           "ancestors are not dimmed")
    expect(not frame(b, "b (")["shown"] and not frame(b, "c (")["shown"],
           "frames outside the zoomed one are still shown")
    expect(visible(b, "unzoom"), "Reset Zoom is not shown after a zoom")
    expect(len(x["label"]) > 0, "a widened frame has no label")


@test
def reset_zoom_restores():
    b = open_svg(render(KNOWN))
    before = {t: frame(b, t) for t in ("a (", "b (", "x (30", "main (")}
    a = before["a ("]
    b.click(a["cx"], a["cy"])
    expect(abs(frame(b, "a (")["w"] - 1180) < 0.2, "the zoom did not happen")
    b.click(*center(b, "unzoom"))
    for t, f in before.items():
        now = frame(b, t)
        expect(abs(now["x"] - f["x"]) < 0.05 and abs(now["w"] - f["w"]) < 0.05 and now["shown"]
               and not now["parent"], f"{t}: {now} after Reset Zoom, was {f}")
    expect(not visible(b, "unzoom"), "Reset Zoom still shown after it was clicked")


@test
def search_shows_matched_percentage():
    b = open_svg(render(KNOWN))
    # the Search button, then the prompt: x under a (30) and under b (25)
    b.answer_prompt("^x$", b.click(*center(b, "search"), wait=False))
    expect(text_of(b, "matched") == "Matched: 55.0%",
           f"search ^x$ shows {text_of(b, 'matched')!r}, expected 'Matched: 55.0%'")
    expect(frame(b, "x (30")["fill"] == "rgb(230,0,230)", "matches are not highlighted")
    expect(frame(b, "a (")["fill"] != "rgb(230,0,230)", "a non-match is highlighted")
    # Ctrl-F while searching resets; Ctrl-F again asks: nested matches (x inside a) count once
    b.key("f", "KeyF", 70, modifiers=2)
    expect(not visible(b, "matched"), "Ctrl-F did not reset the search")
    b.answer_prompt("^(a|x)$", b.key("f", "KeyF", 70, modifiers=2, wait=False))
    expect(text_of(b, "matched") == "Matched: 75.0%",
           f"search ^(a|x)$ shows {text_of(b, 'matched')!r}, expected 75.0% (a 50 + b's x 25)")
    b.click(*center(b, "search"))
    expect(not visible(b, "matched") and frame(b, "x (30")["fill"] != "rgb(230,0,230)",
           "Reset Search left highlights")


@test
def hover_shows_details_and_tooltip():
    b = open_svg(render(KNOWN, "--countname", "ticks", "--nametype", "Frame:"))
    a = frame(b, "a (")
    b.hover(a["cx"], a["cy"])
    d = text_of(b, "details")
    expect(d == "Frame: a (50 ticks, 50.00%)", f"details line on hover: {d!r}")
    title = b.eval("document.querySelector('#frames g g title').textContent")
    expect(re.fullmatch(r"main \(100 ticks, 100\.00%\)", title), f"tooltip title: {title!r}")


@test
def labels_truncated_to_fit():
    long = "very_long_function_name_" * 10
    b = open_svg(render(f"main;{long} 1\nmain;other 9\n"))
    f = frame(b, long[:40])
    expect(f["label"].endswith("..") and len(f["label"]) * 7.08 <= f["w"] + 0.1,
           f"label {f['label']!r} in a frame {f['w']} px wide")
    b.click(f["cx"], f["cy"])
    f = frame(b, long[:40])
    expect(f["label"].endswith("..") and len(f["label"]) > 100,
           f"zoomed label {f['label']!r} not refitted to {f['w']} px")


HOSTILE = [
    "<script>window.pwned=1</script>",
    "a&b \"quoted\" 'single' <tag attr=\"x\">",
    "]]><script>window.pwned=2</script>",
    "bad\xff\xfeutf8\xc3",
    "x" * 20000,
]


@test
def hostile_names_stay_text():
    lines = b"".join(b"main;" + n.encode("latin-1") + b" 3\n" for n in HOSTILE)
    svg = render(lines, "--title", "<b>&'\"", name="hostile")
    root = ET.parse(svg).getroot()      # raises on malformed XML
    titles = [t.text for t in root.iter(SVGNS + "title")]
    for want in ("<script>window.pwned=1</script>", "a&b \"quoted\" 'single' <tag attr=\"x\">",
                 "]]><script>window.pwned=2</script>", "bad\ufffd\ufffdutf8\ufffd"):
        expect(any(t.startswith(want + " (3 samples") for t in titles),
               f"no frame titled {want!r} as text")
    long = [t for t in titles if t.startswith("xxxx")]
    expect(len(long) == 1 and 2000 <= len(long[0]) < 2100 and "..." in long[0],
           f"the 20,000-character name is not bounded: {len(long[0]) if long else None}")
    expect([e.tag for e in root.iter() if e.tag.endswith("script")] == [SVGNS + "script"],
           "a frame name became an element")
    title = [t.text for t in root.iter(SVGNS + "text") if t.get("id") == "title"]
    expect(title == ["<b>&'\""], f"title text: {title}")
    b = open_svg(svg)
    expect(b.eval("typeof window.pwned") == "undefined", "a frame name ran as script")
    expect(b.eval("document.querySelectorAll('#frames g').length") == 2 + len(HOSTILE),
           "frames missing in the browser")


@test
def bad_input_and_options_one_sentence():
    bad = os.path.join(ARGS.workdir, "bad.folded")
    with open(bad, "w") as f:
        f.write("a;b 1\n\na;b;c\n")
    p = subprocess.run([ARGS.profile, "flamegraph", bad], capture_output=True, text=True)
    expect(p.returncode == 1 and f"{bad}:3:" in p.stderr and p.stderr.count("\n") == 1,
           f"malformed line: exit {p.returncode}, {p.stderr!r}")
    p = subprocess.run([ARGS.profile, "flamegraph", "/nonexistent.folded"], capture_output=True,
                       text=True)
    expect(p.returncode == 1 and "/nonexistent.folded" in p.stderr, f"missing file: {p.stderr!r}")
    for opt in (["--width", "wide"], ["--colors", "pink"], ["--minwidth", "x%"], ["--bogus"]):
        p = subprocess.run([ARGS.profile, "flamegraph", *opt, bad], capture_output=True, text=True)
        expect(p.returncode == 2 and p.stderr.count("\n") == 1 and not p.stdout,
               f"{opt}: exit {p.returncode}, {p.stderr!r}")
    p = subprocess.run([ARGS.profile, "flamegraph", "--help"], capture_output=True, text=True)
    expect(p.returncode == 0 and "Examples:" in p.stdout, "--help")


@test
def stdin_and_options_reach_the_svg():
    p = subprocess.run([ARGS.profile, "flamegraph", "--title", "T1", "--subtitle", "S1",
                        "--width", "800", "--height", "20", "--inverted", "--colors", "blue"],
                       input=KNOWN, capture_output=True, text=True)
    expect(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
    root = ET.fromstring(p.stdout)
    expect(root.get("width") == "800", "width")
    texts = {t.get("id"): t.text for t in root.iter(SVGNS + "text") if t.get("id")}
    expect(texts.get("title") == "T1" and texts.get("subtitle") == "S1", f"texts: {texts}")
    rects = [r for r in root.iter(SVGNS + "rect") if r.get("height") == "19"]
    expect(len(rects) == 9, f"{len(rects)} frames of height 19 (--height 20)")


@test
def wall_clock_graph_from_the_profiler():
    # profile --wall writes the SVG itself: a program that computes, then sleeps; the graph
    # is titled as wall-clock time, counts microseconds, and its [off-cpu] frame is blue.
    wl = os.path.join(ARGS.build, "tests", "workloads", "wallhalf")
    expect(os.access(wl, os.X_OK), f"{wl} is missing (make test builds it)")
    svg = os.path.join(ARGS.workdir, "wall.svg")
    p = subprocess.run([ARGS.profile, "--wall", "-F", "499", "-o", svg, "--", wl, "0.3"],
                       capture_output=True, text=True, timeout=60)
    expect(p.returncode == 0, f"profile --wall exited {p.returncode}: {p.stderr}")
    b = open_svg(svg)
    title = b.eval("document.getElementById('title').textContent")
    expect(title == "Wall-clock time: wallhalf 0.3", f"title {title!r}")
    sub = b.eval("document.getElementById('subtitle').textContent")
    expect(re.fullmatch(r"wall-clock time \(on-CPU at 499 Hz\), [0-9.]+ s from "
                        r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \w+ on \S+", sub), f"subtitle {sub!r}")
    off = frame(b, "[off-cpu] (")
    m = re.fullmatch(r"#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})", off["fill"] or "")
    rgb = [int(x, 16) for x in m.groups()] if m else None
    expect(rgb and rgb[2] >= 190 and rgb[2] > max(rgb[0], rgb[1]),
           f"[off-cpu] drawn {off['fill']!r}, not blue")
    b.hover(off["cx"], off["cy"])
    d = text_of(b, "details")
    expect(re.fullmatch(r"Function: \[off-cpu\] \([\d,]+ us, [\d.]+%\)", d),
           f"details line on hover: {d!r}")
    # (Said in full when missing: CI once drew no wall_sleep, 0 of 73 runs here since.)
    titles = b.eval("[].map.call(document.querySelectorAll('#frames title'), function (e) {"
                    " return e.textContent; })")
    expect(any(t.startswith("wall_sleep (") for t in titles),
           f"no wall_sleep frame; frames: {titles[:40]}; profile said: {p.stderr[-1500:]!r}")
    sleep = frame(b, "wall_sleep (")
    expect(sleep["w"] > 200, f"wall_sleep, half of the time, is {sleep['w']} px wide")


@test
def graph_says_what_it_shows():
    # profile writes the SVG of a command that reads /dev/zero (user and kernel frames):
    # the title is the command, the subtitle what was sampled, how often, how long, when and
    # where; the legend, drawn, names the kinds the graph has; hovering a kernel frame says
    # so, and a frame of one sample says "1 sample".
    svg = profile_workload("readloop", "says.svg", "-F", "199", args=("0.6",))
    b = open_svg(svg)
    expect(text_of(b, "title") == "profile: readloop 0.6", f"title {text_of(b, 'title')!r}")
    sub = text_of(b, "subtitle")
    expect(re.fullmatch(r"cpu-clock at 199 Hz, 0\.[5-9] s from \d{4}-\d\d-\d\d "
                        r"\d\d:\d\d:\d\d \w+ on \S+", sub), f"subtitle {sub!r}")
    legend = b.eval("""(function () {
      var g = document.getElementById('legend'); if (!g) return null;
      var r = g.getBoundingClientRect();
      return {words: [].map.call(g.querySelectorAll('text'), function (t) {
                return t.textContent; }),
              shown: r.width > 0 && r.height > 0, top: r.top}; })()""")
    expect(legend and legend["shown"], f"no legend drawn: {legend}")
    expect(legend["words"][:2] == ["user", "kernel"], f"legend words {legend['words']}")
    k = b.eval("""(function () {
      var t = [].filter.call(document.querySelectorAll('#frames title'), function (e) {
        return / \\(\\d[\\d,]* samples?, [\\d.]+%, kernel\\)$/.test(e.textContent); })[0];
      return t ? t.textContent : null; })()""")
    expect(k, "no frame says it is a kernel frame")
    f = frame(b, k)
    b.hover(f["cx"], f["cy"])
    expect(text_of(b, "details").endswith(", kernel)"), f"details {text_of(b, 'details')!r}")
    ones = b.eval("[].filter.call(document.querySelectorAll('#frames title'), function (e) {"
                  " return / \\(1 samples?,/.test(e.textContent); }).map(function (e) {"
                  " return e.textContent; })")
    expect(all("(1 sample," in t for t in ones), f"'1 samples' in {ones[:3]}")


@test
def differential_graph_hovers_searches_and_zooms():
    # profile diff BEFORE AFTER -o x.svg (issue 30): drawn on AFTER, x grew 10 -> 40 (red,
    # +30%), y shrank 40 -> 10 (blue, -30%), c the same (no colour); hovering says the change,
    # search and zoom work as in the other graphs.
    before = os.path.join(ARGS.workdir, "before.folded")
    after = os.path.join(ARGS.workdir, "after.folded")
    svg = os.path.join(ARGS.workdir, "diff.svg")
    with open(before, "w") as f:
        f.write("main;a;x 10\nmain;b;y 40\nmain;c 50\n")
    with open(after, "w") as f:
        f.write("main;a;x 40\nmain;b;y 10\nmain;c 50\n")
    p = subprocess.run([ARGS.profile, "diff", before, after, "-o", svg], capture_output=True,
                       text=True, timeout=60)
    expect(p.returncode == 0, f"profile diff exited {p.returncode}: {p.stderr}")
    b = open_svg(svg)
    x, y, c = frame(b, "x ("), frame(b, "y ("), frame(b, "c (")
    expect(abs(x["w"] - 472) < 0.5 and abs(y["w"] - 118) < 0.5,
           f"widths are not AFTER's: x {x['w']}, y {y['w']}")
    expect(x["fill"].lower() in ("#ff0000", "rgb(255,0,0)"), f"x grew, filled {x['fill']}")
    expect(y["fill"].lower() in ("#0000ff", "rgb(0,0,255)"), f"y shrank, filled {y['fill']}")
    expect(c["fill"].lower() in ("#ffffff", "rgb(255,255,255)"), f"c did not change, {c['fill']}")
    b.hover(x["cx"], x["cy"])
    d = text_of(b, "details")
    expect(d == "Function: x (40 samples, 40.00%; +30.00%)", f"details on hover: {d!r}")
    b.hover(y["cx"], y["cy"])
    d = text_of(b, "details")
    expect(d.endswith("; -30.00%)"), f"details on hover of y: {d!r}")
    b.answer_prompt("^y$", b.click(*center(b, "search"), wait=False))
    expect(text_of(b, "matched") == "Matched: 10.0%",
           f"search ^y$ shows {text_of(b, 'matched')!r}, expected 'Matched: 10.0%'")
    b.click(*center(b, "search"))
    a = frame(b, "a (")
    b.click(a["cx"], a["cy"])
    x = frame(b, "x (")
    expect(abs(x["w"] - 1180) < 0.5 and x["fill"].lower() in ("#ff0000", "rgb(255,0,0)"),
           f"after zooming into a, x is {x['w']} px wide, filled {x['fill']}")


SPEEDSCOPE_VERSION = "1.25.0"


def speedscope_index():
    """speedscope's viewer from npm (pinned), installed under the build directory when
    missing: its index.html."""
    prefix = os.path.abspath(os.path.join(ARGS.build, "npm"))
    index = os.path.join(prefix, "node_modules", "speedscope", "dist", "release", "index.html")
    if not os.path.exists(index):
        r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", prefix,
                            f"speedscope@{SPEEDSCOPE_VERSION}"], capture_output=True, text=True,
                           timeout=300)
        expect(r.returncode == 0, f"npm install speedscope failed: {r.stderr[-400:]}")
    return index


def open_speedscope(path):
    """PATH opened in speedscope as its command line opens a file (a script that hands the
    file to the page, named in the URL's #localProfilePath); the page once it shows it."""
    import base64
    import json
    import time
    js = os.path.join(ARGS.workdir, "load-" + os.path.basename(path) + ".js")
    with open(path, "rb") as f:
        data = base64.b64encode(f.read()).decode()
    with open(js, "w") as f:
        f.write(f"speedscope.loadFileFromBase64({json.dumps(os.path.basename(path))}, "
                f"{json.dumps(data)})")
    b = browser()
    b.open("file://" + speedscope_index() + "#localProfilePath=" + js)
    for _ in range(60):
        if "Sandwich" in (b.eval("document.body.innerText") or "") and \
                b.eval("document.querySelectorAll('canvas').length") >= 2:
            break
        time.sleep(0.25)
    return b


SS_SMALLEST = r"""(function (re) {
  var els = [].filter.call(document.querySelectorAll('*'), function (e) {
    var r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && new RegExp(re).test(e.textContent) &&
           e.textContent.length < 120; });
  els.sort(function (a, b) { return a.textContent.length - b.textContent.length ||
                             a.getBoundingClientRect().width - b.getBoundingClientRect().width; });
  if (!els.length) return null;
  var r = els[0].getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2, els[0].textContent]; })(%s)"""


SS_ALL = r"""(function (re) {
  return [].filter.call(document.querySelectorAll('*'), function (e) {
    var r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.children.length === 0 &&
           new RegExp(re).test(e.textContent); }).map(function (e) {
    var r = e.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2, e.textContent]; }); })(%s)"""


def ss_press(b, key):
    import time
    for kind in ("keydown", "keypress", "keyup"):
        b.eval(f"window.dispatchEvent(new KeyboardEvent('{kind}', {{key: '{key}', "
               "bubbles: true}))")
    time.sleep(0.4)


def ss_select(b, thread):
    """The profile of THREAD (a name) chosen from speedscope's list of profiles."""
    import json
    import time
    cur = b.eval(SS_SMALLEST % json.dumps(r"^napper \(\d+\) / \S+ \(\d+\) \(\d+/\d+\)$"))
    expect(cur, "speedscope shows no profile name")
    b.click(cur[0], cur[1])
    time.sleep(0.6)
    # (Not the main thread, named as the process: its tid is the pid.)
    rows = b.eval(SS_ALL % json.dumps(r"^napper \(\d+\) / " + thread + r" \(\d+\)$"))
    rows = [r for r in rows or [] if len(set(re.findall(r"\((\d+)\)", r[2]))) == 2]
    expect(rows, f"no {thread} in speedscope's list of profiles: "
                 f"{b.eval('document.body.innerText')[:300]!r}")
    b.click(rows[0][0], rows[0][1])
    time.sleep(0.6)


@test
def speedscope_shows_threads_in_time_order():
    # A real run of napper (grinder works the whole time; napper works 200 ms, sleeps 300 ms)
    # written with -o FILE.speedscope.json and opened in speedscope, npm's, in Chromium: its
    # list of profiles names both threads; each one's sandwich view lists its own function;
    # in napper's time-order view, hovering along the frames finds them (the tooltip names
    # them) in stretches of work with naps between, in turn; the grinder's has no nap.
    # (On a loaded machine the grinder is itself kept off a CPU at times, and its file has
    # those stretches: its row's gaps are asserted absent when the file's longest is short.)
    import json
    import time
    path = profile_workload("napper", "napper.speedscope.json", "-F", "499", args=("2",))
    with open(path) as f:
        doc = json.load(f)
    idle, longest = 0, 0
    for p in doc["profiles"]:
        if re.search(r" / grinder \(\d+\)$", p["name"]):
            for st, w in zip(p["samples"], p["weights"]):
                idle = idle + w if not st else 0
                longest = max(longest, idle)
    b = open_speedscope(path)
    rows = {}
    for thread, fn in (("napper", "nap_work"), ("grinder", "grind")):
        ss_select(b, thread)
        ss_press(b, "3")    # the sandwich view: a table of the functions
        text = b.eval("document.body.innerText")
        expect(re.search(r"\n\s*" + fn + r"\n", text), f"{thread}'s sandwich view has no "
               f"{fn}: {text[:400]!r}")
        ss_press(b, "1")    # time order
        canvases = b.eval("[].map.call(document.querySelectorAll('canvas'), function (c) {"
                          " var r = c.getBoundingClientRect(); return [r.top, r.height]; })")
        chart = max(canvases, key=lambda c: c[0])    # (the flame chart: the lowest)
        base = b.eval("document.body.innerText")
        # The row of the outermost frames: the first, from the chart's top down, where a
        # frame is found at the middle of the first stretch of work.
        row_y, names = None, set()
        for y in range(int(chart[0]) + 5, int(chart[0]) + 80, 5):
            for x in (60, 100, 140):
                b.hover(x, y)
                time.sleep(0.03)
                t = b.eval("document.body.innerText")
                if t != base:
                    row_y = y
                    break
            if row_y:
                break
        expect(row_y, f"{thread}: no frame found under the pointer in the time-order view")
        line = ""
        for x in range(5, 1300, 13):
            b.hover(x, row_y)
            time.sleep(0.03)
            t = b.eval("document.body.innerText")
            line += "X" if t != base else "."
            if t != base:
                names.add(t[len(base):].strip().split("\n")[-1][:60])
        rows[thread] = line
        expect(any("start_thread" in n or thread in n or fn in n for n in names),
               f"{thread}: the tooltips name {sorted(names)[:5]}")
    runs = re.findall(r"X+", rows["napper"].strip("."))
    gaps = re.findall(r"\.{5,}", rows["napper"].strip("."))
    expect(len(runs) >= 3 and len(gaps) >= 3,
           f"napper's time order has no naps between its work: {rows['napper']}")
    # (Five dots of 13 px, of a chart ~1300 px wide for 2 s: ~100 ms.)
    if longest < 30e6:
        expect(not re.search(r"\.{5,}", rows["grinder"].strip(".")),
               f"the grinder's time order has gaps: {rows['grinder']}")
        return f"grinder off the CPU {longest / 1e6:.0f} ms at most: no gap in its row"
    return (f"grinder off the CPU {longest / 1e6:.0f} ms at once (a loaded machine): its "
            f"row's gaps not asserted")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--profile", help="the profile binary (default BUILD/profile)")
    ARGS = ap.parse_args()
    ARGS.profile = ARGS.profile or os.path.join(ARGS.build, "profile")
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="fg-browser-") as work:
        ARGS.workdir = work
        try:
            for t in TESTS:
                try:
                    said = t()
                    print(f"ok    {t.__name__}" + (f": {said}" if isinstance(said, str)
                                                   else ""))
                    passed += 1
                except Exception as e:  # noqa: BLE001
                    print(f"FAIL  {t.__name__}: {e}")
                    if os.environ.get("V"):
                        traceback.print_exc()
                    failed += 1
        finally:
            if BROWSER:
                BROWSER.close()
    print(f"browser: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
