#!/usr/bin/env bash
# Fails on a comment or doc that names a repository path that does not exist: every tracked source, script, CMake and
# Markdown file (*.hpp *.cuh *.cu *.cpp *.h *.md *.sh *.py CMakeLists.txt) is read for words that start at one of the
# repository's top folders (include/ src/ tests/ bench/ docs/ scripts/ examples/ verify/ baselines/ properties/
# python/ cmake/), and each must name a file or folder of the working tree (a word with * or {a,b} must match one).
# A path may also be relative to its file's folder (a CMakeLists.txt naming its own sources).
# Paths inside another path (build/bench/x, /usr/include/x) and placeholders (bench_<family>.cu) are not read.
# docs/history/ and docs/device-runs/ are not read: the paths they name are those of their day.
# Prints one line a defect, file:line: path, and exits 1 if there is any. Usage: scripts/check-paths.sh
set -uo pipefail
cd "$(dirname "$0")/.."
roots='include|src|tests|bench|docs|scripts|examples|verify|baselines|properties|python|cmake'
defects=0
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  path=${rest#*:}
  case $path in *'<'*) continue ;; esac    # a placeholder: bench_<family>.cu
  while :; do                               # sentence punctuation after the path
    case $path in *. | *, | *: | *\;) path=${path%?} ;; *) break ;; esac
  done
  found=0
  for base in . "$(dirname "$file")"; do
    case $path in
      *[*{]*)
        # A pattern: brace expansion (the word holds only path characters), then at least one match.
        for p in $(eval "echo $base/$path"); do compgen -G "$p" >/dev/null && found=1 && break; done
        ;;
      *) [ -e "$base/$path" ] && found=1 ;;
    esac
    [ $found = 0 ] || break
  done
  if [ $found = 0 ]; then
    echo "$file:$line: $path"
    defects=$((defects + 1))
  fi
done < <(git ls-files -z -- '*.hpp' '*.cuh' '*.cu' '*.cpp' '*.h' '*.md' '*.sh' '*.py' '*CMakeLists.txt' \
  ':!:docs/history/*' ':!:docs/device-runs/*' |
  xargs -0 -r grep -onP "(?<![A-Za-z0-9_./\$@~<>-])(?:$roots)/[A-Za-z0-9_.+*{},/<>-]*" 2>/dev/null)
if [ $defects -gt 0 ]; then
  echo "check-paths: $defects reference(s) to paths that do not exist" >&2
  exit 1
fi
echo "check-paths: every path named in comments and docs exists"
