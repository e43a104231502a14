#!/usr/bin/env bash
# Rules of the source tree that a review would otherwise have to remember (docs/design.md):
#   1. no production source file (outside tests/ and bench/) over 600 lines, except the public header and
#      the Python loader (splitting them by count alone would scatter one contract over files);
#   2. no include guard used by two headers;
#   3. libh5pack.a defines only h5pack_-prefixed global symbols (a static link must not clash with a
#      program's own cache_create or pipeline_next);
#   4. no production folder with more than 25 source files (a subsystem per folder, docs/design.md);
#   5. no two production source files with the same base name (pipeline.c in two places misleads);
#   6. samples include only the public headers (h5pack.h, h5pack_sim.h) and files of their own folder;
#   7. programs live outside the library: no main() under reader/; h5pack-stats (stats/) includes only the
#      public headers and its own or common/ files;
#   8. one dtype enum: no second set of dtype enumerators, no names list spelled by hand (H5PACK_DTYPE_MAP);
#   9. reader/api never asks what kind of file it reads (stream.h): no tile source, patch or image pipeline
#      there, no branch on patch_size, and a chunk source only in read_image.c (one stored image of an image
#      file) and describe.c (the description of an open chunk source, shared with the simulator).
# Usage: tree_rules.sh SOURCE_DIR LIBH5PACK_A
set -uo pipefail
src=$1 lib=$2 bad=0
cd "$src" || exit 1

long=$(find common convert reader stats include samples python cmake -type f \
         \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.py' \) \
         ! -path include/h5pack.h ! -path python/h5pack/loader.py \
         -exec wc -l {} + | awk '$2 != "total" && $1 > 600 {print "  " $2 ": " $1 " lines"}')
if [ -n "$long" ]; then echo "files over 600 lines:"; echo "$long"; bad=1; fi

guards=$(find . -path ./build\* -prune -o -type f \( -name '*.h' -o -name '*.cuh' \) -print0 |
         xargs -0 sed -n 's/^#ifndef \([A-Z0-9_]*_H\)$/\1/p' | sort | uniq -d)
if [ -n "$guards" ]; then echo "include guards used twice:"; echo "$guards" | sed 's/^/  /'; bad=1; fi

prod=(common convert reader stats include samples python)
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

mains=$(grep -rlE --include='*.c' --include='*.cu' '^[[:space:]]*int[[:space:]]+main[[:space:]]*[(]' reader)
if [ -n "$mains" ]; then echo "programs (a main) under reader/:"; echo "$mains" | sed 's/^/  /'; bad=1; fi

internal=$(find stats -type f \( -name '*.c' -o -name '*.h' \) | while read -r f; do
             sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
               case "$inc" in h5pack.h|h5pack_sim.h) continue ;; esac
               [ -n "$(find stats common -name "$inc" -print -quit)" ] || echo "  $f: \"$inc\""
             done
           done)
if [ -n "$internal" ]; then echo "stats/ including library internals:"; echo "$internal"; bad=1; fi

dtypes=$(grep -rnE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
           -e '\b[A-Z][A-Z0-9_]*_(F32|F16|BF16|U8|FLOAT32|FLOAT16|BFLOAT16|UINT8)[[:space:]]*=[^=]' \
           -e 'float32,float16' common convert reader stats include samples)
if [ -n "$dtypes" ]; then echo "a second list of dtypes (use h5pack_dtype, H5PACK_DTYPE_MAP):"; echo "$dtypes" | sed 's/^/  /'; bad=1; fi

# (read_image.c reads one stored image of an image file; describe.c keeps the description of an open
# chunk source that the simulator shares)
kinds=$(grep -nE '(->|\.)patch_size|tilesrc|tile_source|patch_pipe|h5pack_pipeline_|chunksrc_' reader/api/*.c reader/api/*.h |
        grep -v '^reader/api/read_image.c:' | grep -v '^reader/api/describe\.[ch]:')
if [ -n "$kinds" ]; then echo "reader/api asking what kind of file it reads (use the stream, stream.h):"; echo "$kinds" | sed 's/^/  /'; bad=1; fi

# ASan adds an ODR indicator "__odr_asan.NAME" next to each global NAME: judged by the NAME it guards.
syms=$(nm -g --defined-only "$lib" | awk 'NF == 3 { n = $3; sub(/^__odr_asan[.]/, "", n) }
                                         NF == 3 && n !~ /^h5pack_/ {print "  " $2 " " $3}')
if [ -n "$syms" ]; then echo "global symbols without the h5pack_ prefix in $lib:"; echo "$syms"; bad=1; fi
nsyms=$(nm -g --defined-only "$lib" | awk 'NF == 3' | wc -l)
# Guard against a check that passes because nm saw nothing.
if [ "$nsyms" -lt 10 ]; then echo "nm found only $nsyms global symbols in $lib"; bad=1; fi

[ $bad -eq 0 ] && echo "tree rules hold: files <= 600 lines, folders <= 25 files, unique base names and" \
                       "include guards, samples on public headers, programs outside reader/, one dtype list," \
                       "no file kinds in reader/api, $nsyms h5pack_ symbols"
exit $bad
