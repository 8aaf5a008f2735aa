#!/bin/bash
# SPDX-License-Identifier: MIT OR GPL-2.0
#
# units_test - colibri-model@.service does what it says, with the real
# commands: its ExecStart and ExecStop lines, expanded the way systemd
# expands them (%i the instance; ${VAR} one word and $VAR split on blanks,
# from the EnvironmentFile), pin the model of NAME.conf under NAME, make it
# usable by name from another process, and unload it.  The guest runs no
# systemd, so this test plays its part: it reads the unit from
# scripts/system/, points @BINDIR@ at the build and @SYSCONFDIR@ at a
# scratch /etc, and leaves out ExecStartPre (modprobe: the module of this
# run was insmod'ed from the build tree, not installed).  Prints TAP.
set -u
build=${COLIBRI_BUILD:?run me in the vm-run guest}
top=$(pwd)
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
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

unit=$top/scripts/system/colibri-model@.service
inst=unitdemo
etc=$tmp/etc
mkdir -p "$etc/colibri"
cat > "$etc/colibri/$inst.conf" <<CONF
# as an administrator writes it
MODEL=$top/models/shakespeare-moe.colibri
LOAD_OPTIONS=
CONF

# key KEY: the value of KEY= in the unit, @DIRS@ substituted.
key() {
	sed -n "s/^$1=//p" "$unit" | sed -e "s|@BINDIR@|$build|g" -e "s|@SYSCONFDIR@|$etc|g"
}
envfile=$(key EnvironmentFile | sed "s/%i/$inst/g")
tap $(test "$envfile" = "$etc/colibri/$inst.conf"; echo $?) "EnvironmentFile is SYSCONFDIR/colibri/%i.conf" \
	"EnvironmentFile: $envfile"

# run KEY: runs the unit's KEY= command line, as systemd would.
run() {
	local line w v args=()
	line=$(key "$1")
	(
		set -a
		. "$envfile"
		set +a
		for w in $line; do
			w=${w//%i/$inst}
			case $w in
			'${'*'}') v=${w#'${'}; v=${v%'}'}; args+=("${!v}") ;;
			'$'*) v=${w#'$'}; args+=(${!v}) ;;
			*) args+=("$w") ;;
			esac
		done
		echo "+ ${args[*]}"
		"${args[@]}"
	)
}

run ExecStart > "$tmp/start.log" 2>&1
tap $? "ExecStart (colibri load) succeeds" "$(cat "$tmp/start.log")"
ls=$("$build/colibri" ls 2>&1)
tap $(echo "$ls" | grep -q "^$inst "; echo $?) "the model is pinned under the instance name" "$ls"
gen=$("$build/colibri" generate --model "$inst" --backend kernel --prompt ROMEO: \
	--max-new-tokens 5 2>&1)
tap $? "another process generates from it by name" "$gen"
run ExecStop > "$tmp/stop.log" 2>&1
tap $? "ExecStop (colibri unload --wait) succeeds" "$(cat "$tmp/stop.log")"
ls=$("$build/colibri" ls 2>&1)
tap $(echo "$ls" | grep -q "^$inst "; test $? = 1; echo $?) "the model is gone after stop" "$ls"
echo "1..$n"
[ $failed = 0 ]
