#!/usr/bin/env bash
# The main job on a fresh machine: install, then measure ZeroMQ throughput (copy vs
# zero-copy over a size sweep) and latency over tcp, ipc and inproc. Results land
# in out/ as JSON, CSV and offline SVG charts. They are this script's own outputs, so
# a second run replaces the first's (--replace; zmqbench itself refuses to write over a
# saved result unasked): copy out/ elsewhere to keep a run.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
mkdir -p out
if [ -e out/throughput.json ] || [ -e out/latency.json ]; then
    echo "replacing the results of the run before in $(pwd)/out"
fi
.venv/bin/zmqbench thr --size 100 1k 8k 64k 256k 1M --copy true false --replace \
    --json out/throughput.json --csv out/throughput.csv --svg out/throughput.svg
.venv/bin/zmqbench lat --size 1 1k 64k 1M --transport tcp ipc inproc --replace \
    --json out/latency.json --csv out/latency.csv --svg out/latency.svg
echo "results in $(pwd)/out"
