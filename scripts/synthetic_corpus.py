#!/usr/bin/python3
"""The synthetic corpus of issue 31 and docs/scaling.md: real-size training data made from Multi30k.

Each output line joins two random training pairs of Multi30k (drawn with replacement), so a
line has ~25 tokens a side, as WMT data has, and the vocabulary stays Multi30k's:

    scripts/synthetic_corpus.py --pairs 1000000 --out /tmp/synth1m            # synth1m.en, synth1m.de
    scripts/synthetic_corpus.py --pairs 4500000 --gzip --out /tmp/synth4500k  # synth4500k.en.gz, ...

The same --seed gives the same files. Standard library only (run with /usr/bin/python3).
"""
import argparse
import gzip
import os
import random
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_lines(path):
    """The lines of a (possibly gzipped) UTF-8 file, without their line ends; exits with a
    one-line error naming the file (and the line) if it cannot be read."""
    opener = gzip.open if path.endswith(".gz") else open
    lines = []
    try:
        with opener(path, "rb") as f:
            for line in f:
                lines.append(line.decode("utf-8").rstrip("\r\n"))
    except UnicodeDecodeError:
        sys.exit("synthetic_corpus.py: %s:%d: invalid UTF-8" % (path, len(lines) + 1))
    except (OSError, EOFError) as e:
        sys.exit("synthetic_corpus.py: %s: cannot read: %s" % (path, getattr(e, "strerror", None) or e))
    return lines


def open_output(path, compress):
    # compresslevel 1: gzip's default (9) would make writing 20 M pairs the slow part.
    return gzip.open(path, "wt", encoding="utf-8", compresslevel=1) if compress else open(path, "w", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, required=True, help="lines to write on each side")
    parser.add_argument("--out", required=True, help="output prefix: PREFIX.SRC and PREFIX.TGT (.gz with --gzip)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--gzip", action="store_true", help="gzip the output")
    parser.add_argument("--corpus", default=os.path.join(REPO, "corpora", "multi30k"),
                        help="directory with train.SRC.gz and train.TGT.gz (default: the repository's Multi30k)")
    parser.add_argument("--src", default="en", help="source language (default en)")
    parser.add_argument("--tgt", default="de", help="target language (default de)")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")

    src = read_lines(os.path.join(args.corpus, "train.%s.gz" % args.src))
    tgt = read_lines(os.path.join(args.corpus, "train.%s.gz" % args.tgt))
    if len(src) != len(tgt):
        sys.exit("synthetic_corpus.py: %s and %s training sides differ in length (%d and %d lines)"
                 % (args.src, args.tgt, len(src), len(tgt)))
    suffix = ".gz" if args.gzip else ""
    rng = random.Random(args.seed)
    with open_output("%s.%s%s" % (args.out, args.src, suffix), args.gzip) as out_src, \
            open_output("%s.%s%s" % (args.out, args.tgt, suffix), args.gzip) as out_tgt:
        for _ in range(args.pairs):
            i, j = rng.randrange(len(src)), rng.randrange(len(src))
            out_src.write(src[i] + " " + src[j] + "\n")
            out_tgt.write(tgt[i] + " " + tgt[j] + "\n")


if __name__ == "__main__":
    main()
