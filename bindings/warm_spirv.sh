#!/usr/bin/env bash
# warm_spirv.sh CCKEY_CLI DIR: has `cckey warm` compile data/double.comp for
# the first Vulkan device (lavapipe here) into the store DIR/store, and
# writes what the bindings' tests compare their Store against:
#   DIR/double.comp   the source warmed (its bytes are the key's source)
#   DIR/device        the device id the tuple names
#   DIR/options.json  the tuple's options (and options.tsv: KEY<TAB>VALUE lines)
#   DIR/expected.spv  what `cckey cache get` returns for the key
# Exit 77 with one line (also in DIR/skipped) when no Vulkan device or no
# shaderc is here.
set -euo pipefail
cli=${1:?usage: warm_spirv.sh CCKEY_CLI DIR}
dir=${2:?usage: warm_spirv.sh CCKEY_CLI DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
device=$("$cli" devices --format json | python3 -c '
import json, sys
vk = [b for b in json.load(sys.stdin)["backends"] if b["backend"] == "vulkan"]
devs = vk[0].get("devices", []) if vk and vk[0]["available"] else []
print(devs[0]["id"] if devs else "")')
if [ -z "$device" ]; then
  echo "no Vulkan device (mesa-vulkan-drivers) or no shaderc in this cckey" | tee "$dir/skipped"
  exit 77
fi
cp "$here/data/double.comp" "$dir/double.comp"
printf '%s' "$device" >"$dir/device"
options='[["-D","SCALE=2"],["-O",""]]'
printf '%s' "$options" >"$dir/options.json"
printf -- '-D\tSCALE=2\n-O\t\n' >"$dir/options.tsv"   # the same, for OCaml: KEY<TAB>VALUE lines
python3 -c 'import json, sys; print(json.dumps({"device": sys.argv[1], "name": "main", "source_file": "double.comp",
  "language": "glsl", "options": json.loads(sys.argv[2])}))' "$device" "$options" >"$dir/m.jsonl"
(cd "$dir" && env -u CCKEY_CACHE_DIR -u CCKEY_REMOTE "$cli" warm m.jsonl --cache-dir store >/dev/null)
key=$(cd "$dir" && "$cli" key --device "$device" --name main --source-file double.comp --options-json "$options")
env -u CCKEY_REMOTE "$cli" cache get "$key" --cache-dir "$dir/store" -o "$dir/expected.spv"
