#!/bin/sh
# The multi-machine MPI run of the README, on one machine: two network namespaces joined by a
# veth pair stand for two nodes; mpirun (in node A) starts the ranks of node B through an rsh
# agent that enters B's namespace, ranks talk over TCP only (`--mca btl tcp,self`: no shared
# memory), and each node has its own cache (a bind mount in its mount namespace). Rank 0 (the
# server) is alone on A, the clients' ranks 1 and 2 on B. The CSVs must equal the local
# backend's, time aside. Needs root (ip netns, mount) and a build with --features mpi.
#
#   sh scripts/mpi_two_namespaces.sh [path/to/dpca]
set -eu
B=$(realpath "${1:-target/release/dpca}")
W=$(mktemp -d /tmp/dpca-2ns.XXXXXX)
A_IP=10.99.7.1 B_IP=10.99.7.2
cleanup() {
    ip netns del dpca2ns_a 2>/dev/null || true
    ip netns del dpca2ns_b 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
ip netns add dpca2ns_a
ip netns add dpca2ns_b
ip link add dpca2ns_va type veth peer name dpca2ns_vb
ip link set dpca2ns_va netns dpca2ns_a
ip link set dpca2ns_vb netns dpca2ns_b
ip -n dpca2ns_a addr add $A_IP/24 dev dpca2ns_va
ip -n dpca2ns_b addr add $B_IP/24 dev dpca2ns_vb
for n in a b; do
    ip -n dpca2ns_$n link set dpca2ns_v$n up
    ip -n dpca2ns_$n link set lo up
done
mkdir -p "$W/run/cache" "$W/cache_a" "$W/cache_b"
printf '%s slots=1\n%s slots=2\n' $A_IP $B_IP > "$W/hosts"
cat > "$W/agent.sh" <<AGENT
#!/bin/sh
host=\$1; shift
case "\$host" in
  $B_IP) ns=dpca2ns_b; cache=$W/cache_b ;;
  *) ns=dpca2ns_a; cache=$W/cache_a ;;
esac
echo "\$host \$ns" >> $W/launched
exec ip netns exec \$ns sh -c "mount --bind \$cache $W/run/cache && exec \$*"
AGENT
chmod +x "$W/agent.sh"
cat > "$W/run/two_nodes.toml" <<'TOML'
id = "two_nodes"
paper = "faps"
paper_file = "000_87ac87c3d542a13b.txt"
title = "MPI over TCP between two network namespaces"
reproduces = "nothing"
seed = 11

[data]
generator = "svd"
spectrum = "geometric"
n = 40
m = 990
xi = 1.2

[partition]
scheme = "uneven"
clients = 5

[problem]
p = 4

[stop]
max_rounds = 60
objective_tol = 1e-10

[[methods]]
name = "ssi"

[[methods]]
name = "faps"

[[methods]]
name = "localpower"
TOML
cd "$W/run"
ip netns exec dpca2ns_a sh -c "mount --bind $W/cache_a $W/run/cache && \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --hostfile $W/hosts -np 3 \
    --mca plm_rsh_agent $W/agent.sh --mca btl tcp,self \
    --mca btl_tcp_if_include 10.99.7.0/24 --mca oob_tcp_if_include 10.99.7.0/24 \
    --wdir $W/run $B run two_nodes.toml --results mpi --backend mpi --threads 1 --cache cache"
"$B" run two_nodes.toml --results local --threads 1 --cache "$W/cache_local"
echo "node B's launches: $(cat "$W/launched")"
echo "node A's cache: $(ls "$W/cache_a" | tr '\n' ' ')"
echo "node B's cache: $(ls "$W/cache_b" | tr '\n' ' ')(its ranks generated their columns)"
for f in trace.csv summary.csv; do
    python3 - "$W/run/local/faps/two_nodes/default/$f" "$W/run/mpi/faps/two_nodes/default/$f" <<'PY'
import csv, sys
rows = []
for p in sys.argv[1:]:
    r = list(csv.reader(open(p)))
    t = r[0].index("time_s")
    rows.append([x[:t] + x[t + 1:] for x in r])
name = sys.argv[1].rsplit("/", 1)[1]
if rows[0] != rows[1]:
    sys.exit(f"{name}: the MPI run over TCP differs from the local one")
print(f"{name}: {len(rows[0]) - 1} rows equal to the local backend's, time aside")
PY
done
