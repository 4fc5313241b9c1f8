#!/usr/bin/env bash
# Builds (or reuses) Dex for the Dex e2e suite (runner/dex/e2e): the dex
# command of github.com/dexidp/dex at the pseudo-version in module/go.mod, as
# a tool dependency from the Go module proxy (`go install …@version` does not
# work for Dex: its go.mod has replace directives). Built without cgo: the
# suite runs Dex on its memory storage, and only the sqlite3 storage needs
# cgo (go-sqlite3 then compiles to a stub that refuses to open). The binary
# is cached outside the repo, keyed by the module files and the build
# command; a warm run costs nothing.
#   TOKEX_DEX_CACHE (default ~/.cache/tokex-dex-e2e)   prints the binary's path last
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${TOKEX_DEX_CACHE:-${HOME:-/root}/.cache/tokex-dex-e2e}
build=(go build -trimpath -ldflags "-s -w" -o)
key=$( (cat "$here"/module/go.mod "$here"/module/go.sum; echo "CGO_ENABLED=0 ${build[*]}") | sha256sum | cut -c1-12)
bin=$cache/bin-$key/dex
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$cache/src" "$(dirname "$bin")"
src=$cache/src/$key
rm -rf "$src" "$bin.tmp"
cp -r "$here/module" "$src"
t0=$(date +%s)
(cd "$src" && CGO_ENABLED=0 "${build[@]}" "$bin.tmp" github.com/dexidp/dex/cmd/dex)
mv "$bin.tmp" "$bin"
echo "dex-e2e: built dex in $(( $(date +%s) - t0 ))s" >&2
echo "$bin"
