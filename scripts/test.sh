#!/usr/bin/env bash
# Installs what the tests need, then runs them: the one test command of
# README.md, which CI (.ci/run) runs too, so the two cannot drift apart.
#
#   bash scripts/test.sh            # from anywhere; ../shared must sit beside the checkout
#
# It installs, when missing:
#   - the npm packages of package.json (ONNX Runtime 1.30's library inside
#     onnxruntime-node, TF.js 4.22 with its WASM backend, the TFLite interpreters):
#     npm ci --ignore-scripts (.npmrc: legacy-peer-deps, see there)
#   - Debian's postgresql (serve's replicas on a shared job store)
#   - Debian's chromium (HTML report tests), slurmctld/slurmd/slurm-client/munge
#     (a real Slurm cluster for the batch example test), libtorch-dev and g++
#     (the libtorch runtime plugin the torchscript tests build and verify against;
#     164 MB download, 664 MB installed, about 1.5 min)
# Debian packages need root (CI runs as root); otherwise it says which are
# missing and the tests that need them fail their package with one line
# naming the SKIP variable that lets it pass (see README).
set -euo pipefail
cd "$(dirname "$0")/.."

ort=node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
if [ ! -f "$ort" ] || [ ! -f node_modules/@tensorflow/tfjs-tflite/package.json ] ||
   [ ! -f node_modules/@tensorflow/tfjs/package.json ] || [ ! -f node_modules/@litertjs/core/package.json ] ||
   [ ! -f node_modules/@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm ]; then
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi

# Debian packages the tests need, when the command each provides is
# missing: chromium as before (with its recommended fonts), the Slurm
# daemons and munge without recommends (they pull in development files).
debs=() slim=()
has() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
has chromium || debs+=(chromium)
has slurmctld || slim+=(slurmctld slurm-client)
has slurmd || slim+=(slurmd)
has munged || slim+=(munge)
[ -f /usr/include/torch/script.h ] || debs+=(libtorch-dev)
has g++ || debs+=(g++)
# PostgreSQL's server programs: serve's tests start a cluster of their
# own for the replicas' shared job store (Debian puts them in
# /usr/lib/postgresql/VERSION/bin, not on $PATH).
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || has initdb || slim+=(postgresql)
# strace lets cmd/onnxconv's TestHostileFixtures see every file a hostile
# input makes the CLI open (nothing outside the file's folder).
has strace || slim+=(strace)
# file and zip: scripts/release.sh checks the linux/amd64 binary is static
# and packs the windows ones.
has file || slim+=(file)
has zip || slim+=(zip)
if [ ${#debs[@]} -gt 0 ] || [ ${#slim[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    opts=(-y -qq -o DPkg::Lock::Timeout=300)
    [ ${#debs[@]} -eq 0 ] || apt-get install "${opts[@]}" "${debs[@]}" >/dev/null
    [ ${#slim[@]} -eq 0 ] || apt-get install "${opts[@]}" --no-install-recommends "${slim[@]}" >/dev/null
  else
    echo "scripts/test.sh: not root, so not installing Debian packages: ${debs[*]} ${slim[*]}" >&2
  fi
fi

go version
go vet ./...
# A failure of go test does not stop the fuzz stage: both run, and the
# last lines say how each ended (the run fails when either did).
tests=0
go test -timeout 80m ./... || tests=$?
# The channels-last plans keep the NCHW bits with every micro-kernel: the
# bit-for-bit tests again with the AVX2 and the pure-Go kernels (forced
# by ONNXCONV_SGEMM_KERNEL, read in the packages' init, which go test's
# cache does not see: hence -count=1; a few seconds).
for k in avx2 generic; do
  ONNXCONV_SGEMM_KERNEL=$k go test -count=1 ./executor/kernels -run 'BitsOfNCHW|GlobalAveragePoolNHWC|PointwiseNHWCScaled|PointwiseNHWCStrided|PointwiseNHWCSubsampled|ConvOnePixel|ConvNHWC' || tests=$?
  ONNXCONV_SGEMM_KERNEL=$k go test -count=1 ./executor -run 'TestNHWCPlan|TestScaleConvNCHW' || tests=$?
done

# A pass of every fuzz target of the repository (every reader has one),
# ONNXCONV_FUZZTIME each: 20s in CI (CI=true, which .ci/run sets), 2s
# otherwise. Each target starts from its committed seed corpus (its f.Add
# seeds and testdata/fuzz/FuzzX/). A finding fails the run; go test keeps
# the input under the package's testdata/fuzz/, where it is a regression
# case of every later plain test run.
if [ "${CI:-}" = true ]; then
  fuzztime="${ONNXCONV_FUZZTIME:-20s}"
else
  fuzztime="${ONNXCONV_FUZZTIME:-2s}"
fi
# The release builds (scripts/release.sh: the six static binaries, the
# linux/amd64 one checked static and run) are made in CI while the fuzz
# stage runs: each fuzz target runs for a fixed time whatever CPU it gets,
# so the builds add no wall time there. Measured here (2 cores): the fuzz
# stage about 11 min; the six builds with a warm build cache 1 min 14 s
# (30 s CPU), the linux/amd64 one alone 11 s; with a cold cache 4 min 43 s
# of CPU (22 min wall on a machine loaded 9 times over). Outside CI
# ONNXCONV_RELEASE=1 asks for them too.
release=skip
if [ "${CI:-}" = true ] || [ "${ONNXCONV_RELEASE:-}" = 1 ]; then
  reldir=$(mktemp -d)
  ONNXCONV_RELEASE_PLUGINS=0 bash scripts/release.sh "$reldir/dist" >"$reldir/log" 2>&1 </dev/null &
  release=$!
fi

fuzzed=0 fuzzfail=()
while read -r pkg target; do
  # A run that ends with "context deadline exceeded" and writes no new
  # input hit the fuzzer's own deadline in the middle of one slow
  # execution (the Keras and TFLite targets take up to a second each):
  # it is run again for a count of executions instead (-fuzztime 25x,
  # no deadline). Anything else, or a new file under testdata/fuzz/,
  # fails. Minimizing a new input is held to 100 executions: go's default
  # (a minute) spent the whole budget of importers/xgboost FuzzImport on
  # minimizing (17 executions in 20 s; 22,653 with 100x).
  budget="$fuzztime"
  for try in 1 2; do
    if out=$(go test "./$pkg" -run '^$' -fuzz "^$target\$" -fuzztime "$budget" -fuzzminimizetime 100x 2>&1 </dev/null); then
      fuzzed=$((fuzzed + 1))
      break
    fi
    found=$(git status --porcelain --untracked-files=all -- "$pkg/testdata/fuzz/$target" 2>/dev/null)
    if [ "$try" = 2 ] || [ -n "$found" ] || ! printf '%s' "$out" | grep -q 'context deadline exceeded'; then
      printf '%s\n' "$out" | tail -40 >&2
      echo "fuzz: $pkg $target failed; a failing input is kept under $pkg/testdata/fuzz/$target" >&2
      fuzzfail+=("$pkg $target")
      break
    fi
    echo "fuzz: $pkg $target: ${budget} ended inside one slow execution; running 25 executions instead" >&2
    budget=25x
  done
done < <(grep -rE --include='*_test.go' --exclude-dir=node_modules '^func Fuzz[A-Za-z0-9_]+\(' . |
  sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]+)\(.*|\1 \2|' | sort -u)

released=0
if [ "$release" != skip ]; then
  if wait "$release"; then
    echo "$(tail -1 "$reldir/log") (the linux/amd64 binary statically linked and run)"
  else
    tail -40 "$reldir/log" >&2
    echo "release: scripts/release.sh FAILED (its last lines are above)" >&2
    released=1
  fi
  rm -rf "$reldir"
fi

if [ "$tests" = 0 ]; then
  echo "go test: every package passed"
else
  echo "go test: FAILED (exit $tests); the failing packages are listed above" >&2
fi
if [ ${#fuzzfail[@]} = 0 ]; then
  echo "fuzz: $fuzzed targets each ran $fuzztime without a failure"
else
  echo "fuzz: ${#fuzzfail[@]} target(s) FAILED: ${fuzzfail[*]} ($fuzzed passed)" >&2
fi
[ "$tests" = 0 ] && [ ${#fuzzfail[@]} = 0 ] && [ "$released" = 0 ]
