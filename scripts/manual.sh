#!/usr/bin/env bash
# Writes fatchat's manual page: the part swift-argument-parser's generate-manual plugin makes from
# the command-line definitions, then the chat commands and keys (`fatchat manual-sections`, from the
# same grammar and help text as /help), then docs/manual.mdoc, written by hand.
#
#   scripts/manual.sh [OUTPUT] [CONFIGURATION]    default: docs/fatchat.1, debug
set -euo pipefail
cd "$(dirname "$0")/.."
output=${1:-docs/fatchat.1}
configuration=${2:-debug}

swift package plugin generate-manual --configuration "$configuration" >/dev/null
generated=.build/plugins/GenerateManual/outputs/fatchat/fatchat.1
binary=$(swift build -c "$configuration" --show-bin-path)/fatchat
[ -s "$generated" ] || { echo "manual.sh: the plugin made no $generated" >&2; exit 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# The hidden subcommand is for this script only, so it leaves the page (its entry ends at its
# option list's .El); and docs/manual.mdoc says more about exit codes than the generic .Ex -std.
awk '/^\.It Em manual-sections$/ { skip = 1; next }
     skip { if ($0 == ".El") skip = 0; next }
     $0 == ".Sh \"EXIT STATUS\"" || $0 == ".Ex -std" { next }
     { print }' "$generated" >"$tmp"
"$binary" manual-sections >>"$tmp"
cat docs/manual.mdoc >>"$tmp"
mv "$tmp" "$output"
trap - EXIT
echo "wrote $output"
