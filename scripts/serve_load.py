#!/usr/bin/env python3
"""The load table of docs/benchmarks.md (Serving), side by side in one run: `rnnsearch translate` on the whole
file (its own decoding time, without loading the model), then for 1, 8, 32 and 128 concurrent
clients a fresh `rnnsearch serve` loaded by build/serve_bench (C++ clients on cpp-httplib,
kept-alive connections, one sentence per request, beam 5; each server's translations must
equal translate's, byte for byte). Then the 1-client latency's yardstick: serve_bench --alone
sends the first sentences one at a time to a fresh server and translates them one at a time
in its own process with the library call the server decodes with, in turns of 20 on each
side (each turn after an untimed warm-up, which side first alternating): as the host's speed
drifts by tens of percent within seconds, only this sentence-by-sentence difference is
stable; its p50 and p99 are the latency the server adds, in ms. REPEAT rounds, one of each in
turn; the table gives medians. Peak RSS of each process from wait4(). Run it on an idle
machine; it stops by itself.

    /usr/bin/python3 scripts/serve_load.py [--model models/en-de-small] [--threads 2] [--repeat 3] [--added-only]
"""
import argparse
import gzip
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def percentile(values, p):
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


def summary(latencies, seconds):
    """sentences/s and latency percentiles (ms) of one run."""
    return {"sent/s": len(latencies) / seconds, "p50_ms": 1000 * percentile(latencies, 50),
            "p90_ms": 1000 * percentile(latencies, 90), "p99_ms": 1000 * percentile(latencies, 99)}


def serve_bench(args):
    """build/serve_bench with these arguments: its JSON; exits on its failure (a failed request too)."""
    proc = subprocess.run([os.path.join(ROOT, "build", "serve_bench")] + [str(a) for a in args],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("serve_load: " + proc.stderr)
    return json.loads(proc.stdout)


def run_translate(binary, model, path, threads, work):
    """(translations, lines/s of decoding, peak RSS in MB)."""
    out, err = os.path.join(work, "offline.out"), os.path.join(work, "offline.err")
    with open(out, "wb") as o, open(err, "wb") as e:
        proc = subprocess.Popen([binary, "translate", "-m", model, "-i", path, "--threads", str(threads)], stdout=o, stderr=e)
    _, status, usage = os.wait4(proc.pid, 0)
    log = open(err, encoding="utf-8").read()
    if status != 0:
        sys.exit("serve_load: translate failed: " + log)
    rate = float(re.search(r"\(([0-9.]+) lines/s\)", log).group(1))
    return open(out, encoding="utf-8").read().splitlines(), rate, usage.ru_maxrss / 1024


def start_server(binary, model, threads, work):
    """A fresh `rnnsearch serve` on a free port: (process, port)."""
    err = os.path.join(work, "serve.err")
    with open(err, "wb") as e:
        proc = subprocess.Popen([binary, "serve", "-m", model, "--port", "0", "--threads", str(threads)], stderr=e)
    for _ in range(600):
        match = re.search(r"listening on http://[0-9.]+:([0-9]+)/", open(err, encoding="utf-8").read())
        if match:
            return proc, int(match.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    sys.exit("serve_load: the server did not start: " + open(err, encoding="utf-8").read())


def stop_server(proc):
    """SIGTERM; the peak RSS in MB. Exits unless the server exits 0."""
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"serve_load: the server's exit status was {status}")
    return usage.ru_maxrss / 1024


def run_server(binary, model, threads, clients, path, count, work):
    """serve_bench's clients against a fresh server: (summary, translations, peak RSS in MB)."""
    proc, port = start_server(binary, model, threads, work)
    out = os.path.join(work, "served.out")
    result = serve_bench(["--port", port, "--input", path, "--clients", clients, "--count", count, "--translations", out])
    rss = stop_server(proc)
    return summary(result["latencies"], result["seconds"]), open(out, encoding="utf-8").read().splitlines(), rss


def paired_single(binary, model, threads, path, count, work):
    """serve_bench --alone against a fresh server: per sentence, the seconds of the second of two
    requests and of the second of two in-process calls (on `threads`, as the server's)."""
    proc, port = start_server(binary, model, threads, work)
    result = serve_bench(["--port", port, "--input", path, "--count", count, "--alone", model, "--threads", threads])
    stop_server(proc)
    return result["served"], result["alone"]


def fixed_cost(binary, model, threads, work, count=2000):
    """A fresh server's round trip of a request with nothing to decode ({"q": ""}), one kept-alive
    C++ client on loopback, `count` times: (p50, p99) in ms. What the server adds to any request
    (HTTP, JSON, admission, response), the client's own time included."""
    path = os.path.join(work, "empty.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n" * count)
    proc, port = start_server(binary, model, threads, work)
    result = serve_bench(["--port", port, "--input", path, "--clients", 1])
    stop_server(proc)
    return 1000 * percentile(result["latencies"], 50), 1000 * percentile(result["latencies"], 99)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="models/en-de-small")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--input", default="corpora/multi30k/test_2016_flickr.en.gz")
    parser.add_argument("--single", type=int, default=300, help="sentences sent by the single client")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "rnnsearch"))
    parser.add_argument("--added-only", action="store_true",
                        help="only the latency the server adds to one client's request (no load table)")
    args = parser.parse_args()
    os.chdir(ROOT)
    with gzip.open(args.input, "rt", encoding="utf-8") if args.input.endswith(".gz") else open(args.input, encoding="utf-8") as f:
        count = len(f.read().splitlines())

    rows = {}  # name -> list of (summary, peak RSS MB)
    offline = []  # (lines/s, peak RSS MB)
    added = []  # per round: (p50, p99) in ms of the per-sentence difference, server - in-process
    fixed = []  # per round: (p50, p99) in ms of an empty request's round trip
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.repeat):
            if not args.added_only:
                expected, rate, rss = run_translate(args.binary, args.model, args.input, args.threads, work)
                offline.append((rate, rss))
            for clients in () if args.added_only else (1, 8, 32, 128):
                sent = args.single if clients == 1 else count
                result, translations, rss = run_server(args.binary, args.model, args.threads, clients, args.input, sent, work)
                if translations != expected[:sent]:
                    sys.exit(f"serve_load: the server's translations differ from translate's ({clients} clients)")
                rows.setdefault(f"{clients} client{'s' if clients > 1 else ''}", []).append((result, rss))
            fixed.append(fixed_cost(args.binary, args.model, args.threads, work))
            served, alone = paired_single(args.binary, args.model, args.threads, args.input, args.single, work)
            differences = [1000 * (a - b) for a, b in zip(served, alone)]
            added.append((percentile(differences, 50), percentile(differences, 99)))
            for name, times in ((f"1 client, the first {args.single} in turns of 20 with the library call", served),
                                ("the library call in-process, the same sentences", alone)):
                rows.setdefault(name, []).append((summary(times, sum(times)), float("nan")))

    def median(values):
        return statistics.median(values)

    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = re.search(r"Model name:\s*(.*)", cpu).group(1)
    family = re.search(r"CPU family:\s*(\d+)", cpu)
    model = re.search(r"Model:\s*(\d+)", cpu)
    print(f"# {args.model}, beam 5, --threads {args.threads}, {args.repeat} rounds (medians), {name}"
          + (f" (lscpu family {family.group(1)} model {model.group(1)})" if family and model else "")
          + f", {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
    print_added(added, fixed, args)
    if args.added_only:
        return 0
    offline_rate = median([rate for rate, _ in offline])
    offline_rss = median([rss for _, rss in offline])
    print("| | sentences/s | of translate's | p50 ms | p90 ms | p99 ms | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(f"| `rnnsearch translate`, {count} sentences in one run | {offline_rate:.0f} | 100% | | | | {offline_rss:.0f} |")
    for name, runs in rows.items():
        rate = median([r["sent/s"] for r, _ in runs])
        rss = median([m for _, m in runs])
        print(f"| {name} | {rate:.0f} | {100 * rate / offline_rate:.0f}% | "
              + " | ".join(f"{median([r[k] for r, _ in runs]):.1f}" for k in ("p50_ms", "p90_ms", "p99_ms"))
              + (f" | {rss:.0f} |" if rss == rss else " | |"))
    return 0


def print_added(added, fixed, args):
    """The latency a request through the server adds to the library call, in ms: the fixed cost
    of a request with nothing to decode, and the paired per-sentence difference."""
    def rounds(pairs):
        return (f"p50 {statistics.median([a for a, _ in pairs]):.3f} ms, p99 {statistics.median([b for _, b in pairs]):.3f} ms"
                " (medians over rounds; per round p50/p99 " + ", ".join(f"{a:.3f}/{b:.3f}" for a, b in pairs) + ")")
    print(f"server's fixed cost, an empty sentence's round trip, 1 kept-alive C++ client on loopback: {rounds(fixed)}; "
          "goal p50 <= 0.3 ms")
    print(f"served minus in-process, sentence by sentence, the first {args.single} sentences in turns of 20 "
          f"({args.threads} threads): {rounds(added)}\n")


if __name__ == "__main__":
    sys.exit(main())
