#!/usr/bin/env python3
"""Bounded load test of `rnnsearch serve`: C concurrent clients, each sending one sentence per
POST /translate (kept-alive connection) until the sentences of FILE have all been sent once.
Prints sentences/s and the p50/p90/p99 latency; stops by itself.

    scripts/serve_bench.py --port 8080 --clients 32 --input corpora/.../test_2016_flickr.en [--beam-size 5]

scripts/serve_load.py runs it (load()) for the table of docs/serve.md.
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time


def percentile(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


def summary(latencies, seconds):
    """sentences/s and latency percentiles (ms) of one run."""
    return {
        "sentences": len(latencies),
        "seconds": seconds,
        "sent/s": len(latencies) / seconds if seconds else float("nan"),
        "p50_ms": 1000 * percentile(latencies, 50),
        "p90_ms": 1000 * percentile(latencies, 90),
        "p99_ms": 1000 * percentile(latencies, 99),
        "mean_ms": 1000 * statistics.fmean(latencies) if latencies else float("nan"),
    }


def load(host, port, clients, sentences, beam_size):
    """Sends every sentence once from `clients` threads; returns (summary, translations, errors)."""
    translations = [None] * len(sentences)
    latencies = []
    errors = []
    next_index = [0]
    lock = threading.Lock()

    def client():
        connection = http.client.HTTPConnection(host, port, timeout=120)
        while True:
            with lock:
                k = next_index[0]
                next_index[0] += 1
            if k >= len(sentences):
                break
            body = json.dumps({"q": sentences[k], "beam_size": beam_size})
            start = time.perf_counter()
            try:
                connection.request("POST", "/translate", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException) as e:
                errors.append(str(e))
                connection.close()
                connection = http.client.HTTPConnection(host, port, timeout=120)
                continue
            elapsed = time.perf_counter() - start
            if response.status != 200:
                errors.append(data.decode("utf-8", "replace"))
                continue
            translations[k] = json.loads(data)["translations"][0]["translation"]
            with lock:
                latencies.append(elapsed)
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return summary(latencies, time.perf_counter() - start), translations, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--input", required=True, help="sentences, one per line")
    parser.add_argument("--limit", type=int, default=0, help="send only the first N sentences")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--output", help="write the translations here, in input order")
    args = parser.parse_args()

    with open(args.input, encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f]
    if args.limit:
        sentences = sentences[: args.limit]
    result, translations, errors = load(args.host, args.port, args.clients, sentences, args.beam_size)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            for t in translations:
                f.write((t or "") + "\n")
    print(f"clients={args.clients} errors={len(errors)} " + " ".join(
        f"{key}={value:.1f}" if isinstance(value, float) else f"{key}={value}" for key, value in result.items()))
    if errors:
        print("first error:", errors[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
