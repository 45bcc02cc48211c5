#!/bin/bash
# A Slurm job array: 16 tasks, each one shard. onnxconv reads
# SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and SLURM_ARRAY_TASK_MIN, so
# no --shard is needed. From the folder that holds models.yaml (Slurm does
# not create the log folder):
#   mkdir -p results/logs
#   jid=$(sbatch --parsable slurm-array.sh)      # --array=0-3 for 4 tasks
#   sbatch --dependency=afterany:$jid --wrap 'onnxconv batch merge results/shard-* -o results/report.html -o results/junit.xml'
# A requeued task (preemption, `scontrol requeue`, a node failure) starts
# this script again and resumes from the records its shard folder holds;
# its log gets the second run appended. examples/batch/cluster_test.go
# runs exactly this on a real Slurm cluster.
#SBATCH --job-name=onnxconv-batch
#SBATCH --array=0-15
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --requeue                 # a preempted task is requeued and resumes
#SBATCH --open-mode=append        # a requeued task appends to its log
#SBATCH --output=results/logs/%A_%a.log
set -euo pipefail
# One output folder per task; the cache is shared by all tasks and runs.
onnxconv batch models.yaml --out "results/shard-${SLURM_ARRAY_TASK_ID}" \
  --jobs "${SLURM_CPUS_PER_TASK}" --cache results/cache
