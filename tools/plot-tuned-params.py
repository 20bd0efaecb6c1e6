#!/usr/bin/env python3
"""Plots a tuned-parameter table (tuned_params/*.json): which configuration won each tile and how it compares
with cuBLAS and the bandwidth model, one OUTDIR/<kernel>.png per kernel, plus OUTDIR/bandwidth.png.

Usage: tools/plot-tuned-params.py TABLE.json OUTDIR
Needs matplotlib (Debian: python3-matplotlib, installed by tools/install-deps.sh).
"""
import argparse
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")  # no display on build machines and CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap, Normalize, TwoSlopeNorm  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

SCHEMA = "blasoffload-tuned-params/1"
CUBLAS = "cublas"
# cuBLAS keeps one colour in every figure; our configurations take the rest in sorted order.
CUBLAS_COLOR = "#555555"
MISSING_COLOR = "#eeeeee"


def subtitle(table):
    dev = table.get("device", {})
    return "{} (cc {}, {} SMs) - tuned {} by {}".format(
        dev.get("name", "?"), dev.get("compute_capability", "?"), dev.get("sm_count", "?"),
        table.get("created", "?"), table.get("tuner", "?"))


def config_colors(kernel):
    names = sorted({t["config"] for t in kernel["tiles"]} - {CUBLAS})
    palette = plt.get_cmap("tab20" if len(names) > 10 else "tab10").colors
    colors = {name: palette[i % len(palette)] for i, name in enumerate(names)}
    if any(t["config"] == CUBLAS for t in kernel["tiles"]):
        colors[CUBLAS] = CUBLAS_COLOR
    return colors


def legend_handles(colors, with_missing):
    handles = [Patch(facecolor=c, edgecolor="black", linewidth=0.5, label=n) for n, c in colors.items()]
    if with_missing:
        handles.append(Patch(facecolor=MISSING_COLOR, edgecolor="black", hatch="//", linewidth=0.5, label="no tile"))
    return handles


def size_label(v):
    for unit, div in (("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if v >= div and v % div == 0:
            return "{}{}".format(v // div, unit)
    return str(v)


def tile_map(kernel):
    return {tuple(t["at"]): t for t in kernel["tiles"]}


# --- 1-axis kernels (snrm2, strsv_*) ---------------------------------------------------------------------

def plot_1d(name, kernel, table, path):
    axis = kernel["axes"][0]
    grid = kernel["grid"][axis]
    tiles = tile_map(kernel)
    colors = config_colors(kernel)
    unit = kernel.get("unit", "")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True, gridspec_kw={"height_ratios": [1, 2.5]})

    # Each tile's bar spans the sizes nearest() maps to it: between the log midpoints to its neighbours.
    logs = [math.log(g) for g in grid]
    edges = [logs[0] - 0.5 * (logs[1] - logs[0]) if len(logs) > 1 else logs[0] - 1]
    edges += [(a + b) / 2 for a, b in zip(logs, logs[1:])]
    edges.append(logs[-1] + 0.5 * (logs[-1] - logs[-2]) if len(logs) > 1 else logs[0] + 1)
    any_missing = False
    for i, g in enumerate(grid):
        lo, hi = math.exp(edges[i]), math.exp(edges[i + 1])
        t = tiles.get((g,))
        if t is None:
            any_missing = True
            top.axvspan(lo, hi, facecolor=MISSING_COLOR, edgecolor="black", hatch="//", linewidth=0.5)
            continue
        top.axvspan(lo, hi, facecolor=colors[t["config"]], edgecolor="black", linewidth=0.5)
        top.text(math.sqrt(lo * hi), 0.5, t["config"], rotation=90, ha="center", va="center", fontsize=7)
    top.set_xscale("log")
    top.set_xlim(math.exp(edges[0]), math.exp(edges[-1]))
    top.set_yticks([])
    top.set_title("best configuration per tile (colour and name)", fontsize=10)
    top.legend(handles=legend_handles(colors, any_missing), loc="upper left", bbox_to_anchor=(1.01, 1.0),
               fontsize=8, frameon=False)

    def series(key):
        xs, ys = [], []
        for g in grid:
            t = tiles.get((g,))
            if t is not None and t.get(key) is not None and t[key] > 0:  # log axis: zero rates left out
                xs.append(g)
                ys.append(t[key])
        return xs, ys

    for key, label, style in (("rate", "chosen", dict(color="black", marker="o", linewidth=2)),
                              ("own_rate", "own best", dict(color="tab:blue", marker="s", linestyle="--")),
                              ("cublas_rate", "cuBLAS", dict(color=CUBLAS_COLOR, marker="^", linestyle=":")),
                              ("model_rate", "bandwidth model", dict(color="tab:red", linestyle="-.", marker="x"))):
        xs, ys = series(key)
        if xs:
            bottom.plot(xs, ys, label=label, **style)
    # The chosen points again, coloured by configuration, so the two panels read together.
    for g in grid:
        t = tiles.get((g,))
        if t is not None and t["rate"] > 0:
            bottom.scatter([g], [t["rate"]], color=colors[t["config"]], edgecolor="black", zorder=3, s=40)
    bottom.set_xscale("log")
    if any(t["rate"] > 0 for t in kernel["tiles"]):
        bottom.set_yscale("log")
    bottom.set_xlabel(axis)
    bottom.set_ylabel(unit)
    bottom.set_xticks(grid)
    bottom.set_xticklabels([size_label(g) for g in grid], rotation=45, fontsize=8)
    bottom.minorticks_off()
    bottom.grid(True, which="major", alpha=0.3)
    if bottom.get_legend_handles_labels()[0]:
        bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    else:
        bottom.text(0.5, 0.5, "no tiles", transform=bottom.transAxes, ha="center", va="center")
    bottom.set_title("rate per tile", fontsize=10)
    fig.suptitle("{} (rates in {})\n{}".format(name, unit or "?", subtitle(table)), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- heatmaps for 2- and 3-axis kernels ------------------------------------------------------------------

def heat_axes(ax, rows, cols, row_label, col_label):
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels([size_label(c) for c in cols], rotation=45, fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([size_label(r) for r in rows], fontsize=7)
    ax.set_xlabel(col_label)
    ax.set_ylabel(row_label)


def hatch_missing(ax, i, j):
    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=MISSING_COLOR, hatch="//", edgecolor="black",
                               linewidth=0.5))


def short_name(config, kernel_name):
    """The configuration without the kernel's name in front: "sgemv_n_32x8_u4_r4" -> "32x8_u4_r4"."""
    prefix = kernel_name + "_"
    return config[len(prefix):] if config.startswith(prefix) and len(config) > len(prefix) else config


def config_heatmap(ax, rows, cols, cell, colors, title, kernel_name):
    """cell(r, c) -> tile or None. Colour and (short) name per tile; missing tiles are hatched."""
    names = list(colors)
    codes = np.ma.masked_all((len(rows), len(cols)))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            t = cell(r, c)
            if t is not None:
                codes[i, j] = names.index(t["config"])
                ax.text(j, i, short_name(t["config"], kernel_name), ha="center", va="center", fontsize=7,
                        color="white" if t["config"] == CUBLAS else "black")
            else:
                hatch_missing(ax, i, j)
    cmap = ListedColormap([colors[n] for n in names] or ["white"])
    ax.imshow(codes, origin="lower", cmap=cmap, vmin=-0.5, vmax=max(len(names), 1) - 0.5, aspect="auto")
    heat_axes(ax, rows, cols, *title[1:])
    ax.set_title(title[0], fontsize=9)


def ratio_heatmap(fig, ax, rows, cols, cell, key, title, diverging, norm_range=None):
    """Heatmap of tile rate / tile[key], numbers in the cells; cells without the value stay blank."""
    vals = np.ma.masked_all((len(rows), len(cols)))
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            t = cell(r, c)
            if t is None:
                hatch_missing(ax, i, j)
            elif t.get(key):
                vals[i, j] = t["rate"] / t[key]
    heat_axes(ax, rows, cols, *title[1:])
    ax.set_title(title[0], fontsize=9)
    if vals.count() == 0:
        ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center")
        ax.set_xlim(-0.5, len(cols) - 0.5)
        ax.set_ylim(-0.5, len(rows) - 0.5)
        return
    lo, hi = norm_range if norm_range else (float(vals.min()), float(vals.max()))
    if diverging:
        # Centred at 1 (as fast as cuBLAS), symmetric in log so 0.5 and 2 look equally strong.
        span = max(abs(math.log(max(lo, 1e-9))), abs(math.log(max(hi, 1e-9))), math.log(1.05))
        norm = TwoSlopeNorm(vmin=math.exp(-span), vcenter=1.0, vmax=math.exp(span))
        cmap = "RdBu"
    else:
        norm = Normalize(vmin=0, vmax=max(1.0, hi))
        cmap = "viridis"
    im = ax.imshow(vals, origin="lower", cmap=cmap, norm=norm, aspect="auto")
    for i in range(len(rows)):
        for j in range(len(cols)):
            if vals.mask[i, j]:
                continue
            v = float(vals[i, j])
            rgba = im.cmap(im.norm(v))
            light = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] > 0.5
            ax.text(j, i, "{:.2f}".format(v), ha="center", va="center", fontsize=7,
                    color="black" if light else "white")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)


def ratio_range(kernel, key):
    vals = [t["rate"] / t[key] for t in kernel["tiles"] if t.get(key)]
    return (min(vals), max(vals)) if vals else None


def plot_2d(name, kernel, table, path):
    ra, ca = kernel["axes"]
    rows, cols = kernel["grid"][ra], kernel["grid"][ca]
    tiles = tile_map(kernel)
    colors = config_colors(kernel)
    unit = kernel.get("unit", "")
    has_model = any(t.get("model_rate") for t in kernel["tiles"])
    panels = 3 if has_model else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 5.6))

    def cell(r, c):
        return tiles.get((r, c))

    config_heatmap(axes[0], rows, cols, cell, colors, ("best configuration per tile", ra, ca), name)
    ratio_heatmap(fig, axes[1], rows, cols, cell, "cublas_rate", ("chosen / cuBLAS", ra, ca), True)
    if has_model:
        ratio_heatmap(fig, axes[2], rows, cols, cell, "model_rate", ("achieved / bandwidth model", ra, ca), False)
    missing = len(tiles) < len(rows) * len(cols)
    fig.legend(handles=legend_handles(colors, missing), loc="lower center", ncol=min(4, len(colors) + missing),
               fontsize=8, frameon=False)
    fig.suptitle("{} (rates in {})\n{}".format(name, unit or "?", subtitle(table)), fontsize=11)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_3d(name, kernel, table, path):
    ra, ca, ka = kernel["axes"]
    rows, cols, ks = kernel["grid"][ra], kernel["grid"][ca], kernel["grid"][ka]
    tiles = tile_map(kernel)
    colors = config_colors(kernel)
    unit = kernel.get("unit", "")
    fig, axes = plt.subplots(len(ks), 2, figsize=(11, 4.6 * len(ks) + 0.8), squeeze=False)
    # One colour scale for all k rows, so rows compare.
    cub_range = ratio_range(kernel, "cublas_rate")
    for row, k in enumerate(ks):
        def cell(r, c, k=k):
            return tiles.get((r, c, k))

        config_heatmap(axes[row][0], rows, cols, cell, colors,
                       ("best configuration, {} = {}".format(ka, size_label(k)), ra, ca), name)
        ratio_heatmap(fig, axes[row][1], rows, cols, cell, "cublas_rate",
                      ("chosen / cuBLAS, {} = {}".format(ka, size_label(k)), ra, ca), True, cub_range)
    missing = len(tiles) < len(rows) * len(cols) * len(ks)
    fig.legend(handles=legend_handles(colors, missing), loc="lower center", ncol=min(4, len(colors) + missing),
               fontsize=8, frameon=False)
    fig.suptitle("{} (rates in {})\n{}".format(name, unit or "?", subtitle(table)), fontsize=11)
    fig.tight_layout(rect=(0, 0.6 / (4.6 * len(ks) + 0.8) + 0.02, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_bandwidth(table, path):
    bw = table.get("bandwidth", {})
    fig, ax = plt.subplots(figsize=(11, 5.5))
    drawn = False
    for key, style in (("read", dict(color="tab:blue", marker="o")), ("write", dict(color="tab:orange", marker="s"))):
        pts = bw.get(key) or []
        if pts:
            ax.plot([p["bytes"] for p in pts], [p["gbs"] for p in pts], label=key, **style)
            drawn = True
    if drawn:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no bandwidth measurements", transform=ax.transAxes, ha="center", va="center")
    ax.set_xlabel("bytes")
    ax.set_ylabel("GB/s")
    ax.grid(True, which="both", alpha=0.3)
    # The tuner's read and write kernels (seed 000's SREAD/SMSET) against size: what the bandwidth model uses.
    fig.suptitle("measured memory bandwidth\n{}".format(subtitle(table)), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", help="tuned-parameter table (JSON)")
    parser.add_argument("outdir", help="directory for the PNG files (created if missing)")
    args = parser.parse_args()
    try:
        with open(args.table) as f:
            table = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("plot-tuned-params: cannot read {}: {}".format(args.table, e))
    if table.get("schema") != SCHEMA:
        sys.exit("plot-tuned-params: {}: schema is {!r}, expected {!r}".format(args.table, table.get("schema"), SCHEMA))
    os.makedirs(args.outdir, exist_ok=True)
    written = []
    for name, kernel in sorted(table.get("kernels", {}).items()):
        # Kernel keys are free-form: keep the file name to safe characters.
        path = os.path.join(args.outdir, re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".png")
        plotter = {1: plot_1d, 2: plot_2d, 3: plot_3d}.get(len(kernel.get("axes", [])))
        if plotter is None:
            print("plot-tuned-params: {}: {} axes, not plotted".format(name, len(kernel.get("axes", []))),
                  file=sys.stderr)
            continue
        plotter(name, kernel, table, path)
        written.append(path)
    path = os.path.join(args.outdir, "bandwidth.png")
    plot_bandwidth(table, path)
    written.append(path)
    for p in written:
        print(p)


if __name__ == "__main__":
    main()
