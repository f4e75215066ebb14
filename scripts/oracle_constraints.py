#!/usr/bin/env python3
"""Oracle lexical constraints (Post & Vilar 2018, §4), for `rnnsearch translate --constraints`
and `--avoid` (docs/translating.md), and how many of them translations hold.

  oracle_constraints.py pick FILE [--phrases N] [--max-words W] [--seed S] > constraints.jsonl
      for each line of FILE (a reference translation, or an output whose phrases to avoid),
      N phrases of 1 to W consecutive words (each length equally likely; shorter where that
      length does not fit), at random places that do not overlap; punctuation is stripped from each phrase's ends. One JSON list per
      line, as --constraints reads it ([] when the line has too few words).
  oracle_constraints.py count CONSTRAINTS HYP
      how many of the phrases of each line of CONSTRAINTS line k of HYP holds as whole words, as
      the decoder holds them (words split at spaces, the punctuation at a word's ends a word of
      its own: "Hund." holds "Hund", "Hunde" and "Hund-Welpe" do not, "Hund, der" holds "Hund"
      but not "Hund der"), on one line: "phrases held: P of N (x%), lines holding all: L of M"

Debian's python3, standard library only; a bad line is a one-line error naming the file and line.
"""
import argparse
import json
import random
import string
import sys

PUNCTUATION = string.punctuation + "„“”‚‘’«»…–—"


def words_of(line):
    """The words of a line, punctuation stripped from their ends (words of punctuation alone dropped)."""
    words = (w.strip(PUNCTUATION) for w in line.split())
    return [w for w in words if w]


def tokens_of(line):
    """The words of a line, the punctuation at each one's ends split off as words of their own."""
    tokens = []
    for word in line.split():
        core = word.strip(PUNCTUATION)
        if not core:
            tokens.extend(word)
            continue
        start = word.index(core)
        tokens.extend(word[:start])
        tokens.append(core)
        tokens.extend(word[start + len(core):])
    return tokens


def holds(words, phrase):
    n = len(phrase)
    return any(words[i:i + n] == phrase for i in range(len(words) - n + 1))


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")[:-1]
    except (OSError, UnicodeDecodeError) as error:
        sys.exit("oracle_constraints.py: %s: %s" % (path, error))


def pick(args):
    rng = random.Random(args.seed)
    for line in read_lines(args.file):
        words = line.split()
        free = list(range(len(words)))  # word positions not in a phrase yet
        phrases = []
        for _ in range(args.phrases):
            starts = []
            for length in range(rng.randint(1, args.max_words), 0, -1):  # shorter where it does not fit
                starts = [i for i in free if all(j in free for j in range(i, i + length))
                          and words_of(" ".join(words[i:i + length]))]
                if starts:
                    break
            if not starts:
                break
            start = rng.choice(starts)
            free = [i for i in free if not start <= i < start + length]
            phrases.append((start, " ".join(words[start:start + length]).strip(PUNCTUATION + " ")))
        print(json.dumps([p for _, p in sorted(phrases)], ensure_ascii=False))


def count(args):
    constraints, hyps = read_lines(args.constraints), read_lines(args.hyp)
    if len(constraints) != len(hyps):
        sys.exit("oracle_constraints.py: %s has %d lines, %s %d" % (args.constraints, len(constraints),
                                                                      args.hyp, len(hyps)))
    held = total = lines_all = 0
    for k, (text, hyp) in enumerate(zip(constraints, hyps), 1):
        try:
            phrases = json.loads(text) if text.strip() else []
            if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
                raise ValueError("not a list of strings")
        except ValueError as error:
            sys.exit("oracle_constraints.py: %s:%d: %s" % (args.constraints, k, error))
        tokens = tokens_of(hyp)
        mine = sum(holds(tokens, tokens_of(p)) for p in phrases)
        held, total, lines_all = held + mine, total + len(phrases), lines_all + (mine == len(phrases))
    print("phrases held: %d of %d (%.1f%%), lines holding all: %d of %d" % (
        held, total, 100.0 * held / max(total, 1), lines_all, len(hyps)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("pick", help="phrases of each line of FILE as a --constraints file")
    p.add_argument("file")
    p.add_argument("--phrases", type=int, default=1)
    p.add_argument("--max-words", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    c = commands.add_parser("count", help="how many of the phrases the translations hold")
    c.add_argument("constraints")
    c.add_argument("hyp")
    args = parser.parse_args()
    if args.command == "pick" and (args.phrases < 0 or args.max_words < 1):
        parser.error("--phrases must be at least 0 and --max-words at least 1")
    (pick if args.command == "pick" else count)(args)


if __name__ == "__main__":
    main()
