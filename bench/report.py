#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the outputs of bench/run.sh into results.md (every table, each with the command that
produced it) and up to five PNG plots (when matplotlib is there).

usage: report.py RAW_DIR OUT_DIR ELAPSED_SECONDS
"""
import csv
import io
import os
import re
import sys

RAW, OUT, ELAPSED = sys.argv[1], sys.argv[2], sys.argv[3]


def read(name):
    try:
        with open(os.path.join(RAW, name), encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def csv_rows(name):
    """The CSV rows of a step's stdout (lines that are not CSV, such as notes, are dropped)."""
    text = "\n".join(l for l in read(name + ".out").splitlines() if "," in l)
    return list(csv.DictReader(io.StringIO(text)))


STEPS = {}
for line in read("steps.tsv").splitlines():
    parts = line.split("\t")
    if len(parts) >= 3:
        STEPS[parts[0]] = {"rc": parts[1], "cmd": parts[2], "last": parts[3] if len(parts) > 3 else ""}


def ok(step):
    return STEPS.get(step, {}).get("rc") == "0"


def provenance(step):
    s = STEPS.get(step)
    if not s:
        return "_not run_\n"
    text = "Command: `%s`" % s["cmd"].strip()
    if s["rc"] == "skipped":
        text += "  \n**Skipped**: %s" % s["last"].strip()
    elif s["rc"] != "0":
        text += "  \n**Failed** (exit %s): %s" % (s["rc"], s["last"].strip() or "no output")
    return text + "\n"


def size_name(n):
    n = int(n)
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def f(v, digits=3):
    try:
        return "%.*f" % (digits, float(v))
    except (TypeError, ValueError):
        return "-"


md = []
host = read("host.txt").strip()
md.append("# gdrcopy benchmark results\n")
md.append("Produced by `bench/run.sh` in %s s. Times are microseconds; medians and minimums are "
          "over up to 100 buckets of iterations (GDRCopy 2.6's method). MB/s is 2^20 bytes per "
          "second, as GDRCopy prints it; GB/s is 10^9.\n" % ELAPSED)
md.append("```\n%s\n```\n" % host)

# ---- Backend and mapping ---------------------------------------------------------------------
md.append("## Backend\n")
md.append(provenance("info"))
md.append("```\n%s\n```\n" % read("info.out").strip())
bw_default = read("copybw_default.out")
header_lines = [l for l in bw_default.splitlines()
                if l.startswith(("GPU id:", "selecting device", "gpu alloc fn", "info.", "copy routines"))]
if header_lines:
    md.append("From the copybw run below:\n\n```\n%s\n```\n" % "\n".join(header_lines))

# ---- bench_copy_impls: its own markdown, headings two levels down -----------------------------
md.append("## Copy routines side by side (bench_copy_impls)\n")
md.append(provenance("copy_impls"))
impls_md = read("copy_impls.out").strip()
if impls_md and ok("copy_impls"):
    md.append("Every figure is also in `copy_impls.csv`.\n")
    md.append(re.sub(r"^(#+) ", lambda m: "##" + m.group(1) + " ", impls_md, flags=re.M) + "\n")

# ---- bench_poll: its own markdown --------------------------------------------------------------
md.append("## Polling a word the GPU changes (bench_poll)\n")
md.append(provenance("poll"))
poll_md = read("poll.out").strip()
if poll_md and ok("poll"):
    md.append(poll_md + "\n")

# ---- copylat ---------------------------------------------------------------------------------
lat = csv_rows("copylat")
by = {}
for r in lat:
    by.setdefault(r["test"], {})[int(r["size"])] = r


def lat_table(gdr, cuda, title):
    sizes = sorted(by.get(gdr, {}))
    rows = []
    for s in sizes:
        g, c = by[gdr][s], by.get(cuda, {}).get(s)
        rows.append([size_name(s), f(g["median_us"]), f(g["min_us"]),
                     f(c["median_us"]) if c else "-", f(c["min_us"]) if c else "-",
                     f(g.get("cumemcpy_over_gdrcopy"), 2)])
    md.append("### %s\n" % title)
    md.append(table(["size", "gdrcopy median", "gdrcopy min", "cuMemcpy median", "cuMemcpy min",
                     "cuMemcpy / gdrcopy"], rows))


md.append("## Latency: gdr_copy_to/from_mapping against cuMemcpy (copylat -c)\n")
md.append(provenance("copylat"))
if lat:
    lat_table("gdr_copy_to_mapping", "cuMemcpy_H2D", "Host to GPU (gdr_copy_to_mapping, cuMemcpyHtoD)")
    lat_table("gdr_copy_from_mapping", "cuMemcpy_D2H", "GPU to host (gdr_copy_from_mapping, cuMemcpyDtoH)")
    raw_rows = []
    for name, size, call in (("raw_store8_sfence", 8, "gdr_copy_to_mapping"),
                             ("raw_load64_movntdqa", 64, "gdr_copy_from_mapping"),
                             ("raw_load64_volatile", 64, "gdr_copy_from_mapping")):
        r = by.get(name, {}).get(size)
        g = by.get(call, {}).get(size)
        if r:
            raw_rows.append([name, size_name(size), f(r["median_us"]), f(r["min_us"]),
                             call, f(g["median_us"]) if g else "-",
                             f(float(g["median_us"]) - float(r["median_us"])) if g else "-"])
    md.append("### The tiny path against a raw access through the same mapping\n")
    md.append("The raw rows are not gdrcopy calls: one aligned 8-byte store and the store fence, "
              "and one 64-byte load, timed the same way in the same run.\n\n")
    md.append(table(["raw access", "size", "median", "min", "gdrcopy call", "its median",
                     "overhead"], raw_rows))

# ---- per-routine sweep -----------------------------------------------------------------------
sweep = csv_rows("sweep")
md.append("## Copy routines: each against the library's own choice (copylat --impl all)\n")
md.append(provenance("sweep"))
skipped = [l for l in read("sweep.err").splitlines() if l.startswith("routine ")]
if skipped:
    md.append("\n".join("- " + l for l in skipped) + "\n\n")
sw = {}
for r in sweep:
    sw.setdefault(r["test"], {}).setdefault(r["impl"], {})[int(r["size"])] = float(r["median_us"])
for test in ("gdr_copy_to_mapping", "gdr_copy_from_mapping"):
    impls = list(sw.get(test, {}))
    if not impls:
        continue
    sizes = sorted({s for i in impls for s in sw[test][i]})
    rows = []
    for s in sizes:
        vals = {i: sw[test][i].get(s) for i in impls}
        forced = {i: v for i, v in vals.items() if i != "auto" and v is not None}
        best = min(forced, key=forced.get) if forced else "-"
        auto = vals.get("auto")
        ratio = f(auto / forced[best], 2) if forced and auto else "-"
        rows.append([size_name(s)] + [f(vals[i], 4) if vals[i] is not None else "-" for i in impls]
                    + [best, ratio])
    md.append("### %s, median us\n" % test)
    md.append(table(["size"] + impls + ["best", "auto / best"], rows))
md.append("auto / best: how many times the automatic choice is slower than the best routine at "
          "that size (1.00: it is the best).\n")

# ---- copybw ----------------------------------------------------------------------------------
md.append("## Bandwidth (copybw)\n")
md.append(provenance("copybw_default"))
m_w = re.search(r"write BW: ([0-9.e+]+)MB/s", bw_default)
m_r = re.search(r"read BW: ([0-9.e+]+)MB/s", bw_default)
if m_w and m_r:
    md.append("\nGDRCopy's default run (128 KiB, 10000 writes, 100 reads): write %s MB/s, read %s MB/s.\n\n"
              % (m_w.group(1), m_r.group(1)))
md.append(provenance("copybw"))
bw = csv_rows("copybw")
bwt = {}
for r in bw:
    bwt.setdefault(int(r["size"]), {})[r["test"]] = float(r["mb_per_s"])
rows = []
for s in sorted(bwt):
    w, rd = bwt[s].get("write"), bwt[s].get("read")
    rows.append([size_name(s), f(w, 1), f(w * 1048576 / 1e9 if w else None, 2), f(rd, 1),
                 f(rd * 1048576 / 1e9 if rd else None, 2)])
if rows:
    md.append(table(["size", "write MB/s", "write GB/s", "read MB/s", "read GB/s"], rows))

# ---- apiperf ---------------------------------------------------------------------------------
md.append("## API call costs (apiperf)\n")
md.append(provenance("apiperf"))
api = csv_rows("apiperf")
ops = ["pin", "map", "get_info", "unmap", "unpin"]
apt = {}
setup = {}
for r in api:
    if r["op"] in ops:
        apt.setdefault(int(r["size"]), {})[r["op"]] = r
    else:
        setup[r["op"]] = r
rows = []
for s in sorted(apt):
    rows.append([size_name(s)] + ["%s / %s" % (f(apt[s][o]["median_us"], 1), f(apt[s][o]["min_us"], 1))
                                  if o in apt[s] else "-" for o in ops])
if rows:
    md.append("Median / minimum per call, us.\n\n")
    md.append(table(["size"] + ops, rows))
# The set-up calls: the process's first gdr_open, pin and gdr_close, and the later ones.
rows = []
for call, first, later in [("gdr_open", "open_first", "open"), ("first pin", "pin_first", None),
                           ("gdr_close", "close_first", "close")]:
    if first in setup:
        rows.append([call, f(setup[first]["median_us"], 1),
                     "%s / %s" % (f(setup[later]["median_us"], 2), f(setup[later]["min_us"], 2))
                     if later in setup else "-"])
if rows:
    md.append("Set-up calls, us: the process's first, and the median / minimum of later ones.\n\n")
    md.append(table(["call", "first", "later"], rows))

# ---- pplat -----------------------------------------------------------------------------------
md.append("## CPU/GPU ping-pong (pplat)\n")
rows = []
for step in [s for s in STEPS if s.startswith("pplat")]:
    st = STEPS[step]
    if st["rc"] != "0":
        rows.append([step, "`%s`" % st["cmd"], "**%s**: %s" % (
            "skipped" if st["rc"] == "skipped" else "failed (exit %s)" % st["rc"],
            st["last"].strip()), "", ""])
        continue
    for r in csv_rows(step):
        where = ("flags and data through cuMemcpyAsync" if r["test"] == "cumemcpy" else
                 "GPU flag %s, CPU flag %s, data %s" % (r["gpu_flag"], r["cpu_flag"], r["data"]))
        if r["test"] == "raw":
            where += "; the GPU flag written by a raw store + store fence, not the library"
        rows.append(["%s (%s)" % (step, r["test"]), "`%s`" % st["cmd"],
                     "mode %s: %s, %s B" % (r["mode"], where, r["size"]),
                     f(r["min_us"]), f(r["median_us"])])
if rows:
    md.append("Round trip per iteration, us. Mode 0: the CPU writes, the GPU answers (the minimum "
              "and median of up to 100 buckets' averages, as GDRCopy's pplat); mode 1: the GPU "
              "writes, the CPU answers (of single round trips).\n\n")
    md.append(table(["run", "command", "what", "min", "median"], rows))

# ---- plots -----------------------------------------------------------------------------------
plots = []
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError:
    plt = None
    md.append("\n_No plots: this Python has no matplotlib._\n")


def size_axis(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda x, _: size_name(int(x)).replace(" ", "") if x >= 1 and int(x) == x else ""))


def save(fig, name, caption):
    path = os.path.join(OUT, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    plots.append((name, caption))


def series(test):
    d = by.get(test, {})
    xs = sorted(d)
    return xs, [float(d[x]["median_us"]) for x in xs]


if plt and lat:
    for gdr, cuda, raw_name, name, title in (
            ("gdr_copy_to_mapping", "cuMemcpy_H2D", "raw_store8_sfence", "copylat_h2d.png",
             "Host to GPU latency (median)"),
            ("gdr_copy_from_mapping", "cuMemcpy_D2H", "raw_load64_movntdqa", "copylat_d2h.png",
             "GPU to host latency (median)")):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for test, label in ((gdr, gdr), (cuda, cuda.replace("_", " "))):
            xs, ys = series(test)
            if xs:
                ax.plot(xs, ys, marker="o", ms=3, label=label)
        for rn in (raw_name, "raw_load64_volatile"):
            r = by.get(rn)
            if r:
                s = min(r)
                ax.plot([s], [float(r[s]["median_us"])], "k*", ms=10, label=rn + " (raw)")
        size_axis(ax)
        ax.set_yscale("log")
        ax.set_xlabel("bytes")
        ax.set_ylabel("us")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        save(fig, name, title + ", `" + STEPS.get("copylat", {}).get("cmd", "") + "`")

if plt and sw:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, test in zip(axes, ("gdr_copy_to_mapping", "gdr_copy_from_mapping")):
        for impl, d in sw.get(test, {}).items():
            xs = sorted(d)
            ax.plot(xs, [d[x] for x in xs], marker=".", lw=2.5 if impl == "auto" else 1,
                    color="black" if impl == "auto" else None, label=impl)
        size_axis(ax)
        ax.set_yscale("log")
        ax.set_xlabel("bytes")
        ax.set_ylabel("median us")
        ax.set_title(test + " by copy routine")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    save(fig, "copy_routines.png", "Each copy routine against the automatic choice, `"
         + STEPS.get("sweep", {}).get("cmd", "") + "`")

if plt and bwt:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = sorted(bwt)
    for test in ("write", "read"):
        ys = [bwt[x].get(test, 0) * 1048576 / 1e9 for x in xs]
        ax.plot(xs, ys, marker="o", ms=3, label=test + (" (to GPU)" if test == "write" else " (from GPU)"))
    size_axis(ax)
    ax.set_xlabel("bytes per copy")
    ax.set_yscale("log")
    ax.set_ylabel("GB/s")
    ax.set_title("copybw bandwidth")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, "copybw.png", "Bandwidth by copy size, `" + STEPS.get("copybw", {}).get("cmd", "") + "`")

if plt and apt:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = sorted(apt)
    for op in ops:
        ax.plot(xs, [float(apt[x][op]["median_us"]) if op in apt[x] else float("nan") for x in xs],
                marker="o", ms=3, label=op)
    size_axis(ax)
    ax.set_yscale("log")
    ax.set_xlabel("buffer bytes")
    ax.set_ylabel("median us per call")
    ax.set_title("API call costs (apiperf)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, "apiperf.png", "API call costs, `" + STEPS.get("apiperf", {}).get("cmd", "") + "`")

if plots:
    md.append("## Plots\n")
    for name, caption in plots:
        md.append("![%s](%s)\n\n%s\n" % (name, name, caption))

with open(os.path.join(OUT, "results.md"), "w", encoding="utf-8") as out:
    out.write("\n".join(md))
print("report: results.md and %d plot(s)" % len(plots))
