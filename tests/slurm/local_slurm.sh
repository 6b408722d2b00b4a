#!/usr/bin/env bash
# A single-node Slurm cluster on localhost, in a temporary directory, for the tests (docs/regress.md,
# "Slurm"): munged, slurmctld and slurmd with their own key, slurm.conf, state, spool, pid and log
# files; nothing under /etc or /run is read or written. Installs nothing (scripts/bootstrap.sh
# installs slurm-wlm and munge).
#
#   tests/slurm/local_slurm.sh CAPSGEN LIST OUTDIR
#
# runs `CAPSGEN regress LIST --slurm` through the cluster into OUTDIR/out (fresh: the models are built
# by Slurm jobs), checks that every build and run was a Slurm job and that each failure's fast
# reproduction command fails the same way on the Slurm-built model, saves the summary in
# OUTDIR/slurm, runs the same list locally in OUTDIR/out (the models reused, every run run again) and
# compares the two summaries: the same jobs in the same order with the same status, cycles, MISMATCH
# lines and messages, the same counts, exit status and failure folders. Exit status 0 when they agree
# and the local regression passed, 1 otherwise, 77 (skipped) when slurmctld, slurmd or munged is not
# installed. The daemons are always stopped and the temporary directory removed.
set -uo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 CAPSGEN LIST OUTDIR" >&2
  exit 2
fi
capsgen=$(realpath "$1")
list=$2
outdir=$(realpath -m "$3")

for d in slurmctld slurmd munged; do
  if ! command -v "$d" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$d" ]; then
    echo "SKIP: $d is not installed (scripts/bootstrap.sh installs slurm-wlm and munge)"
    exit 77
  fi
done
export PATH="$PATH:/usr/sbin"
for c in sbatch squeue sinfo scancel mungekey; do
  command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c is not installed"; exit 77; }
done

tmp=$(mktemp -d /tmp/capsgen-slurm.XXXXXX)
chmod 700 "$tmp"
pids=()
stop() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  if [ "$rc" -ne 0 ]; then
    for f in "$tmp"/log/*.log; do
      [ -f "$f" ] && { echo "--- last lines of $f"; tail -n 20 "$f"; }
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap stop EXIT
trap 'exit 130' INT TERM

mkdir -p "$tmp"/{munge,state,spool,log,run}
chmod 700 "$tmp/munge"

# munge: its own key and socket.
mungekey --create --keyfile="$tmp/munge/munge.key" || exit 1
chmod 400 "$tmp/munge/munge.key"
munged --foreground --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/run/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/munged.seed" \
  >"$tmp/log/munged.out.log" 2>&1 &
pids+=($!)

# Ports of this cluster: free ones above 20000 (two clusters on one machine do not meet).
port=$(( 20000 + (RANDOM % 2000) * 2 ))
listening="$(ss -ltn 2>/dev/null || true)"
while grep -qE ":($port|$((port + 1)))\b" <<<"$listening"; do port=$((port + 2)); done

cpus=2
mem=1024
cat >"$tmp/slurm.conf" <<CONF
ClusterName=capsgen-test
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=600
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=capsgen Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"

for _ in $(seq 50); do [ -S "$tmp/munge/munge.socket" ] && break; sleep 0.1; done
[ -S "$tmp/munge/munge.socket" ] || { echo "FAIL: munged did not start"; exit 1; }

slurmctld -D -c -f "$tmp/slurm.conf" >"$tmp/log/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$tmp/slurm.conf" >"$tmp/log/slurmd.out.log" 2>&1 &
pids+=($!)

state=""
for _ in $(seq 120); do
  state=$(sinfo -h -N -n localhost -o '%t' 2>/dev/null)
  [ "$state" = "idle" ] && break
  sleep 0.5
done
if [ "$state" != "idle" ]; then
  echo "FAIL: the node did not become idle within 60 s (sinfo: '${state}')"
  exit 1
fi
echo "local_slurm: single-node cluster up ($SLURM_CONF, node localhost idle, $cpus CPUs)"


# The checks, in two steps: after the Slurm run, and after the local one.
cat >"$tmp/check.py" <<'PY'
import json, os, re, shutil, subprocess, sys
step, out, saved = sys.argv[1], sys.argv[2], sys.argv[3]
problems = []
fields = ["name", "config", "network", "seed", "fetch", "memory", "fault", "expect", "status", "ok", "cycles",
          "problems", "message"]
def load(path, log):
    if not os.path.exists(path):
        print(f"FAIL: no {path}; the end of capsgen regress's output:")
        print(open(log).read()[-3000:])
        sys.exit(1)
    return json.load(open(path))
if step == "slurm":
    # Each build and run was a Slurm job (its script and .rc file in OUT/slurm); the failures' fast
    # reproduction commands (repro.sh) on the Slurm-built models fail with the same mismatch.
    s = load(os.path.join(out, "summary.json"), os.path.join(saved, "..", "slurm.out"))
    if not s.get("slurm"):
        problems.append("the --slurm summary does not say it ran on Slurm")
    sl = os.path.join(out, "slurm")
    n = s["jobs"] + s["builds"]
    rcs = [f for f in os.listdir(sl) if f.endswith(".rc")] if os.path.isdir(sl) else []
    if len(rcs) != n:
        problems.append(f"{len(rcs)} .rc files in {sl}, expected {n} (builds + runs)")
    fails = sorted(os.listdir(os.path.join(out, "failures"))) if os.path.isdir(os.path.join(out, "failures")) else []
    for job in fails:
        sh = open(os.path.join(out, "failures", job, "repro.sh")).read()
        m = re.search(r"^#   (cd .*)$", sh, re.M)
        r = next(x for x in s["results"] if x["name"] == job)
        want = r["problems"][0] if r["problems"] else None
        if not m or want is None:
            problems.append(f"{job}: no fast reproduction command in repro.sh, or no MISMATCH line in the summary")
            continue
        p = subprocess.run(["sh", "-c", m.group(1)], capture_output=True, text=True)
        if p.returncode != 1 or want not in p.stdout + p.stderr:
            problems.append(f"{job}: the fast reproduction exited {p.returncode} without {want!r}")
        else:
            print(f"local_slurm: {job}: repro.sh's fast variant on the Slurm-built model: exit status 1, {want[:70]}")
    os.makedirs(saved, exist_ok=True)
    shutil.copy(os.path.join(out, "summary.json"), saved)
    shutil.copy(os.path.join(out, "summary.md"), saved)
    json.dump(fails, open(os.path.join(saved, "failures.json"), "w"))
else:
    rc_slurm, rc_local = int(sys.argv[4]), int(sys.argv[5])
    s = json.load(open(os.path.join(saved, "summary.json")))
    l = load(os.path.join(out, "summary.json"), os.path.join(saved, "..", "local.out"))
    if rc_slurm != rc_local:
        problems.append(f"exit status: --slurm {rc_slurm}, local {rc_local}")
    if rc_local != 0 or not l["pass"]:
        problems.append(f"the local regression did not pass (exit status {rc_local})")
    for k in ["pass", "interrupted", "jobs", "passed", "failed", "errors", "not_run", "builds", "builds_failed"]:
        if s[k] != l[k]:
            problems.append(f"{k}: --slurm {s[k]}, local {l[k]}")
    sj = [{k: r.get(k) for k in fields} for r in s["results"]]
    lj = [{k: r.get(k) for k in fields} for r in l["results"]]
    if [r["name"] for r in sj] != [r["name"] for r in lj]:
        problems.append(f"jobs: --slurm {[r['name'] for r in sj]}, local {[r['name'] for r in lj]}")
    for a, b in zip(sj, lj):
        for k in fields:
            if a[k] != b[k]:
                problems.append(f"{a['name']}: {k}: --slurm {a[k]!r}, local {b[k]!r}")
        print(f"local_slurm: {a['name']}: --slurm {a['status']} ({a['cycles']} cycles), local {b['status']} ({b['cycles']} cycles)")
    fs_ = json.load(open(os.path.join(saved, "failures.json")))
    fl = sorted(os.listdir(os.path.join(out, "failures"))) if os.path.isdir(os.path.join(out, "failures")) else []
    if fs_ != fl:
        problems.append(f"failures/: --slurm {fs_}, local {fl}")
    if not problems:
        print(f"PASS: {s['jobs']} jobs on {s['builds']} model builds: the same summary through Slurm and locally "
              f"({s['passed']} passed, {s['failed']} failed, {s['errors']} errors)")
if problems:
    print("FAIL: " + ("the --slurm regression" if step == "slurm" else "the --slurm regression differs from the local one") + ":")
    for p in problems:
        print("  " + p)
    sys.exit(1)
PY

# The regression through Slurm into a fresh output directory (its models built by Slurm jobs), then
# the same list locally in the same directory (the models reused, the runs run again).
rm -rf "$outdir"
mkdir -p "$outdir"
t0=$(date +%s)
"$capsgen" regress "$list" --slurm --slurm-timeout 1500 --out "$outdir/out" >"$outdir/slurm.out" 2>&1
rc_slurm=$?
t1=$(date +%s)
echo "local_slurm: capsgen regress --slurm: exit status $rc_slurm, $((t1 - t0)) s"
grep -h '^\[regress .*\] slurm:' "$outdir/slurm.out"
python3 "$tmp/check.py" slurm "$outdir/out" "$outdir/slurm" || exit 1
"$capsgen" regress "$list" -j 2 --out "$outdir/out" >"$outdir/local.out" 2>&1
rc_local=$?
t2=$(date +%s)
echo "local_slurm: capsgen regress -j 2 (models reused): exit status $rc_local, $((t2 - t1)) s"
python3 "$tmp/check.py" local "$outdir/out" "$outdir/slurm" "$rc_slurm" "$rc_local" || exit 1
