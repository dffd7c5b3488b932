#!/bin/sh
# make demo: profile the bundled chain workload (main -> a -> b -> c -> hot loop, c in a
# shared library) for 3 seconds and write build/demo.folded and build/demo.svg.
set -e
out=${1:-build}
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: profile needs root (BPF and perf events): run 'sudo make demo'" >&2
	exit 1
fi
"$out/profile" -F 199 -o "$out/demo.folded" -- "$out/tests/workloads/chain_fp" 3
"$out/profile" flamegraph --title "profile demo: main -> a -> b -> c -> hot loop" \
	-o "$out/demo.svg" "$out/demo.folded"
echo "demo: folded stacks in $out/demo.folded (top stacks below)"
sort -t' ' -k2 -nr "$out/demo.folded" | head -3
echo "demo: flame graph in $out/demo.svg (open it in a browser: click to zoom, Ctrl-F to search)"
