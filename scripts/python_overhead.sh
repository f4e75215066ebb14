#!/usr/bin/env bash
# The Python module's overhead over the command line (docs/python.md): translates
# test_2016_flickr (1000 sentences) with `rnnsearch translate` and with one
# Translator.translate call, same model, threads and precision, in REPEAT rounds (one of
# each in turn), and prints the ratios of the medians (the issue's bar: within 1.05, and 1.15
# with return_attention=True). The command line's time is the one it reports itself ("N lines
# in X s": decoding, without loading the model), as the Python call's excludes loading too.
# Checks that the translations are the same. Run it on an otherwise idle machine.
#   MODEL=models/en-de-small THREADS=2 REPEAT=5 scripts/python_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export MODEL=${MODEL:-models/en-de-small} THREADS=${THREADS:-2} REPEAT=${REPEAT:-5} BUILD=${BUILD:-build}
PYTHONPATH="$BUILD/python" /usr/bin/python3 - <<'PY'
import gzip, os, re, statistics, subprocess, time
import rnnsearch

model, threads, repeat, build = os.environ["MODEL"], int(os.environ["THREADS"]), int(os.environ["REPEAT"]), os.environ["BUILD"]
path = "corpora/multi30k/test_2016_flickr.en.gz"
with gzip.open(path, "rt", encoding="utf-8") as f:
    sentences = f.read().splitlines()
translator = rnnsearch.Translator(model, threads=threads)
def cli_run():
    done = subprocess.run([build + "/rnnsearch", "translate", "-m", model, "-i", path, "--threads", str(threads)],
                          capture_output=True, check=True)
    cli_run.lines = done.stdout.decode("utf-8").splitlines()
    return float(re.search(r"lines in ([0-9.e+-]+) s", done.stderr.decode()).group(1))
def python_run(attention):
    start = time.perf_counter()
    python_run.results = translator.translate(sentences, return_attention=attention)
    return time.perf_counter() - start
# The three measured in turn, REPEAT rounds: a noisy spell of the machine hits all three.
times = {"cli": [], False: [], True: []}
for _ in range(repeat):
    times["cli"].append(cli_run())
    for attention in (False, True):
        times[attention].append(python_run(attention))
        assert [r.text for r in python_run.results] == cli_run.lines, "the translations differ from the command line's"
cli = statistics.median(times["cli"])
print("rnnsearch translate: median %.3f s of %d (%d sentences, %d threads, projection in %s, CPU %s)"
      % (cli, repeat, len(sentences), threads, translator.precision, rnnsearch.cpu()))
for attention in (False, True):
    median = statistics.median(times[attention])
    print("Translator.translate(return_attention=%s): median %.3f s, %.3fx the command line (rounds: %s)"
          % (attention, median, median / cli, " ".join("%.3f" % (t / c) for t, c in zip(times[attention], times["cli"]))))
PY
