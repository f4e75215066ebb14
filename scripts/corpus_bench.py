#!/usr/bin/python3
"""Time and memory of `rnnsearch train` from start to its first updates (docs/scaling.md).

Runs one training command (under `mpirun -np N` with --ranks N), reads its log as it comes
and samples the memory of its whole process tree every 0.1 s:

    scripts/corpus_bench.py --corpus /tmp/synth20m --model /tmp/m20 -- --preset small --threads 2
    scripts/corpus_bench.py --corpus /tmp/synth20m --model /tmp/m20 --ranks 2 -- --preset small --threads 1

--corpus PREFIX reads PREFIX.en and PREFIX.de (or PREFIX.en.gz and PREFIX.de.gz); validation is
Multi30k's. Prints one line of JSON: seconds from the start to the log line saying the
corpus is ready ("train: N pairs"), to the first update's line, and to the end; the peak over
the samples of the tree's summed RSS, of its summed PSS (proportional set size: a page
shared by two ranks counts half in each, so the sum is the memory the job really takes) and
of the PSS of its mappings of corpus.bin; and what the log said of corpus.bin. Standard library only.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tree(root):
    """The pids of root and its descendants."""
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(children.get(pid, []))
    return pids


def memory_kb(pid):
    """(RSS, PSS, PSS of its mapping of corpus.bin) of a process in kB; zeros once it is gone."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            fields = dict(re.findall(r"^(\w+):\s+(\d+) kB", f.read(), re.M))
        corpus = 0
        with open("/proc/%d/smaps" % pid) as f:
            in_corpus = False
            for line in f:
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    in_corpus = line.rstrip().endswith("/corpus.bin")
                elif in_corpus and line.startswith("Pss:"):
                    corpus += int(line.split()[1])
        return int(fields.get("Rss", 0)), int(fields.get("Pss", 0)), corpus
    except OSError:
        return 0, 0, 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rnnsearch", default=os.path.join(REPO, "build", "rnnsearch"))
    parser.add_argument("--corpus", required=True, help="PREFIX of PREFIX.en[.gz] and PREFIX.de[.gz]")
    parser.add_argument("--model", required=True)
    parser.add_argument("--ranks", type=int, default=1, help="MPI ranks (mpirun -np N --oversubscribe)")
    parser.add_argument("--updates", type=int, default=1, help="--max-updates of the run")
    parser.add_argument("extra", nargs="*", help="more train options (after --)")
    args = parser.parse_args()

    gz = "" if os.path.exists(args.corpus + ".en") else ".gz"
    multi30k = os.path.join(REPO, "corpora", "multi30k")
    command = [args.rnnsearch, "train", "--train-src", args.corpus + ".en" + gz, "--train-tgt",
               args.corpus + ".de" + gz, "--valid-src", os.path.join(multi30k, "val.en.gz"), "--valid-tgt",
               os.path.join(multi30k, "val.de.gz"), "--model", args.model, "--max-updates", str(args.updates),
               "--log-freq", "1"] + args.extra
    env = dict(os.environ)
    if args.ranks > 1:
        command = ["mpirun", "-np", str(args.ranks), "--oversubscribe"] + command
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    start = time.monotonic()
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env)
    peak = {"rss": 0, "pss": 0, "corpus": 0}
    done = threading.Event()

    def sample():
        while not done.is_set():
            total = [0, 0, 0]
            for pid in tree(process.pid):
                total = [a + b for a, b in zip(total, memory_kb(pid))]
            for key, value in zip(("rss", "pss", "corpus"), total):
                peak[key] = max(peak[key], value)
            done.wait(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    result = {"command": " ".join(command)}
    log = []
    for line in process.stderr:
        line = line.rstrip("\n")
        log.append(line)
        now = round(time.monotonic() - start, 1)
        if line.startswith("train: ") and "corpus_ready_s" not in result:
            result["corpus_ready_s"] = now
        if re.match(r"update \d+ epoch", line) and "first_update_s" not in result:
            result["first_update_s"] = now
        if "corpus.bin" in line:
            result["corpus_bin"] = line
    status = process.wait()
    done.set()
    sampler.join()
    result.update(exit=status, total_s=round(time.monotonic() - start, 1),
                  peak_rss_mb=round(peak["rss"] / 1024), peak_pss_mb=round(peak["pss"] / 1024),
                  peak_corpus_bin_pss_mb=round(peak["corpus"] / 1024))
    if status != 0:
        result["log_tail"] = log[-5:]
    print(json.dumps(result))
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
