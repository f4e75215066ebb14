#!/usr/bin/env python3
"""Plot attention (soft alignment) heatmaps from `rnnsearch translate` JSON output.

Input: the JSON-lines output of

    rnnsearch translate --model DIR --format json --alignment soft < input.de > out.jsonl

one object per line with "line" (0-based input line), "source" and "target" (token lists
without </s>), "score" and "alignment": a list of rows, one per target token plus </s>,
each with one weight per source token plus </s>.

Output: one picture per record, OUT_DIR/NNNNN.png (or .pdf), NNNNN = line + 1 zero-padded
to 5 digits like `rnnsearch translate --heatmaps`; further records of the same line (an
n-best list) become NNNNN-2, NNNNN-3, ...  Rows are target tokens, columns source tokens,
both with </s> appended.

Usage:
    plot_alignment.py out.jsonl --out-dir plots
    rnnsearch translate ... --format json --alignment soft | plot_alignment.py --format pdf
    plot_alignment.py out.jsonl --lines 1-10,42 --cmap magma --dpi 200

--lines selects 1-based input line numbers (the numbers in the file names). Records
without an alignment, or whose alignment does not match their tokens, are reported on
stderr and skipped; the exit status is then 1. Needs python3 and matplotlib.
"""
import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402  (must follow matplotlib.use)
from matplotlib import font_manager  # noqa: E402

EOS = "</s>"
MAX_LABEL_CHARS = 20  # longer tokens are shortened with "…" so the grid keeps its size

# Tried in order; matplotlib (>= 3.6) falls back glyph by glyph through this list, so
# German, Czech, Greek, Cyrillic and Chinese/Japanese/Korean tokens all get real glyphs
# when a suitable font is installed (e.g. Debian's fonts-noto-cjk).
FONT_PREFERENCE = ["DejaVu Sans", "Noto Sans", "Noto Sans CJK SC", "Noto Sans CJK JP",
                   "Noto Sans CJK KR", "Source Han Sans SC", "WenQuanYi Zen Hei",
                   "Droid Sans Fallback", "Arial Unicode MS"]


def parse_lines(spec):
    """'1-10,42' -> set of 1-based line numbers (argparse type)."""
    selected = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            lo, hi = int(first), int(last) if last else int(first)
        except ValueError:
            lo = hi = 0
        if lo < 1 or hi < lo:
            raise argparse.ArgumentTypeError(
                f"bad line range {part!r} (expected e.g. 5 or 1-10, 1-based)")
        selected.update(range(lo, hi + 1))
    return selected


def use_installed_fonts():
    """Point matplotlib at the preferred fonts that are installed (no warnings for the rest)."""
    installed = {font.name for font in font_manager.fontManager.ttflist}
    available = [name for name in FONT_PREFERENCE if name in installed]
    if available:
        # Fallback only walks font.family itself (a generic name such as "sans-serif"
        # resolves to a single font), so the concrete names go there.
        plt.rcParams["font.family"] = available


def shorten(token):
    return token if len(token) <= MAX_LABEL_CHARS else token[:MAX_LABEL_CHARS - 1] + "\u2026"


def read_records(stream):
    """Yields (input line number, record dict) for each non-blank JSON line."""
    for number, text in enumerate(stream, 1):
        if text.strip():
            try:
                record = json.loads(text)
            except json.JSONDecodeError as error:
                raise SystemExit(f"{stream.name}:{number}: not JSON: {error}")
            if not isinstance(record, dict):
                raise SystemExit(f"{stream.name}:{number}: not a JSON object")
            yield number, record


def check_record(record):
    """Returns a problem description, or None when the record can be plotted."""
    for key in ("line", "source", "target", "alignment"):
        if key not in record:
            return f'no "{key}" field' + (" (translate with --alignment soft)"
                                           if key == "alignment" else "")
    if not isinstance(record["line"], int) or record["line"] < 0:
        return '"line" is not a line number'
    rows, cols = len(record["target"]) + 1, len(record["source"]) + 1
    matrix = record["alignment"]
    if len(matrix) != rows or any(len(row) != cols for row in matrix):
        return f"alignment is not {rows}x{cols} (target+</s> x source+</s>)"
    return None


def plot(record, path, fmt, cmap, dpi):
    """Draws one heatmap and writes it to `path` atomically (temporary name, then rename)."""
    source = [shorten(t) for t in record["source"]] + [EOS]
    target = [shorten(t) for t in record["target"]] + [EOS]
    # ~0.28 inch per token keeps 50+ token sentences legible at 8pt labels.
    width = max(4.0, 0.28 * len(source) + 2.5)
    height = max(3.0, 0.28 * len(target) + 2.0)
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(record["alignment"], cmap=cmap, vmin=0.0, vmax=1.0,
                      aspect="equal", interpolation="nearest")
    ax.set_xticks(range(len(source)))
    ax.set_xticklabels(source, rotation=60, ha="left", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(len(target)))
    ax.set_yticklabels(target, fontsize=8)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    score = record.get("score")
    title = f"line {record['line'] + 1}"
    if isinstance(score, (int, float)):
        title += f"   score {score:.4f}"
    ax.set_title(title, loc="left", fontsize=10, pad=12)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02).ax.tick_params(labelsize=8)
    temporary = f"{path}.tmp.{os.getpid()}"
    try:
        # "tight" grows the canvas to whatever the slanted labels and title need.
        fig.savefig(temporary, format=fmt, dpi=dpi, bbox_inches="tight", pad_inches=0.15)
        os.replace(temporary, path)
    finally:
        plt.close(fig)
        if os.path.exists(temporary):
            os.remove(temporary)


def main():
    parser = argparse.ArgumentParser(
        description="Plot attention heatmaps from `rnnsearch translate --format json "
                    "--alignment soft` output, one file per sentence.")
    parser.add_argument("input", nargs="?", default="-",
                        type=argparse.FileType("r", encoding="utf-8"),
                        help="JSON-lines file (default: standard input)")
    parser.add_argument("--out-dir", default="heatmaps", help="output directory (created)")
    parser.add_argument("--format", choices=["png", "pdf"], default="png")
    parser.add_argument("--lines", type=parse_lines, default=None,
                        help="1-based input lines to plot, e.g. 1-10,42 (default: all)")
    parser.add_argument("--cmap", default="viridis", help="matplotlib colour map")
    parser.add_argument("--dpi", type=int, default=150, help="resolution of PNG output")
    args = parser.parse_args()
    if args.cmap not in plt.colormaps():
        parser.error(f"unknown colour map {args.cmap!r}")

    use_installed_fonts()
    os.makedirs(args.out_dir, exist_ok=True)
    stream = args.input
    occurrences, written, failed = {}, 0, 0
    with stream:
        for number, record in read_records(stream):
            if (args.lines is not None and isinstance(record.get("line"), int)
                    and record["line"] + 1 not in args.lines):
                continue  # unselected records are not even checked
            problem = check_record(record)
            if problem:
                print(f"{stream.name}:{number}: skipped: {problem}", file=sys.stderr)
                failed += 1
                continue
            line = record["line"] + 1
            occurrences[line] = occurrences.get(line, 0) + 1
            suffix = f"-{occurrences[line]}" if occurrences[line] > 1 else ""
            path = os.path.join(args.out_dir, f"{line:05d}{suffix}.{args.format}")
            plot(record, path, args.format, args.cmap, args.dpi)
            written += 1
    print(f"wrote {written} heatmap(s) to {args.out_dir}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
