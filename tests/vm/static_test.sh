#!/bin/bash
# SPDX-License-Identifier: MIT OR GPL-2.0
#
# static_test - the statically linked tool (make static) is static (no
# program interpreter, no dynamic section) and runs the demo through the
# kernel exactly as the dynamic one does: scripts/demo with
# COLIBRI=build/colibri-static, then with build/colibri after unloading the
# model, print the same device report, text, model list and stats (the
# timing line aside).  colibri serve is the one command it lacks (the
# Makefile's "static tool"): it says so and exits 2.  Runs in the vm-run
# guest; prints TAP.
set -u
build=${COLIBRI_BUILD:?run me in the vm-run guest}
n=0 failed=0
tap() {
	local ok=$1 name=$2 note
	shift 2
	n=$((n + 1))
	if [ "$ok" = 0 ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=$((failed + 1))
		for note in "$@"; do
			printf '%s\n' "$note" | sed 's/^/# /'
		done
	fi
}
static=$build/colibri-static
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

hdr=$(readelf -ld "$static" 2>&1)
tap $(test -x "$static" && ! echo "$hdr" | grep -qE 'INTERP|Dynamic section'; echo $?) \
	"colibri-static has no interpreter and no dynamic section" "$(echo "$hdr" | grep -E 'INTERP|Dynamic|interpreter')"

# The demo, shorter; the timing line differs from run to run.
demo() {
	COLIBRI=$1 TOKENS=40 scripts/demo > "$2" 2>&1
	local rc=$?
	"$build/colibri" unload shakespeare-moe >> "$2.unload" 2>&1
	return $rc
}
demo "$static" "$tmp/static.out"
tap $? "scripts/demo runs with COLIBRI=colibri-static" "$(tail -n 5 "$tmp/static.out")"
tap $(grep -q '^colibri: backend: kernel' "$tmp/static.out" && grep -q '^ROMEO:' "$tmp/static.out"; echo $?) \
	"colibri-static generated through the kernel" "$(head -n 20 "$tmp/static.out")"
demo "$build/colibri" "$tmp/dynamic.out"
tap $? "scripts/demo runs with the dynamic colibri" "$(tail -n 5 "$tmp/dynamic.out")"
# (Files, not <(...): the guest's /dev has no /dev/fd.)
# The timing line may follow the text on its line (stderr after stdout).
sed 's/colibri: prompt [0-9]* tokens in .*//' "$tmp/static.out" > "$tmp/static.cmp"
sed 's/colibri: prompt [0-9]* tokens in .*//' "$tmp/dynamic.out" > "$tmp/dynamic.cmp"
d=$(diff "$tmp/static.cmp" "$tmp/dynamic.cmp" 2>&1)
tap $? "both print the same report, text, list and stats" "$d"
out=$("$static" serve --model shakespeare-moe 2>&1)
rc=$?
tap $(test $rc = 2 && echo "$out" | grep -q 'not in the static build'; echo $?) \
	"colibri-static serve says it is not in the static build (exit 2)" "rc $rc: $out"
echo "1..$n"
[ $failed = 0 ]
