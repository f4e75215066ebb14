#!/usr/bin/env bash
# The Python module's overhead over the command line (docs/python.md): translates
# test_2016_flickr (1000 sentences) with `rnnsearch translate` and with one
# Translator.translate call, same model, threads and precision, best of REPEAT runs each, and
# prints the ratios (the issue's bar: within 1.05, and 1.15 with return_attention=True). The
# command line's time is the one it reports itself ("N lines in X s": decoding, without
# loading the model), as the Python call's excludes loading too. Checks that the translations
# are the same. Run it on an otherwise idle machine.
#   MODEL=models/en-de-small THREADS=2 REPEAT=3 scripts/python_overhead.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export MODEL=${MODEL:-models/en-de-small} THREADS=${THREADS:-2} REPEAT=${REPEAT:-3} BUILD=${BUILD:-build}
PYTHONPATH="$BUILD/python" python3 - <<'PY'
import gzip, os, re, subprocess, time
import rnnsearch

model, threads, repeat, build = os.environ["MODEL"], int(os.environ["THREADS"]), int(os.environ["REPEAT"]), os.environ["BUILD"]
path = "corpora/multi30k/test_2016_flickr.en.gz"
with gzip.open(path, "rt", encoding="utf-8") as f:
    sentences = f.read().splitlines()
cli_times = []
for _ in range(repeat):
    done = subprocess.run([build + "/rnnsearch", "translate", "-m", model, "-i", path, "--threads", str(threads)],
                          capture_output=True, check=True)
    cli_times.append(float(re.search(r"lines in ([0-9.e+-]+) s", done.stderr.decode()).group(1)))
cli = done.stdout.decode("utf-8").splitlines()
translator = rnnsearch.Translator(model, threads=threads)
print("rnnsearch translate: %.3f s (%d sentences, %d threads, projection in %s, CPU %s)"
      % (min(cli_times), len(sentences), threads, translator.precision, rnnsearch.cpu()))
for attention in (False, True):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        results = translator.translate(sentences, return_attention=attention)
        times.append(time.perf_counter() - start)
    assert [r.text for r in results] == cli, "the translations differ from the command line's"
    print("Translator.translate(return_attention=%s): %.3f s, %.3fx the command line"
          % (attention, min(times), min(times) / min(cli_times)))
PY
