#!/usr/bin/env bash
# The libFuzzer targets of tests/fuzz/ (docs/robustness.md), built by clang
# outside the normal build: each target compiles its own copy of the
# sources it tests, so the configured compiler and libzkroute are
# untouched.  `make fuzz`, `make fuzz-build` and `make fuzz-coverage` call
# this with the build's settings in the environment:
#
#   scripts/fuzz.sh build|run|coverage
#
# run: every target (FUZZ_TARGETS) for FUZZ_SECONDS, FUZZ_JOBS at a time,
# each on a core of its own; new corpus entries go to
# FUZZ_OUT/corpus-TARGET and the checked-in seeds (tests/fuzz/corpus/TARGET)
# stay as they are.  A crash, leak, UB, hang (> 10 s) or broken invariant
# fails the run and leaves its input in FUZZ_OUT/TARGET-crash-*; each run's
# log is FUZZ_OUT/TARGET.log.
# coverage: line and region coverage of the code each target is for,
# replaying its corpus (seeds and what `run` found) through a build
# instrumented for llvm-cov (LLVM_PROFDATA, LLVM_COV; LLVM 14).
set -u
mode=${1:-run}
srcdir=${srcdir:-.}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_JOBS=${FUZZ_JOBS:-2}
FUZZ_TARGETS=${FUZZ_TARGETS:-hosts srvr options path config}
FUZZ_OUT=${FUZZ_OUT:-tests/fuzz/out}
FUZZ_CFLAGS=${FUZZ_CFLAGS:--g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined}
LLVM_PROFDATA=${LLVM_PROFDATA:-llvm-profdata}
LLVM_COV=${LLVM_COV:-llvm-cov}
# The library's C sources (a target without a list of its own takes them
# all), from make.
LIB_SOURCES=${LIB_SOURCES:-}
ZK_CPPFLAGS=${ZK_CPPFLAGS:-} ZK_LDFLAGS=${ZK_LDFLAGS:-} ZK_LIBS=${ZK_LIBS:--lzookeeper_mt}

# The sources target $1 tests, and (coverage) the functions to report.
sources() {
	case $1 in
	hosts) echo zkroute/model/hosts.c ;;
	srvr) echo zkroute/model/srvr.c ;;
	options) echo zkroute/model/options.c zkroute/model/hosts.c ;; # hosts.c: the metrics option's address
	config) echo zkroute/model/dynconfig.c zkroute/model/hosts.c ;;
	path) echo zkroute/model/path.c ;;
	*) for f in $LIB_SOURCES; do case $f in *.c) echo "$f" ;; esac; done ;;
	esac
}
functions() { case $1 in path) echo path_check ;; *) echo . ;; esac; }
# The files whose coverage is reported.
reported() {
	for f in $(sources "$1"); do
		case $1:$f in path:*/path.c | hosts:* | srvr:* | options:*/options.c | config:*/dynconfig.c)
			echo "$srcdir/$f" ;;
		esac
	done
}

compile() { # compile TARGET OUTPUT FLAGS...
	local t=$1 out=$2
	shift 2
	local paths=()
	for f in $(sources "$t"); do paths+=("$srcdir/$f"); done
	# shellcheck disable=SC2086
	"$FUZZ_CC" "$@" -std=gnu11 -pthread -DTHREADED -DZKR_BUILDING_LIBRARY \
		-I"$srcdir/include" -I"$srcdir/zkroute" $ZK_CPPFLAGS \
		"$srcdir/tests/fuzz/fuzz_$t.c" "${paths[@]}" -o "$out" $ZK_LDFLAGS $ZK_LIBS -lm
}

build() {
	mkdir -p "$FUZZ_OUT"
	for t in $FUZZ_TARGETS; do
		echo "  FUZZCC   $FUZZ_OUT/fuzz_$t"
		# shellcheck disable=SC2086
		compile "$t" "$FUZZ_OUT/fuzz_$t" $FUZZ_CFLAGS || exit 1
	done
}

run_one() { # run_one TARGET: in the background, its exit status in TARGET.rc
	local t=$1 dict=()
	mkdir -p "$FUZZ_OUT/corpus-$t"
	[ -f "$srcdir/tests/fuzz/$t.dict" ] && dict=(-dict="$srcdir/tests/fuzz/$t.dict")
	echo "  FUZZ     $t: $FUZZ_SECONDS s"
	(
		"$FUZZ_OUT/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
			-artifact_prefix="$FUZZ_OUT/$t-" "$FUZZ_OUT/corpus-$t" \
			"$srcdir/tests/fuzz/corpus/$t" >"$FUZZ_OUT/$t.log" 2>&1
		echo $? >"$FUZZ_OUT/$t.rc"
	) &
}

summary() { # summary TARGET: one line, or the failure's log; 1 on failure
	local t=$1
	if [ "$(cat "$FUZZ_OUT/$t.rc")" = 0 ]; then
		awk -v t="$t" '/DONE/ { for (i = 1; i <= NF; i++) f[$i] = $(i + 1) }
			/number_of_executed_units/ { n = $2 }
			END { printf "fuzz %-8s %d executions, cov %s, ft %s, corpus %s\n",
			      t, n, f["cov:"], f["ft:"], f["corp:"] }' "$FUZZ_OUT/$t.log"
	else
		echo "fuzz $t: FAILED ($FUZZ_OUT/$t.log):"
		grep -v '^#\|^INFO' "$FUZZ_OUT/$t.log" | tail -n 40
		return 1
	fi
}

run() {
	build
	local fail=0
	set -- $FUZZ_TARGETS
	while [ $# -gt 0 ]; do
		local batch=()
		for _ in $(seq 1 "$FUZZ_JOBS"); do
			[ $# -gt 0 ] || break
			run_one "$1"
			batch+=("$1")
			shift
		done
		wait
		for t in "${batch[@]}"; do summary "$t" || fail=1; done
	done
	exit $fail
}

coverage() {
	mkdir -p "$FUZZ_OUT"
	for t in $FUZZ_TARGETS; do
		compile "$t" "$FUZZ_OUT/cov_$t" -g -O0 -fsanitize=fuzzer -fprofile-instr-generate \
			-fcoverage-mapping || exit 1
		mkdir -p "$FUZZ_OUT/corpus-$t"
		LLVM_PROFILE_FILE="$FUZZ_OUT/cov_$t.profraw" "$FUZZ_OUT/cov_$t" -runs=0 \
			"$FUZZ_OUT/corpus-$t" "$srcdir/tests/fuzz/corpus/$t" >/dev/null 2>&1 || exit 1
		"$LLVM_PROFDATA" merge -sparse "$FUZZ_OUT/cov_$t.profraw" \
			-o "$FUZZ_OUT/cov_$t.profdata" || exit 1
		echo "fuzz coverage $t:"
		# shellcheck disable=SC2046
		"$LLVM_COV" report -show-functions "$FUZZ_OUT/cov_$t" \
			-instr-profile="$FUZZ_OUT/cov_$t.profdata" $(reported "$t") |
			awk -v re="$(functions "$t")" 'NR <= 2 || $1 ~ re || /^TOTAL/'
	done
}

case $mode in
build) build ;;
run) run ;;
coverage) coverage ;;
*) echo "usage: scripts/fuzz.sh build|run|coverage" >&2; exit 2 ;;
esac
