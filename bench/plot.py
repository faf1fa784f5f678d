#!/usr/bin/env python3
"""Plots tensorgl-bench results (schema "tensorgl-bench/1") to PNG with matplotlib.

    python3 bench/plot.py --ours=gles.json --torch=torch.json --out=plots/
        -> plots/ratios.png    ours/torch throughput per row (bar chart, log scale, 1 = parity)
        -> plots/roofline.png  GFLOP/s against arithmetic intensity (FLOP/byte) of both, with the
                               measured copy bandwidth of each and the peak FLOP/s lines
    python3 bench/plot.py --ours=gles.json --out=plots/      (roofline of ours only)

--peak-gflops sets the compute roof (default: the highest GFLOP/s measured in the files, i.e.
PyTorch's best SGEMM; an H200's f32 FMA peak without tensor cores is about 67,000).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_compare import ratio_rows  # noqa: E402  (no torch import: only the ratio code)


def load(path):
    with open(path) as f:
        run = json.load(f)
    if run.get("schema") != "tensorgl-bench/1":
        sys.exit("plot.py: %s is not a tensorgl-bench/1 file" % path)
    return run


def run_label(run):
    return "%s (%s)" % (run["plugin"]["name"], run["device"]["properties"].get("renderer", "?"))


def plot_ratios(plt, ours, torch_run, path):
    rows = [r for r in ratio_rows(ours, torch_run) if r["ratio"] is not None]
    if not rows:
        print("plot.py: no rows with both results: %s not written" % path)
        return
    labels = [r["key"] for r in rows]
    ratios = [r["ratio"] for r in rows]
    # Green: the target for the row is met; red: missed; grey: no ratio target.
    colors = [{True: "tab:green", False: "tab:red"}.get(r.get("met"), "tab:gray") for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.45 * len(rows) + 2), 6))
    ax.bar(range(len(rows)), ratios, color=colors)
    for i, r in enumerate(rows):  # the target ratio as a tick across the bar
        t = r.get("target") or ""
        if t.startswith(">= "):
            ax.plot([i - 0.4, i + 0.4], [float(t[3:])] * 2, color="black", linewidth=1.5)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("ours / torch throughput (log; > 1: ours faster)")
    ax.set_title("%s vs %s" % (run_label(ours), run_label(torch_run)))
    for i, x in enumerate(ratios):
        ax.annotate("%.2f" % x, (i, x), ha="center", va="bottom", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("wrote", path)


def plot_roofline(plt, runs, path, peak_gflops=None):
    points = []  # (run, ai, gflops, key)
    for run in runs:
        for r in run["results"]:
            if r.get("variant") in ("chain", "graph", "sync"):  # latencies, not throughputs
                continue
            if r.get("status") == "ok" and r.get("flops") and r.get("bytes") and r.get("gflops"):
                points.append((run, r["flops"] / r["bytes"], r["gflops"], r["key"]))
    if not points:
        print("plot.py: no rows with FLOPs and bytes: %s not written" % path)
        return
    peak = peak_gflops or max(p[2] for p in points)
    ais = [p[1] for p in points]
    lo, hi = min(ais) / 2, max(ais) * 2
    fig, ax = plt.subplots(figsize=(9, 6))
    markers = ["o", "s", "^", "D"]
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    for i, run in enumerate(runs):
        mine = [p for p in points if p[0] is run]
        c = colors[i % len(colors)]
        ax.scatter([p[1] for p in mine], [p[2] for p in mine], marker=markers[i % len(markers)],
                   color=c, label=run_label(run), zorder=3)
        for p in mine:
            ax.annotate(p[3], (p[1], p[2]), fontsize=6, xytext=(3, 3), textcoords="offset points")
        bw = run.get("copy_gbps")
        if bw:  # roof: min(bandwidth * AI, peak)
            xs = [lo * (hi / lo) ** (k / 100) for k in range(101)]
            ax.plot(xs, [min(bw * x, peak) for x in xs], color=c, linestyle="--", linewidth=1,
                    label="%s copy %.0f GB/s" % (run["plugin"]["name"], bw))
    ax.axhline(peak, color="black", linestyle=":", linewidth=1,
               label="peak %.0f GFLOP/s" % peak)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP / byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("roofline (measured copy bandwidth, peak FLOP/s)")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print("wrote", path)


def main():
    ap = argparse.ArgumentParser(description="plots tensorgl-bench results")
    ap.add_argument("--ours", required=True, help="tensorgl-bench JSON")
    ap.add_argument("--torch", help="torch_compare.py JSON (for the ratio chart)")
    ap.add_argument("--out", default=".", help="output directory")
    ap.add_argument("--peak-gflops", type=float, default=None)
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot.py needs matplotlib (pip install matplotlib, or apt install "
                 "python3-matplotlib); the ratio table itself needs only torch_compare.py")
    os.makedirs(args.out, exist_ok=True)
    ours = load(args.ours)
    runs = [ours]
    if args.torch:
        torch_run = load(args.torch)
        runs.append(torch_run)
        plot_ratios(plt, ours, torch_run, os.path.join(args.out, "ratios.png"))
    plot_roofline(plt, runs, os.path.join(args.out, "roofline.png"), args.peak_gflops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
