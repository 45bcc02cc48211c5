#!/usr/bin/env bash
# Measures load+save throughput and peak memory of `onnxconv convert` on a
# big model (default 1 GiB of tensor data; BENCH_BYTES to change it), and of
# onnx.load + onnx.save for comparison when /usr/bin/python3 has onnx.
#
#   scripts/bench-loadsave.sh [WORKDIR]
#
# BENCH_KEEP=1 keeps the models. Prints MB/s (file size / elapsed wall time) and peak RSS for each.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bytes=${BENCH_BYTES:-1073741824}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cleanup() { [ -n "${BENCH_KEEP:-}" ] || rm -f "$work"/a.onnx "$work"/b.onnx "$work"/c.onnx "$work"/e.onnx* "$work"/f.onnx* "$work"/g.onnx* "$work"/h.onnx*; }
trap cleanup EXIT

echo "building onnxconv"
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/onnxconv" ./cmd/onnxconv)

echo "writing a model with $bytes bytes of float data to $work/a.onnx"
/usr/bin/python3 - "$work/a.onnx" "$bytes" <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2])

def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)

def field(num, payload):  # length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload

def vint(num, n):
    return varint(num << 3) + varint(n)

parts = 8
per = size // parts // 4  # floats per tensor
chunk = bytes(range(256)) * 4096  # 1 MiB pattern

typ = field(1, vint(1, 1) + field(2, b"".join(field(1, vint(1, per)) for _ in range(1))))
graph_small = bytearray()
cur = "x"
for i in range(parts):
    out = "y%d" % i
    node = field(1, cur.encode()) + field(1, ("w%d" % i).encode()) + field(2, out.encode()) + field(3, ("add%d" % i).encode()) + field(4, b"Add")
    graph_small += field(1, node)
    cur = out
graph_small += field(2, b"bench")
graph_small += field(11, field(1, b"x") + field(2, typ))
graph_small += field(12, field(1, cur.encode()) + field(2, typ))

def tensor_header(i):
    return vint(1, per) + vint(2, 1) + field(8, ("w%d" % i).encode())

raw_len = per * 4
init_sizes = []
for i in range(parts):
    h = tensor_header(i)
    init_sizes.append(len(h) + len(varint(9 << 3 | 2)) + len(varint(raw_len)) + raw_len)
graph_len = len(graph_small) + sum(len(varint(5 << 3 | 2)) + len(varint(s)) + s for s in init_sizes)

with open(path, "wb") as f:
    f.write(vint(1, 8))                                   # ir_version
    f.write(field(8, field(1, b"") + vint(2, 17)))        # opset_import
    f.write(field(2, b"bench-loadsave"))                  # producer_name
    f.write(varint(7 << 3 | 2) + varint(graph_len))       # graph
    f.write(graph_small)
    for i in range(parts):
        h = tensor_header(i)
        f.write(varint(5 << 3 | 2) + varint(init_sizes[i]) + h)
        f.write(varint(9 << 3 | 2) + varint(raw_len))
        left = raw_len
        while left > 0:
            n = min(left, len(chunk))
            f.write(chunk[:n])
            left -= n
PY
size=$(stat -c %s "$work/a.onnx")
echo "model: $size bytes"
# Warm the page cache so that both tools read from memory.
cat "$work/a.onnx" > /dev/null

# Wall-clock MB/s depends on the disk (the output is fsynced) and on other
# load; CPU MB/s (user+sys time) is what the tool itself costs.
report() { # name, time -v output file
	local secs cpu rss
	secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$2")
	cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$2")
	rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$2")
	awk -v n="$1" -v s="$secs" -v c="$cpu" -v r="$rss" -v b="$size" 'BEGIN {
		if (c <= 0) c = 0.001
		printf "%-22s wall %6.2f s %6.0f MB/s | cpu %6.2f s %6.0f MB/s | peak RSS %6.0f MB (%.2fx file size)\n", n, s, b/1e6/s, c, b/1e6/c, r/1024, r*1024/b }'
}

/usr/bin/time -v "$work/onnxconv" convert "$work/a.onnx" "$work/b.onnx" 2> "$work/time-onnxconv.txt" || { cat "$work/time-onnxconv.txt"; exit 1; }
cmp -s <(stat -c %s "$work/b.onnx") <(echo "$size") || echo "note: output size $(stat -c %s "$work/b.onnx") differs from input (field order)"
report "onnxconv convert" "$work/time-onnxconv.txt"

if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	/usr/bin/time -v /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.save(m, sys.argv[2])
' "$work/a.onnx" "$work/c.onnx" 2> "$work/time-python.txt" || { cat "$work/time-python.txt"; exit 1; }
	report "python onnx.load+save" "$work/time-python.txt"
else
	echo "python onnx not available (apt install python3-onnx): skipped"
fi

# The same data stored as external data: first make the external copy (not
# timed), then time load+save of it, written with external data again.
"$work/onnxconv" convert "$work/a.onnx" "$work/e.onnx" --external-data -q
cat "$work/e.onnx" "$work/e.onnx.data" > /dev/null
/usr/bin/time -v "$work/onnxconv" convert "$work/e.onnx" "$work/f.onnx" --external-data 2> "$work/time-onnxconv-ext.txt" || { cat "$work/time-onnxconv-ext.txt"; exit 1; }
report "onnxconv (external)" "$work/time-onnxconv-ext.txt"
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	/usr/bin/time -v /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.save(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location="g.onnx.data")
' "$work/e.onnx" "$work/g.onnx" 2> "$work/time-python-ext.txt" || { cat "$work/time-python-ext.txt"; exit 1; }
	report "python (external)" "$work/time-python-ext.txt"
fi
