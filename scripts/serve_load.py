#!/usr/bin/env python3
"""The load table of docs/serve.md, side by side in one run: `rnnsearch translate` on the whole
file (its own decoding time, without loading the model), then for 1, 8, 32 and 128 concurrent
clients a fresh `rnnsearch serve` loaded by serve_bench.load() (one sentence per request,
beam 5), and the first sentences translated one at a time in-process (the Python module's
Translator.translate, the library call without HTTP, on 1 thread and on --threads) as the
1-client latency's yardstick. As the host's speed drifts by tens of percent within seconds,
the two are also compared sentence by sentence: each sentence sent twice to a fresh server by
one client, then translated twice in-process (--threads; which goes first alternates), the
second of each timed (both warm, back to back), giving the median per-sentence ratio.
REPEAT rounds, one of each in turn; the table gives medians. Each server's translations must
equal translate's, byte for byte. Peak RSS of each process from wait4(). Run it on an idle
machine; it stops by itself.

    /usr/bin/python3 scripts/serve_load.py [--model models/en-de-small] [--threads 2] [--repeat 3]
"""
import argparse
import gzip
import http.client
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
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import serve_bench  # noqa: E402


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


def stop_server(proc, errors):
    """SIGTERM; the peak RSS in MB. Exits on request errors or a failed exit."""
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    if errors or status != 0:
        sys.exit(f"serve_load: {len(errors)} errors (first: {errors[:1]}), server exit status {status}")
    return usage.ru_maxrss / 1024


def run_server(binary, model, threads, clients, sentences, work):
    """serve_bench.load() against a fresh server: (summary, translations, peak RSS in MB)."""
    proc, port = start_server(binary, model, threads, work)
    result, translations, errors = serve_bench.load("127.0.0.1", port, clients, sentences, 5)
    return result, translations, stop_server(proc, errors)


def in_process_translator(model, threads):
    """The Python module's Translator (the library call without HTTP), or None without the module."""
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    try:
        import rnnsearch
    except ImportError:
        return None
    return rnnsearch.Translator(model, threads=threads)


def alone_latencies(model, threads, sentences):
    """Seconds to translate each sentence by itself in-process, or None without the module."""
    translator = in_process_translator(model, threads)
    if translator is None:
        return None
    latencies = []
    for sentence in sentences:
        start = time.perf_counter()
        translator.translate([sentence])
        latencies.append(time.perf_counter() - start)
    return latencies


def paired_single(binary, model, threads, sentences, work):
    """Per sentence, the seconds of the second of two requests to a fresh server (one kept-alive
    connection) and of the second of two in-process calls, or None without the module."""
    translator = in_process_translator(model, threads)
    if translator is None:
        return None
    proc, port = start_server(binary, model, threads, work)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(sentence):
        connection.request("POST", "/translate", json.dumps({"q": sentence, "beam_size": 5}),
                           {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            sys.exit("serve_load: " + response.read().decode("utf-8", "replace"))
        response.read()

    def call(sentence):
        translator.translate([sentence])

    served, alone = [], []
    for k, sentence in enumerate(sentences):
        turns = [(request, served), (call, alone)]
        for run, times in (turns if k % 2 == 0 else reversed(turns)):
            run(sentence)  # the first of two: both then run warm
            start = time.perf_counter()
            run(sentence)
            times.append(time.perf_counter() - start)
    connection.close()
    stop_server(proc, [])
    return served, alone


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="models/en-de-small")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--input", default="corpora/multi30k/test_2016_flickr.en.gz")
    parser.add_argument("--single", type=int, default=300, help="sentences sent by the single client")
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "rnnsearch"))
    args = parser.parse_args()
    os.chdir(ROOT)
    opener = gzip.open if args.input.endswith(".gz") else open
    with opener(args.input, "rt", encoding="utf-8") as f:
        sentences = f.read().splitlines()

    rows = {}  # name -> list of (summary, peak RSS MB)
    offline = []  # (lines/s, peak RSS MB)
    ratios, paired_p50 = [], []  # per round: the median per-sentence ratio; (server, in-process) p50 s
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.repeat):
            expected, rate, rss = run_translate(args.binary, args.model, args.input, args.threads, work)
            offline.append((rate, rss))
            for clients in (1, 8, 32, 128):
                sent = sentences[: args.single] if clients == 1 else sentences
                result, translations, rss = run_server(args.binary, args.model, args.threads, clients, sent, work)
                if translations != expected[: len(sent)]:
                    sys.exit(f"serve_load: the server's translations differ from translate's ({clients} clients)")
                rows.setdefault(f"{clients} client{'s' if clients > 1 else ''}", []).append((result, rss))
            for threads in sorted({1, args.threads}):
                alone = alone_latencies(args.model, threads, sentences[: args.single])
                if alone is not None:
                    rows.setdefault(f"one sentence at a time in-process, {threads} thread{'s' if threads > 1 else ''}",
                                    []).append((serve_bench.summary(alone, sum(alone)), float("nan")))
            paired = paired_single(args.binary, args.model, args.threads, sentences[: args.single], work)
            if paired is not None:
                served, alone = paired
                ratios.append(statistics.median([a / b for a, b in zip(served, alone)]))
                paired_p50.append((statistics.median(served), statistics.median(alone)))

    def median(values):
        return statistics.median(values)

    offline_rate = median([rate for rate, _ in offline])
    offline_rss = median([rss for _, rss in offline])
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = re.search(r"Model name:\s*(.*)", cpu).group(1)
    print(f"# {args.model}, beam 5, --threads {args.threads}, {args.repeat} rounds (medians), {name}, "
          f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d')}")
    print("| | sentences/s | of translate's | p50 ms | p90 ms | p99 ms | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(f"| `rnnsearch translate`, {len(sentences)} sentences in one run | {offline_rate:.0f} | 100% | | | | {offline_rss:.0f} |")
    for name, runs in rows.items():
        rate = median([r["sent/s"] for r, _ in runs])
        rss = median([m for _, m in runs])
        print(f"| {name} | {rate:.0f} | {100 * rate / offline_rate:.0f}% | "
              + " | ".join(f"{median([r[k] for r, _ in runs]):.1f}" for k in ("p50_ms", "p90_ms", "p99_ms"))
              + (f" | {rss:.0f} |" if rss == rss else " | |"))
    if ratios:
        print(f"\n1 client against the in-process call on {args.threads} thread(s), sentence by sentence (each "
              "the second of two, back to back), per round: median ratio "
              + ", ".join(f"{r:.2f}" for r in ratios) + f" (median {median(ratios):.2f}; goal <= 1.10); p50 ms "
              + ", ".join(f"{1000 * a:.1f}/{1000 * b:.1f}" for a, b in paired_p50))
    return 0


if __name__ == "__main__":
    sys.exit(main())
