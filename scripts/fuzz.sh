#!/usr/bin/env bash
# Runs the fuzz targets of issue 11 with libFuzzer, each for a bounded time, one after the other.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET…]
#
# TARGET is one of stored-fields, change-rows, change-rows-any-schema,
# predicate, bot-input (all by default); SECONDS_PER_TARGET defaults to 60. Each target starts from its
# committed corpus, Tests/FuzzCorpus/<target>/, and keeps going after a crash
# (libFuzzer's fork mode, one job), so one run finds every trap it can reach.
#
# Crashes are saved under .build-fuzz/crashes/<target>/ (git-ignored); the
# script exits 1 when there is any. Replay one with a readable backtrace:
#   swift run FatchatFuzz <target> .build-fuzz/crashes/<target>/crash-…
#
# FUZZ_UPDATE_CORPUS=1 merges what the run found into Tests/FuzzCorpus/<target>/
# (`-set_cover_merge=1` on their first 1 KB: a small set of inputs with the same coverage; the
# seed-* files stay).
# FUZZ_NICE (default 10) is the nice level of the build and the fuzzers.
# Not part of `swift test`: the build needs `-sanitize=fuzzer`.
set -euo pipefail

cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(stored-fields change-rows change-rows-any-schema predicate bot-input)
case $seconds in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET…]" >&2; exit 2 ;; esac

scratch=.build-fuzz
nice_level=${FUZZ_NICE:-10}

echo "== building FatchatFuzz with -sanitize=fuzzer into $scratch"
# lld: gold fails with "internal error in format_file_lineno" on this link.
nice -n "$nice_level" swift build -c release --product FatchatFuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING -Xswiftc -use-ld=lld
fuzzer="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/FatchatFuzz"

# A Swift trap is SIGILL; the Swift backtracer would take it before libFuzzer could save the input.
export SWIFT_BACKTRACE=enable=no

# Prints one line per kind of crash among the files given: how many, the trap's message, the first
# frame in Fatchat's modules, and one input that shows it.
kinds_of_crash() {
    local target=$1; shift
    for crash in "$@"; do
        local out message frame
        out=$("$fuzzer" "$target" "$crash" 2>&1 || true)
        message=$(grep -m1 -E 'Fatal error|ERROR: libFuzzer' <<<"$out" | sed -E 's/, row: .*//; s/^==[0-9]+== //' || true)
        frame=$(grep -E '^ *#[0-9]+ .* in \$s(11RecordStore|11FatchatCore)' <<<"$out" | head -n 1 | sed -E 's/.* in (\$s[^ ]+).*/\1/' || true)
        printf '%s | %s\t%s\n' "${message:-no trap when replayed}" "${frame:-?}" "$crash"
    done | sort | awk -F'\t' '{ n[$1]++; if (!($1 in ex)) ex[$1] = $2 } END { for (k in n) printf "   %4d × %s\n          e.g. %s\n", n[k], k, ex[k] }' \
        | swift demangle --simplified
}

status=0
summary=()
for target in "${targets[@]}"; do
    corpus=Tests/FuzzCorpus/$target
    [ -d "$corpus" ] || { echo "no corpus at $corpus: not a target" >&2; exit 2; }
    work=$scratch/work/$target
    crashes=$scratch/crashes/$target
    log=$scratch/logs/$target.log
    mkdir -p "$work" "$crashes" "$(dirname "$log")"
    dict=()
    [ -f "Tests/FuzzCorpus/$target.dict" ] && dict=(-dict="Tests/FuzzCorpus/$target.dict")
    find "$crashes" -type f >"$scratch/crashes-before"

    echo "== $target: ${seconds}s from $corpus ($(find "$corpus" -type f | wc -l) inputs); log in $log"
    # New inputs go to the first directory ($work); the committed corpus is only read.
    nice -n "$nice_level" "$fuzzer" "$target" -max_total_time="$seconds" -fork=1 -ignore_crashes=1 \
        -ignore_timeouts=1 -ignore_ooms=1 -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
        -artifact_prefix="$crashes/" "${dict[@]}" "$work" "$corpus" >"$log" 2>&1 || true

    # Fork mode reports "#RUNS: cov: … ft: … corp: …" lines; the last one holds the totals.
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 || true)
    runs=$(sed -nE 's/^#([0-9]+):.*/\1/p' <<<"$last")
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    rate=$(( ${runs:-0} / (seconds > 0 ? seconds : 1) ))
    mapfile -t new < <(find "$crashes" -type f | grep -vxF -f "$scratch/crashes-before" || true)
    found=${#new[@]}
    line="$target: ${runs:-?} executions in ${seconds}s (${rate} exec/s), coverage ${cov:-?}, $found new crash(es) in $crashes/"
    summary+=("$line")
    echo "$line"
    if [ "$found" -gt 0 ]; then
        status=1
        kinds_of_crash "$target" "${new[@]}"
    fi

    if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ]; then
        merged=$scratch/merged/$target
        rm -rf "$merged"
        mkdir -p "$merged"
        nice -n "$nice_level" "$fuzzer" "$target" -set_cover_merge=1 -timeout=10 -max_len=1024 "$merged" "$corpus" "$work" \
            >>"$log" 2>&1 || true
        # The hand-written seed-* inputs stay as they are; libFuzzer names its copies by SHA-1.
        for seed in "$corpus"/seed-*; do
            [ -f "$seed" ] && rm -f "$merged/$(sha1sum "$seed" | cut -d' ' -f1)"
        done
        find "$corpus" -type f ! -name 'seed-*' -delete
        cp "$merged"/* "$corpus"/ 2>/dev/null || true
        echo "   corpus now $(find "$corpus" -type f | wc -l) inputs, $(du -sb "$corpus" | cut -f1) bytes"
    fi
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"
