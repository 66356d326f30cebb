#!/usr/bin/env bash
# Runs every fuzz target of the module for FUZZTIME each, one after the
# other, then copies the corpus entries the fuzzer found into each package's
# testdata/fuzz/<Target>/, so that `go test` replays them from then on.
#
#   FUZZTIME=10m hack/fuzz.sh            # every target
#   FUZZTIME=10m hack/fuzz.sh FuzzBuild  # the named targets only
#   FUZZFLAGS=-parallel=1 hack/fuzz.sh   # extra go test flags
set -euo pipefail

fuzztime=${FUZZTIME:-30s}
cd "$(dirname "$0")/.."
module=$(go list -m)
cache=$(go env GOCACHE)/fuzz

# "package-dir target" for every func Fuzz... in a _test.go file.
targets=$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's|^\./(.*)/[^/]+_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort)

while read -r dir target; do
	if [[ $# -gt 0 && ! " $* " =~ " $target " ]]; then
		continue
	fi
	echo "== $target in ./$dir for $fuzztime"
	go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" ${FUZZFLAGS:-} "./$dir"
	found="$cache/$module/$dir/$target"
	if [[ -d $found ]]; then
		mkdir -p "$dir/testdata/fuzz/$target"
		before=$(find "$dir/testdata/fuzz/$target" -type f | wc -l)
		cp -n "$found"/* "$dir/testdata/fuzz/$target/"
		after=$(find "$dir/testdata/fuzz/$target" -type f | wc -l)
		echo "   corpus of $target: $before -> $after entries in $dir/testdata/fuzz/$target"
	fi
done <<<"$targets"
