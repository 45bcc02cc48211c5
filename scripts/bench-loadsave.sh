#!/usr/bin/env bash
# Measures load+save throughput and peak memory of `onnxconv convert` on a
# big model (default 1 GiB of tensor data; BENCH_BYTES to change it), and of
# onnx.load + onnx.save for comparison when /usr/bin/python3 has onnx.
#
#   scripts/bench-loadsave.sh [WORKDIR]
#
# BENCH_PARTS splits the data into that many tensors (default 8).
# BENCH_KEEP=1 keeps the models. Prints MB/s (file size / elapsed wall time) and peak RSS for each.
# onnxconv runs BENCH_REPS times (default 5), the in-protobuf and the
# external-data model interleaved, and the median run is shown with the
# range; python runs once.
#
# Before each timed run the script writes (and deletes) a scratch file of
# the memory the run will take for its output with dd, and prints the dd
# figure as "dd write". On a VM whose idle memory the host takes back
# (virtio-balloon free page reporting, as on the machine of docs/speed.md),
# the first touch of such memory costs ~2.7 s of system time per GiB for
# every writer, dd included; without this priming, whichever run happens
# to get such memory is 6x slower, whatever it runs. BENCH_PRIME=0 turns it
# off (the dd reference is then not measured).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
bytes=${BENCH_BYTES:-1073741824}
parts=${BENCH_PARTS:-8}
reps=${BENCH_REPS:-5}
prime=${BENCH_PRIME:-1}
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cleanup() { [ -n "${BENCH_KEEP:-}" ] || rm -f "$work"/a.onnx "$work"/b.onnx "$work"/c.onnx "$work"/e.onnx* "$work"/f.onnx* "$work"/g.onnx* "$work"/h.onnx* "$work"/prime.tmp "$work"/time-*.txt; }
trap cleanup EXIT

echo "building onnxconv"
(cd "$repo" && CGO_ENABLED=0 go build -o "$work/onnxconv" ./cmd/onnxconv)

echo "writing a model with $bytes bytes of float data in $parts tensors to $work/a.onnx"
/usr/bin/python3 - "$work/a.onnx" "$bytes" "$parts" <<'PY'
import sys
path, size, parts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

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

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) (start)"

# Wall-clock MB/s depends on the disk (the output is fsynced) and on other
# load; CPU MB/s (user+sys time) is what the tool itself costs.
report() { # name, time -v output files (the median by wall time is shown, with the range)
	local name=$1; shift
	local f secs cpu rss lines=""
	for f in "$@"; do
		secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$f")
		cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$f")
		rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$f")
		lines+="$secs $cpu $rss"$'\n'
	done
	printf '%s' "$lines" | sort -n | awk -v n="$name" -v b="$size" '
		{ s[NR]=$1; c[NR]=$2; r[NR]=$3 }
		END {
			m = int((NR+1)/2); sec = s[m]; cpu = c[m]; rss = r[m]
			if (cpu <= 0) cpu = 0.001
			maxr = 0; for (i = 1; i <= NR; i++) if (r[i] > maxr) maxr = r[i]
			range = ""
			if (NR > 1) range = sprintf("  (%d runs, wall %.0f-%.0f MB/s, max RSS %.0f MB)", NR, b/1e6/s[NR], b/1e6/s[1], maxr/1024)
			printf "%-22s wall %6.2f s %6.0f MB/s | cpu %6.2f s %6.0f MB/s | peak RSS %6.0f MB (%.2fx file size)%s\n", n, sec, b/1e6/sec, cpu, b/1e6/cpu, rss/1024, rss*1024/b, range }'
}

# prime BYTES NAME: write BYTES into the work folder with dd (fsynced, as
# the tools' outputs are) and delete the file, so that the timed run that
# follows gets memory that the VM has backed; prints the dd figure.
prime() {
	[ "$prime" = 1 ] || return 0
	local mib=$(( ($1 + 1048575) / 1048576 )) t0 t1
	t0=$(date +%s.%N)
	dd if=/dev/zero of="$work/prime.tmp" bs=1M count="$mib" conv=fsync status=none
	t1=$(date +%s.%N)
	rm -f "$work/prime.tmp"
	awk -v n="$2" -v b="$(( mib * 1048576 ))" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "  dd write before %-14s %6.2f s %6.0f MB/s\n", n, t1-t0, b/1e6/(t1-t0) }'
}

# The same data stored as external data: first make the external copy (not
# timed), then time load+save of it, written with external data again.
"$work/onnxconv" convert "$work/a.onnx" "$work/e.onnx" --external-data -q
cat "$work/e.onnx" "$work/e.onnx.data" > /dev/null

inline=() external=()
for i in $(seq 1 "$reps"); do
	rm -f "$work/b.onnx"
	prime "$size" "onnxconv"
	/usr/bin/time -v "$work/onnxconv" convert "$work/a.onnx" "$work/b.onnx" 2> "$work/time-onnxconv-$i.txt" || { cat "$work/time-onnxconv-$i.txt"; exit 1; }
	inline+=("$work/time-onnxconv-$i.txt")
	rm -f "$work"/f.onnx*
	prime "$size" "onnxconv (ext)"
	/usr/bin/time -v "$work/onnxconv" convert "$work/e.onnx" "$work/f.onnx" --external-data 2> "$work/time-onnxconv-ext-$i.txt" || { cat "$work/time-onnxconv-ext-$i.txt"; exit 1; }
	external+=("$work/time-onnxconv-ext-$i.txt")
done
cmp -s <(stat -c %s "$work/b.onnx") <(echo "$size") || echo "note: output size $(stat -c %s "$work/b.onnx") differs from input (field order)"
report "onnxconv convert" "${inline[@]}"
report "onnxconv (external)" "${external[@]}"

if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
	# python holds the model in memory (about 2x the file) besides its output
	prime $(( 3 * size )) "python"
	/usr/bin/time -v /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.save(m, sys.argv[2])
' "$work/a.onnx" "$work/c.onnx" 2> "$work/time-python.txt" || { cat "$work/time-python.txt"; exit 1; }
	report "python onnx.load+save" "$work/time-python.txt"
	rm -f "$work/c.onnx"
	prime $(( 2 * size )) "python (ext)"
	/usr/bin/time -v /usr/bin/python3 -c '
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.save(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location="g.onnx.data")
' "$work/e.onnx" "$work/g.onnx" 2> "$work/time-python-ext.txt" || { cat "$work/time-python-ext.txt"; exit 1; }
	report "python (external)" "$work/time-python-ext.txt"
else
	echo "python onnx not available (apt install python3-onnx): skipped"
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (end)"
