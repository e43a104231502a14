#!/usr/bin/env bash
# Rules of the source tree that a review would otherwise have to remember (docs/design.md):
#   1. no production source file (outside tests/ and bench/) over 600 lines;
#   2. no include guard used by two headers;
#   3. libh5pack.a defines only h5pack_-prefixed global symbols (a static link must not clash with a
#      program's own cache_create or pipeline_next);
#   4. no production folder with more than 25 source files (a subsystem per folder, docs/design.md);
#   5. no two production source files with the same base name (pipeline.c in two places misleads);
#   6. samples include only the public headers (h5pack.h, h5pack_sim.h) and files of their own folder.
# Usage: tree_rules.sh SOURCE_DIR LIBH5PACK_A
set -uo pipefail
src=$1 lib=$2 bad=0
cd "$src" || exit 1

long=$(find common convert reader include samples python cmake -type f \
         \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' \) \
         -exec wc -l {} + | awk '$2 != "total" && $1 > 600 {print "  " $2 ": " $1 " lines"}')
if [ -n "$long" ]; then echo "files over 600 lines:"; echo "$long"; bad=1; fi

guards=$(find . -path ./build\* -prune -o -type f \( -name '*.h' -o -name '*.cuh' \) -print0 |
         xargs -0 sed -n 's/^#ifndef \([A-Z0-9_]*_H\)$/\1/p' | sort | uniq -d)
if [ -n "$guards" ]; then echo "include guards used twice:"; echo "$guards" | sed 's/^/  /'; bad=1; fi

prod=(common convert reader include samples python)
crowded=$(find "${prod[@]}" -type d | while read -r d; do
            n=$(find "$d" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
                  -o -name '*.py' \) | wc -l)
            [ "$n" -gt 25 ] && echo "  $d: $n source files"
          done)
if [ -n "$crowded" ]; then echo "folders over 25 source files:"; echo "$crowded"; bad=1; fi

twins=$(find "${prod[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -printf '%f\n' |
        sort | uniq -d)
if [ -n "$twins" ]; then echo "base names used by two production files:"; echo "$twins" | sed 's/^/  /'; bad=1; fi

private=$(find samples -type f \( -name '*.c' -o -name '*.cu' -o -name '*.h' \) | while read -r f; do
            sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
              case "$inc" in h5pack.h|h5pack_sim.h) continue ;; esac
              [ -e "$(dirname "$f")/$inc" ] || echo "  $f: \"$inc\""
            done
          done)
if [ -n "$private" ]; then echo "samples including internal headers (use the public API):"; echo "$private"; bad=1; fi

# ASan adds an ODR indicator "__odr_asan.NAME" next to each global NAME: judged by the NAME it guards.
syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 { n = $3; sub(/^__odr_asan[.]/, "", n) }
                                         NF == 3 && n !~ /^h5pack_/ {print "  " $2 " " $3}')
if [ -n "$syms" ]; then echo "global symbols without the h5pack_ prefix in $lib:"; echo "$syms"; bad=1; fi
nsyms=$(nm -g --defined-only "$lib" | awk 'NF == 3' | wc -l)
# Guard against a check that passes because nm saw nothing.
if [ "$nsyms" -lt 10 ]; then echo "nm found only $nsyms global symbols in $lib"; bad=1; fi

[ $bad -eq 0 ] && echo "tree rules hold: files <= 600 lines, folders <= 25 files, unique base names and" \
                       "include guards, samples on public headers, $nsyms h5pack_ symbols"
exit $bad
