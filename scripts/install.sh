#!/usr/bin/env bash
# Builds fatchat in release mode and installs it under PREFIX (default /usr/local):
#
#   PREFIX/bin/fatchat
#   PREFIX/share/fatchat/                               help text and alert formats
#   PREFIX/share/man/man1/fatchat.1                     the manual page (docs/fatchat.1)
#   PREFIX/share/bash-completion/completions/fatchat
#   PREFIX/share/zsh/site-functions/_fatchat
#   PREFIX/share/fish/vendor_completions.d/fatchat.fish
#
#   scripts/install.sh [PREFIX]
#
# FATCHAT_INSTALL_FROM=DIR installs the products already built in DIR instead of building
# (the tests install the debug build this way, since `swift test` holds the build directory).
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-/usr/local}

if [ -n "${FATCHAT_INSTALL_FROM:-}" ]; then
  products=$FATCHAT_INSTALL_FROM
else
  swift build -c release --product fatchat
  products=$(swift build -c release --show-bin-path)
fi
resources=$products/Fatchat_FatchatResources.resources
for needed in "$products/fatchat" "$resources/help.txt" docs/fatchat.1; do
  [ -e "$needed" ] || { echo "install.sh: $needed is missing" >&2; exit 1; }
done

install -d "$prefix/bin" "$prefix/share/fatchat" "$prefix/share/man/man1" \
  "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
  "$prefix/share/fish/vendor_completions.d"
install -m 0755 "$products/fatchat" "$prefix/bin/fatchat"
install -m 0644 "$resources"/* "$prefix/share/fatchat/"
install -m 0644 docs/fatchat.1 "$prefix/share/man/man1/fatchat.1"
# The completion scripts come from the installed binary, so they match it.
"$prefix/bin/fatchat" --generate-completion-script bash >"$prefix/share/bash-completion/completions/fatchat"
"$prefix/bin/fatchat" --generate-completion-script zsh >"$prefix/share/zsh/site-functions/_fatchat"
"$prefix/bin/fatchat" --generate-completion-script fish >"$prefix/share/fish/vendor_completions.d/fatchat.fish"
echo "installed fatchat in $prefix; try: man -M $prefix/share/man fatchat"
