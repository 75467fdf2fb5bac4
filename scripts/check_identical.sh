#!/usr/bin/env bash
# Checks that a change to the scheduler core leaves its decisions bit-identical: runs a fixed set
# of simulations (every gang policy on several seeds, the Azure replay, lease and exclusive
# modes, host prefix cache, the dynamic KV split, every preemption mode, faults, admission
# variants, every routing rule, a cluster) and compares their JSON reports, with the wall-clock
# fields (wall_s, speedup) removed, and their GPU timelines against a recorded baseline.
#
#   scripts/check_identical.sh record [DIR]   # run on the code before the change
#   scripts/check_identical.sh check [DIR]    # run after it: lists what differs, exit 1 if any
#
# DIR defaults to ${TMPDIR:-/tmp}/gangway-identical. GANGWAY names the binary (default: the
# Release build's). Takes about a minute on one core.
set -euo pipefail

mode=${1:-}
if [[ "$mode" != record && "$mode" != check ]]; then
  echo "usage: $0 record|check [DIR]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${2:-${TMPDIR:-/tmp}/gangway-identical}
gangway=${GANGWAY:-$root/build/release/src/cli/gangway}
[[ -x "$gangway" ]] || { echo "$0: no binary at $gangway (make release)" >&2; exit 2; }
out="$dir/$([[ $mode == record ]] && echo baseline || echo current)"
scenarios="$dir/scenarios"
rm -rf "$out" "$scenarios"
mkdir -p "$out" "$scenarios"

peak="$root/examples/peak-mixed.yaml"
mooncake="$root/data/traces/mooncake_conversation_trace.jsonl"

# A variant of the peak mixed scenario: its text with the given YAML appended (top-level keys
# the example does not set), and with GPUs of 40 GB and 4 GiB of host memory if a third argument
# says `small-memory` (KV pressure).
variant() {
  local name=$1 extra=$2 memory=${3:-}
  if [[ $memory == small-memory ]]; then
    sed 's/^  hardware: h100-sxm-80gb$/  hardware: {preset: h100-sxm-80gb, hbm_gb: 40}\n  host_memory_gib: 4/' \
      "$peak" >"$scenarios/$name.yaml"
    grep -q 'hbm_gb: 40' "$scenarios/$name.yaml" || { echo "$0: peak-mixed.yaml changed" >&2; exit 2; }
  else
    cat "$peak" >"$scenarios/$name.yaml"
  fi
  printf '%s\n' "$extra" >>"$scenarios/$name.yaml"
  echo "$scenarios/$name.yaml"
}

run() {
  local name=$1
  shift
  "$gangway" simulate "$@" --json |
    jq -S 'walk(if type == "object" then del(.wall_s, .speedup) else . end)' >"$out/$name.json"
}

all_policies=(--policy fcfs --policy sm-first --policy lm-first --policy time-slice
  --policy easy-backfill --policy gangway --policy gangway-lease --policy gangway-exclusive)
short=(--duration 25 --drain 60)

for seed in 1 2 3; do
  run "peak-policies-seed$seed" "$peak" "${all_policies[@]}" "${short[@]}" --seed "$seed" \
    --series-ms 1000
done
run peak-overloaded "$peak" "${all_policies[@]}" "${short[@]}" --rate-scale 1.8
run peak-full "$peak" --policy gangway-lease --policy gangway-exclusive \
  --timeline "$out/peak-full-timeline.json"
run peak-no-admission "$peak" --policy gangway --policy fcfs --no-admission "${short[@]}" \
  --rate-scale 1.3
run peak-arrival-order "$(variant arrival-order 'admission: {queue_order: arrival}')" \
  "${all_policies[@]}" "${short[@]}" --rate-scale 1.2
run peak-weight-shift "$(variant weight-shift 'admission: {weight_shift: {enabled: true}}')" \
  --policy gangway-lease --policy gangway-exclusive "${short[@]}" --rate-scale 2.5
run peak-routing "$peak" --routing predicted-ttft --routing late-binding --routing round-robin \
  --routing least-loaded --routing cache-only --routing sglang "${short[@]}"
run peak-oracle "$(variant oracle 'scheduler: {oracle_output_lengths: true}')" \
  --policy gangway-exclusive --policy easy-backfill "${short[@]}"
run peak-dynamic-split "$(variant dynamic 'scheduler:
  kv_split: dynamic
  large_kv_fraction: 0.3
  kv_rebalance_interval_ms: 10' small-memory)" --policy gangway-lease --policy gangway-exclusive "${short[@]}" \
  --rate-scale 1.4
for preemption in cost pause swap recompute; do
  run "peak-preemption-$preemption" "$(variant "preemption-$preemption" "scheduler:
  preemption: $preemption
  kv_split: dynamic
  large_kv_fraction: 0.2
  kv_rebalance_interval_ms: 0" small-memory)" \
    --policy gangway-lease --policy gangway-exclusive --policy fcfs "${short[@]}" --rate-scale 1.5
done
run peak-faults "$(variant faults 'faults:
  - {kind: gpu_loss, gpu: 3, at_s: 6, duration_s: 5}
  - {kind: overrun, at_s: 9, duration_s: 3, factor: 3}
  - {kind: stall, gpu: 1, at_s: 14, duration_s: 2}
  - {kind: gpu_loss, gpu: 6, at_s: 18}')" "${all_policies[@]}" "${short[@]}"
run peak-cluster "$(variant cluster 'cluster: {nodes: 3, pinned_share: 0.5}')" \
  --policy gangway "${short[@]}" --rate-scale 1.5

cat >"$scenarios/mooncake.yaml" <<EOF
name: mooncake
seed: 42
warmup_s: 10
duration_s: 120
drain_s: 60
node: {gpus: 4, hardware: {preset: h100-sxm-80gb, hbm_gb: 30}, host_memory_gib: 64}
scheduler: {host_prefix_cache: true}
models:
  - {name: llama-3-8b, tier: small, max_context_tokens: 131072}
policy: fcfs
workload:
  trace: {path: $mooncake, format: mooncake, rate_scale: 6, end_s: 120}
EOF
run mooncake-host-cache "$scenarios/mooncake.yaml" --routing predicted-ttft --routing sglang

# The small and the large model under gangway's lease mode, shared by the scenarios below.
two_tiers='models:
  - {name: llama-3-8b, tier: small}
  - {name: llama-3-70b, tier: large}
policy: {name: gangway, mode: lease}'

cat >"$scenarios/prefix-groups.yaml" <<EOF
name: prefix-groups
seed: 42
warmup_s: 3
duration_s: 25
drain_s: 30
node: {gpus: 8, hardware: {preset: h100-sxm-80gb, hbm_gb: 40}, host_memory_gib: 16}
scheduler: {host_prefix_cache: true, kv_split: dynamic, large_kv_fraction: 0.3}
$two_tiers
workload:
  streams:
    - name: chat
      model: llama-3-8b
      class: standard
      arrival: {rate_per_s: 900}
      prompt_tokens: {dist: lognormal, mean: 300, p99: 2000, max: 8000}
      output_tokens: {dist: geometric, mean: 64, max: 512}
      max_tokens: 512
      prefix: {groups: 256, group_tokens: 2048, zipf_s: 1.0}
      sessions: {new_session_probability: 0.5, think_time_s: 10}
    - name: lm
      model: llama-3-70b
      class: interactive
      arrival: {process: gamma, rate_per_s: 30, cv: 4}
      prompt_tokens: {dist: lognormal, mean: 256, p99: 1024, max: 4096}
      output_tokens: {dist: geometric, mean: 64, max: 256}
      max_tokens: 256
      prefix: {groups: 64, group_tokens: 4096, zipf_s: 0.0}
EOF
run prefix-groups "$scenarios/prefix-groups.yaml" --policy gangway-lease \
  --policy gangway-exclusive --policy fcfs

cat >"$scenarios/hot-prefix.yaml" <<EOF
name: hot-prefix
seed: 7
warmup_s: 3
duration_s: 15
drain_s: 30
$two_tiers
workload:
  streams:
    - name: system-prompts
      model: llama-3-8b
      class: standard
      arrival: {process: gamma, rate_per_s: 1600, cv: 4}
      prompt_tokens: 512
      output_tokens: {dist: geometric, mean: 32, max: 256}
      max_tokens: 256
      prefix: {groups: 64, group_tokens: 1536, zipf_s: 1.2}
    - name: lm
      model: llama-3-70b
      class: standard
      arrival: {rate_per_s: 20}
      prompt_tokens: {dist: lognormal, mean: 112, p99: 576, max: 2048}
      output_tokens: {dist: geometric, mean: 28, max: 256}
      max_tokens: 256
EOF
run hot-prefix "$scenarios/hot-prefix.yaml" --no-admission --policy gangway-lease \
  --policy gangway-exclusive

run azure-replay "$root/examples/azure-conv-replay.yaml" --policy fcfs --policy gangway-lease \
  --policy gangway-exclusive --duration 180 --drain 120 --rate-scale 4
for validation in "$root"/examples/validation/*.yaml; do
  run "validation-$(basename "$validation" .yaml)" "$validation"
done

if [[ $mode == record ]]; then
  echo "recorded $(ls "$out" | wc -l) files in $out"
  exit 0
fi
status=0
for file in "$dir"/baseline/*; do
  name=$(basename "$file")
  if ! cmp -s "$file" "$out/$name"; then
    echo "DIFFERS: $name"
    status=1
  fi
done
[[ $(ls "$dir/baseline" | wc -l) -eq $(ls "$out" | wc -l) ]] || { echo "file sets differ"; status=1; }
[[ $status -eq 0 ]] && echo "identical: $(ls "$out" | wc -l) files"
exit $status
