"""tandem place (docs/PLACEMENT.md): mappings are permutations that respect
the cores of each host, a clustered pattern is placed together by every
algorithm, bad input gets clear errors, the writers' exact text, and
tandem run --placement starting each rank on its mapped core under both MPIs."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import build_for, launch, program_path, tandem_cli
from tandem import mapping, place
from tandem.builds import TandemError
from tandem.launch import launcher_environment
from test_report import empty_job, record, write_job

ALGORITHMS = ["treematch", "greedy", "scotch"]


def algorithm_or_skip(name: str) -> str:
    """Scotch's library is installed by tools/install-deps.sh; without it the
    option stays and says why it cannot run."""
    if name == "scotch" and place.Scotch().lib is None:
        pytest.skip(place.Scotch().error)
    return name


def clustered(ranks: int, partner) -> np.ndarray:
    """Pairs (r, partner(r)) that exchange 1 MiB, everything else 1 KiB."""
    weight = np.full((ranks, ranks), 1024.0)
    for r in range(ranks):
        weight[r, partner(r)] = weight[partner(r), r] = 1 << 20
    np.fill_diagonal(weight, 0)
    return weight


HWLOC = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
  <object type="Machine" os_index="0">
    {packages}
  </object>
</topology>
"""


def hwloc_xml(packages: int, l2_per_package: int, cores_per_l2: int, pus: int = 1) -> str:
    """A small balanced hwloc 2 topology, with a NUMA node and L1 caches passed through."""
    text, core, pu = [], 0, 0
    for p in range(packages):
        text.append(f'<object type="Package" os_index="{p}">')
        text.append(f'<object type="NUMANode" os_index="{p}"/>')
        text.append('<object type="L3Cache" cache_size="1048576">')
        for _ in range(l2_per_package):
            text.append('<object type="L2Cache" cache_size="524288">')
            for _ in range(cores_per_l2):
                text.append('<object type="L1Cache"><object type="Core" os_index="0">')
                for _ in range(pus):
                    text.append(f'<object type="PU" os_index="{pu}"/>')
                    pu += 1
                text.append("</object></object>")
                core += 1
            text.append("</object>")
        text.append("</object></object>")
    return HWLOC.format(packages="\n".join(text))


# ---------------------------------------------------------------- mappings


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ranks, hosts, cores", [(16, 2, 8), (12, 4, 4), (7, 2, 4), (1, 1, 1)])
def test_a_mapping_is_a_permutation_that_respects_cores_per_host(algorithm, ranks, hosts, cores):
    algorithm_or_skip(algorithm)
    rng = np.random.default_rng(ranks)
    weight = rng.integers(0, 1000, (ranks, ranks)).astype(float)
    weight = weight + weight.T
    np.fill_diagonal(weight, 0)
    machine = place.machine_from_shape(hosts, cores)
    leaf_of_rank = place.place(weight, machine, algorithm)
    assert len(leaf_of_rank) == ranks
    assert len(set(leaf_of_rank.tolist())) == ranks
    assert all(0 <= leaf < hosts * cores for leaf in leaf_of_rank)
    placed = place.placement_of(leaf_of_rank, machine, algorithm, {})
    per_host = np.bincount(placed.host, minlength=hosts)
    assert per_host.max() <= cores
    assert all(0 <= core < cores for core in placed.core)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_pairs_placed_apart_are_placed_together(algorithm):
    """Rank r and r + 8 exchange the most: the identity layout puts every pair
    across the 2 hosts; every algorithm puts each pair on one host."""
    algorithm_or_skip(algorithm)
    weight = clustered(16, lambda r: (r + 8) % 16)
    machine = place.machine_from_shape(2, 8)
    identity = place.cost(weight, np.arange(16), machine)
    leaf_of_rank = place.place(weight, machine, algorithm)
    placed = place.cost(weight, leaf_of_rank, machine)
    for r in range(8):
        assert leaf_of_rank[r] // 8 == leaf_of_rank[r + 8] // 8, (r, leaf_of_rank)
    assert identity.host_share > 0.9
    assert placed.host_share < 0.5 * identity.host_share
    assert placed.hop_bytes < identity.hop_bytes


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_pairs_share_an_l2_cache_on_an_hwloc_topology(tmp_path, algorithm):
    """2 packages x 2 L2 x 2 cores (2 PUs each): partners r and r + 4 end up on
    the two cores of one L2 cache; the cores' CPUs are their first PUs."""
    algorithm_or_skip(algorithm)
    topology = tmp_path / "node.xml"
    topology.write_text(hwloc_xml(2, 2, 2, pus=2))
    machine = place.machine_from_topology(str(topology))
    assert machine.levels == ["Package", "L3Cache", "L2Cache", "Core"]
    assert machine.arities == [2, 1, 2, 2]  # one L3 per package: no distance of its own
    assert machine.cpus == [0, 2, 4, 6, 8, 10, 12, 14]
    weight = clustered(8, lambda r: (r + 4) % 8)
    leaf_of_rank = place.place(weight, machine, algorithm)
    for r in range(4):
        assert leaf_of_rank[r] // 2 == leaf_of_rank[r + 4] // 2, leaf_of_rank


def test_the_cost_counts_edges_between_cores():
    """Two ranks exchanging 10 bytes each way: 2 edges apart under one L2, 4
    under one host, 6 across hosts; cross-host bytes only in the last case."""
    machine = place.Machine(["a", "b"], ["L2", "cores"], [2, 2], [0, 1, 2, 3])
    weight = np.array([[0.0, 10], [10, 0]])
    for leaves, hops, across in (([0, 1], 2, 0), ([0, 2], 4, 0), ([0, 4], 6, 10)):
        found = place.cost(weight, np.array(leaves), machine)
        assert found.hop_bytes == 10 * hops
        assert found.total == 10
        assert found.across_hosts == across


def test_1024_ranks_are_placed_by_every_algorithm():
    """No timing asserted here: PERFORMANCE.md has the timings."""
    weight = place.synthetic(1024)
    machine = place.machine_from_shape(64, 16)
    for algorithm in ALGORITHMS:
        if algorithm == "scotch" and place.Scotch().lib is None:
            continue
        leaf_of_rank = place.place(weight, machine, algorithm)
        assert sorted(leaf_of_rank.tolist()) == list(range(1024))


# --------------------------------------------------------------- the CLI


def pairs_job(tmp_path) -> str:
    """A record of 8 ranks in which r sends 1 MiB to r + 4 and back by
    point-to-point, and 1 KiB to every other rank by collectives."""
    job = empty_job(8)
    for r in range(8):
        record(job, "p2p_send", r, (r + 4) % 8, [1 << 20])
        for peer in range(8):
            if peer != r:
                record(job, "coll", r, peer, [1024])
    return write_job(tmp_path, job)


def test_cli_place_writes_a_mapping_and_prints_the_costs(tmp_path):
    prefix = pairs_job(tmp_path)
    out = tmp_path / "job.map"
    result = tandem_cli("place", prefix, "--hosts", "2", "--cores", "4", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "identity (rank r on core r)" in result.stdout
    assert "treematch" in result.stdout
    doc = json.loads(out.read_text())
    assert doc["format"] == "tandem-placement"
    assert doc["ranks"] == 8 and doc["cores_per_host"] == 4
    assert doc["hosts"] == ["host0", "host1"]
    assert doc["algorithm"] == "treematch" and doc["kind"] == "all"
    hosts = [entry["host"] for entry in doc["mapping"]]
    assert [entry["rank"] for entry in doc["mapping"]] == list(range(8))
    assert all(hosts[r] == hosts[r + 4] for r in range(4))
    assert doc["cost"]["identity"]["across_hosts_share"] > 0.9
    assert doc["cost"]["treematch"]["across_hosts_share"] < 0.2
    shares = [line.split()[-1] for line in result.stdout.splitlines() if line.endswith("%")]
    assert float(shares[0].rstrip("%")) > 90 and float(shares[1].rstrip("%")) < 20
    placed = mapping.load_placement(out)
    assert placed.ranks == 8 and placed.hosts == ["host0", "host1"]


def test_cli_place_by_kind_weighs_that_traffic_only(tmp_path):
    """--kind coll sees the collectives' even spread only: no pair matters,
    and the mapping is still a permutation."""
    prefix = pairs_job(tmp_path)
    out = tmp_path / "coll.map"
    result = tandem_cli(
        "place", prefix, "--hosts", "2", "--cores", "4", "--kind", "coll", "-o", str(out)
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["kind"] == "coll"
    assert abs(doc["cost"]["identity"]["across_hosts_share"] - 16 / 28) < 1e-3
    cores = {(e["host"], e["core"]) for e in doc["mapping"]}
    assert len(cores) == 8


def test_the_default_host_is_this_machine(tmp_path):
    prefix = pairs_job(tmp_path)
    out = tmp_path / "one.map"
    result = tandem_cli("place", prefix, "--hosts", "1", "--cores", "8", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["hosts"] == [socket.gethostname()]


def place_error(tmp_path, *args: str) -> str:
    result = tandem_cli("place", *args)
    assert result.returncode == 2, result.stdout
    return result.stderr


def test_errors_name_what_was_wrong_and_what_is_accepted(tmp_path):
    prefix = pairs_job(tmp_path)
    out = str(tmp_path / "m.map")
    error = place_error(tmp_path, str(tmp_path / "nothing"), "-o", out)
    assert "nothing.json: no such file" in error and "TANDEM_MONITOR=1" in error
    error = place_error(tmp_path, prefix, "--hosts", "1", "--cores", "4", "-o", out)
    assert "8 ranks but the machine has 4 cores" in error and "at least one core per rank" in error
    error = place_error(tmp_path, prefix, "--algorithm", "metis", "-o", out)
    assert "--algorithm metis: not known; expected one of treematch, scotch, greedy" in error
    error = place_error(tmp_path, prefix, "--kind", "io", "-o", out)
    assert "--kind io: not known; expected one of all, p2p, coll, osc" in error
    error = place_error(tmp_path, prefix, "--hosts", "0", "-o", out)
    assert "--hosts 0: expected at least 1 host" in error
    error = place_error(tmp_path, prefix)
    assert "no -o MAPPING" in error
    assert not (tmp_path / "m.map").exists()


def test_topology_errors(tmp_path):
    prefix = pairs_job(tmp_path)
    out = str(tmp_path / "m.map")
    small = tmp_path / "small.xml"
    small.write_text(hwloc_xml(1, 2, 2))
    error = place_error(tmp_path, prefix, "--topology", str(small), "-o", out)
    assert (
        "8 ranks but the machine has 4 cores (1 host(s) x 1 Package x 1 L3Cache x 2 L2Cache"
        in error
    )
    broken = tmp_path / "broken.xml"
    broken.write_text(hwloc_xml(2, 2, 2).replace('<object type="L2Cache"', "<x", 1))
    error = place_error(tmp_path, prefix, "--topology", str(broken), "-o", out)
    assert "not XML" in error
    lopsided = tmp_path / "lopsided.xml"
    text = hwloc_xml(2, 2, 2)
    cut = text.index('<object type="L1Cache">')
    end = text.index("</object></object>", cut) + len("</object></object>")
    lopsided.write_text(text[:cut] + text[end:])  # one core fewer in the first L2
    error = place_error(tmp_path, prefix, "--topology", str(lopsided), "-o", out)
    assert "the tree is not balanced" in error and "--hosts H --cores C" in error
    error = place_error(tmp_path, prefix, "--topology", str(tmp_path / "none.xml"), "-o", out)
    assert "none.xml: cannot read it" in error
    plain = tmp_path / "plain.xml"
    plain.write_text("<topology/>")
    error = place_error(tmp_path, prefix, "--topology", str(plain), "-o", out)
    assert "no Machine object" in error


def test_topology_and_hosts_multiply(tmp_path):
    prefix = pairs_job(tmp_path)
    topology = tmp_path / "node.xml"
    topology.write_text(hwloc_xml(1, 2, 2))
    out = tmp_path / "m.map"
    result = tandem_cli(
        "place", prefix, "--topology", str(topology), "--hosts", "2", "--host-names",
        "n1,n2", "-o", str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["hosts"] == ["n1", "n2"] and doc["cores_per_host"] == 4
    assert doc["topology"] == {
        "levels": ["Package", "L3Cache", "L2Cache", "Core"],
        "arities": [1, 1, 2, 2],
    }
    hosts = [entry["host"] for entry in doc["mapping"]]
    assert all(hosts[r] == hosts[r + 4] for r in range(4))


# --------------------------------------------------------------- writers


def two_hosts_mapping(tmp_path, cpus=(1, 0, 0, 1)) -> str:
    """4 ranks alternating between hosts a and b, on the CPUs given."""
    entries = [{"rank": r, "host": r % 2, "core": cpus[r], "cpu": cpus[r]} for r in range(4)]
    doc = {
        "format": "tandem-placement",
        "version": 1,
        "ranks": 4,
        "hosts": ["a", "b"],
        "cores_per_host": 2,
        "algorithm": "hand",
        "mapping": entries,
    }
    path = tmp_path / "two.map"
    path.write_text(json.dumps(doc))
    return str(path)


def test_rankfile_writer(tmp_path):
    out = tmp_path / "rankfile"
    result = tandem_cli("place", "--rankfile", two_hosts_mapping(tmp_path), "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_text() == (
        "rank 0=a slot=1\nrank 1=b slot=0\nrank 2=a slot=0\nrank 3=b slot=1\n"
    )
    renamed = tandem_cli("place", "--rankfile", two_hosts_mapping(tmp_path), "--host-names", "x,y")
    assert renamed.stdout.startswith("rank 0=x slot=1\nrank 1=y slot=0\n"), renamed.stderr


def test_hydra_writer_with_one_binding_list(tmp_path):
    """Each host's ranks take CPUs 1 then 0 in rank order: one user list binds them."""
    path = two_hosts_mapping(tmp_path, cpus=(1, 1, 0, 0))
    placed = mapping.load_placement(path)
    assert mapping.hydra_binding(placed) is None  # 4 runs of one rank: CPU 1 and 0 at index 0
    sorted_hosts = json.loads(Path(path).read_text())
    sorted_hosts["mapping"] = [
        {"rank": 0, "host": 0, "core": 1, "cpu": 1},
        {"rank": 1, "host": 0, "core": 0, "cpu": 0},
        {"rank": 2, "host": 1, "core": 1, "cpu": 1},
        {"rank": 3, "host": 1, "core": 0, "cpu": 0},
    ]
    (tmp_path / "blocks.map").write_text(json.dumps(sorted_hosts))
    result = tandem_cli("place", "--hydra", str(tmp_path / "blocks.map"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("a:2\nb:2\n# mpiexec -f THIS_FILE -bind-to user:1,0 -n 4 PROGRAM\n")


def test_hydra_writer_without_one_binding_list(tmp_path):
    placed = mapping.load_placement(two_hosts_mapping(tmp_path))
    assert mapping.hydra_machinefile(placed) == "a:1\nb:1\na:1\nb:1\n"
    assert mapping.hydra_binding(placed) is None
    assert mapping.hydra_configfile(placed, ["/bin/app", "-x", "3"]) == (
        "-n 1 taskset -c 1 /bin/app -x 3\n"
        "-n 1 taskset -c 0 /bin/app -x 3\n"
        "-n 1 taskset -c 0 /bin/app -x 3\n"
        "-n 1 taskset -c 1 /bin/app -x 3\n"
    )
    text = mapping.hydra_text(placed)
    assert text.startswith("a:1\nb:1\na:1\nb:1\n# no single -bind-to user:LIST")
    assert "mpiexec -f THIS_FILE -configfile FILE" in text
    assert "#   rank 3 (on b): taskset -c 1\n" in text
    with pytest.raises(TandemError, match="holds a blank or a quote"):
        mapping.hydra_configfile(placed, ["/bin/app", "two words"])


def test_a_bad_mapping_is_refused(tmp_path):
    path = tmp_path / "bad.map"
    doc = json.loads(Path(two_hosts_mapping(tmp_path)).read_text())
    doc["mapping"][3] = {"rank": 3, "host": 0, "core": 1}  # rank 0's core
    path.write_text(json.dumps(doc))
    with pytest.raises(TandemError, match=r"mapping\[3\]: core 1 of a holds another rank"):
        mapping.load_placement(path)
    doc["mapping"][3] = {"rank": 3, "host": 2, "core": 1}
    path.write_text(json.dumps(doc))
    with pytest.raises(TandemError, match=r"mapping\[3\].host: expected an index from 0 to 1"):
        mapping.load_placement(path)
    error = tandem_cli("place", "--rankfile", str(tmp_path / "none.map")).stderr
    assert "none.map: no such file; expected a MAPPING that tandem place -o wrote" in error


# ------------------------------------------------------ applied at launch


def reversed_mapping(tmp_path, hosts: list[str], cpus: list[int], host_of: list[int]) -> str:
    entries = [
        {"rank": r, "host": host_of[r], "core": cpu, "cpu": cpu} for r, cpu in enumerate(cpus)
    ]
    doc = {
        "format": "tandem-placement",
        "version": 1,
        "ranks": len(cpus),
        "hosts": hosts,
        "cores_per_host": 2,
        "algorithm": "hand",
        "mapping": entries,
    }
    path = tmp_path / "run.map"
    path.write_text(json.dumps(doc))
    return str(path)


def hello(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_run_placement_binds_each_rank_to_its_core(tmp_path, mpi):
    """tandem place --hosts 1 --cores 2 names this host; rank 0 on CPU 1 and
    rank 1 on CPU 0, as the program's sched_getcpu says, each bound to one."""
    program = str(build_for(mpi).directory / "tandem-hello")
    mapped = reversed_mapping(tmp_path, [socket.gethostname()], [1, 0], [0, 0])
    found = hello(tandem_cli("run", "-q", "--placement", mapped, program))
    assert found["cpu"] == [1, 0]
    assert found["cpus_allowed"] == [1, 1]
    assert found["ring"] == "ok" and found["tandem_active"] == 1
    dry = tandem_cli("run", "--placement", mapped, "--dry-run", program)
    assert ("--rankfile" if mpi == "openmpi" else "-bind-to user:1,0") in dry.stdout
    kept = re.search(r"(/\S*/tandem-placement-[^/\s]+)/", dry.stdout)  # a dry run keeps them
    assert kept, dry.stdout
    shutil.rmtree(kept.group(1))


def test_run_placement_binds_ranks_through_hydras_configfile(tmp_path):
    """Ranks alternating between two names of this machine need a CPU list
    per run: Hydra's -configfile with taskset binds each rank."""
    program = str(build_for("mpich").directory / "tandem-hello")
    mapped = reversed_mapping(
        tmp_path, [socket.gethostname(), "localhost"], [1, 0, 0, 1], [0, 1, 0, 1]
    )
    found = hello(tandem_cli("run", "-q", "--placement", mapped, program))
    assert found["cpu"] == [1, 0, 0, 1]
    assert found["cpus_allowed"] == [1, 1, 1, 1]


def test_run_placement_on_other_host_names_and_errors(tmp_path):
    program = str(build_for("openmpi").directory / "tandem-hello")
    mapped = reversed_mapping(tmp_path, ["elsewhere"], [1, 0], [0, 0])
    found = hello(
        tandem_cli(
            "run", "-q", "--placement", mapped, "--host-names", socket.gethostname(), program
        )
    )
    assert found["cpu"] == [1, 0]
    error = tandem_cli("run", "-n", "3", "--placement", mapped, program).stderr
    assert "-n 3: the mapping" in error and "places 2 ranks" in error
    error = tandem_cli("run", "--host-names", "a,b", program).stderr
    assert "--host-names: it names the hosts of --placement MAPPING" in error


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_reorder_renumbers_the_world_inside_the_run(tmp_path, mpi):
    """TANDEM_REORDER: the processes stay where they were launched, and rank
    i of MPI_COMM_WORLD is the process launched in the slot the mapping gives
    rank i (tests/reverse4.map: rank i is launched process 3 - i); a ring in
    the new order still closes (tests/c/launch_order.c checks it)."""
    program = build_for(mpi).directory / "tests" / "test_launch_order"
    reverse = Path(__file__).resolve().parents[1] / "reverse4.map"
    result = tandem_cli("run", "-q", "-n", "4", "--mpi", mpi, "-e", f"TANDEM_REORDER={reverse}",
                        str(program))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert re.findall(r"rank (\d) launched as (\d)", result.stdout) == [
        ("0", "3"), ("1", "2"), ("2", "1"), ("3", "0")
    ]  # fmt: skip
    short = tmp_path / "three.map"
    text = json.loads(reverse.read_text())
    text["mapping"] = text["mapping"][:3]
    short.write_text(json.dumps(text))
    result = tandem_cli("run", "-q", "-n", "4", "--mpi", mpi, "-e", f"TANDEM_REORDER={short}",
                        str(program))  # fmt: skip
    assert result.returncode != 0
    assert f"TANDEM_REORDER={short}: {short} maps 3 ranks, and the job has 4; stopping" in (
        result.stderr
    )
    missing = tmp_path / "none.map"
    result = tandem_cli("run", "-q", "-n", "2", "--mpi", mpi, "-e", f"TANDEM_REORDER={missing}",
                        str(program))  # fmt: skip
    assert f"TANDEM_REORDER={missing}: cannot read {missing}; stopping" in result.stderr


# ------------------------------------- other inputs: Open MPI's .prof, .mat


def write_mat(path: Path, weight: np.ndarray) -> str:
    """A TreeMatch matrix: row i, column j = what rank i sends rank j."""
    path.write_text("".join(" ".join(str(int(v)) for v in row) + "\n" for row in weight))
    return str(path)


def pairs_matrix(ranks: int) -> np.ndarray:
    """Rank r sends 1 MiB to r + ranks / 2 (mod ranks) and 1 KiB to the
    others: the identity layout puts each heavy pair on two hosts."""
    weight = np.full((ranks, ranks), 1024)
    for r in range(ranks):
        weight[r, (r + ranks // 2) % ranks] = 1 << 20
    np.fill_diagonal(weight, 0)
    return weight


def stencil_matrix(rows: int, columns: int, bytes_per_face: int = 1 << 18) -> np.ndarray:
    """A 2D 5-point stencil on a rows x columns grid of ranks numbered row by
    row (MiniGhost's pattern in 2D): each rank sends each neighbour a face."""
    ranks = rows * columns
    weight = np.zeros((ranks, ranks), dtype=np.int64)
    for r in range(ranks):
        row, column = divmod(r, columns)
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            if 0 <= row + dr < rows and 0 <= column + dc < columns:
                weight[r, (row + dr) * columns + column + dc] = bytes_per_face
    return weight


def reduce_tree_matrix(ranks: int, size: int = 1 << 20) -> np.ndarray:
    """A binary-tree reduction to rank 0 (the monitoring paper's MPI_Reduce):
    rank r sends its buffer to its parent (r - 1) // 2."""
    weight = np.zeros((ranks, ranks), dtype=np.int64)
    for r in range(1, ranks):
        weight[r, (r - 1) // 2] = size
    return weight


def test_place_reads_a_treematch_matrix(tmp_path):
    mat = write_mat(tmp_path / "pairs.mat", pairs_matrix(8))
    out = tmp_path / "pairs.map"
    result = tandem_cli("place", mat, "--hosts", "2", "--cores", "4", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "8 ranks of " + mat in result.stdout and "TreeMatch matrix" in result.stdout
    doc = json.loads(out.read_text())
    hosts = [entry["host"] for entry in doc["mapping"]]
    assert all(hosts[r] == hosts[r + 4] for r in range(4))
    assert doc["record"] == mat


def test_bad_matrices_and_prof_files_are_named(tmp_path):
    out = str(tmp_path / "m.map")
    (tmp_path / "ragged.mat").write_text("0 1 2\n1 0\n2 1 0\n")
    error = place_error(tmp_path, str(tmp_path / "ragged.mat"), "-o", out)
    assert "ragged.mat: 3 lines of [2, 3] numbers; expected N lines of N numbers" in error
    (tmp_path / "words.mat").write_text("0 x\n1 0\n")
    error = place_error(tmp_path, str(tmp_path / "words.mat"), "-o", out)
    assert "words.mat:1: '0 x' holds something other than numbers" in error
    (tmp_path / "minus.mat").write_text("0 -1\n1 0\n")
    error = place_error(tmp_path, str(tmp_path / "minus.mat"), "-o", out)
    assert "negative or infinite numbers; expected weights of 0 or more" in error
    (tmp_path / "bad.0.prof").write_text("# POINT TO POINT\nE\t0\t1\tmany bytes\n")
    (tmp_path / "bad.1.prof").write_text("# POINT TO POINT\n")
    error = place_error(tmp_path, str(tmp_path / "bad"), "-o", out)
    assert "bad.0.prof:2: 'E\\t0\\t1\\tmany bytes' is not a monitoring line" in error
    assert "pml_monitoring_enable_output 3" in error
    (tmp_path / "far.0.prof").write_text("E\t0\t5\t10 bytes\t1 msgs sent\n")
    (tmp_path / "far.1.prof").write_text("")
    error = place_error(tmp_path, str(tmp_path / "far"), "-o", out)
    assert "far.0.prof:1: ranks 0 -> 5, but there are files for ranks 0 to 1 only" in error
    (tmp_path / "gap.0.prof").write_text("")
    (tmp_path / "gap.2.prof").write_text("")
    error = place_error(tmp_path, str(tmp_path / "gap"), "-o", out)
    assert "gap.2.prof: no gap.1.prof beside it; expected one file per rank, 0 to 1" in error
    error = place_error(tmp_path, str(tmp_path / "nothing"), "-o", out)
    assert "nor nothing.<rank>.prof beside it" in error


def test_place_reads_open_mpis_own_monitoring_files(tmp_path):
    """tests/c/place_pattern.c sends the bytes of a matrix under Open MPI's
    monitoring (--mca pml_monitoring_enable 2: collectives' messages on I
    lines); tandem place reads the PREFIX.<rank>.prof files: the p2p kind is
    the matrix, and the mapping is the one of the matrix itself."""
    build = build_for("openmpi")
    weight = pairs_matrix(4)
    mat = write_mat(tmp_path / "pairs.mat", weight)
    prefix = tmp_path / "ompi"
    program = [program_path(build, "test_place_pattern"), mat, "send"]
    monitoring = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output",
                  "3", "--mca", "pml_monitoring_filename", str(prefix)]  # fmt: skip
    result = launch(build, 4, program, with_tandem=False, launcher_args=monitoring)
    assert result.returncode == 0, result.stderr
    files = place.prof_files(str(prefix))
    assert [f.name for f in files] == [f"ompi.{r}.prof" for r in range(4)]
    volume, messages = place.read_prof(files, "p2p")
    assert volume.tolist() == weight.tolist()
    assert messages.tolist() == (weight > 0).astype(int).tolist()
    maps = {}
    for name, source in (("prof", str(prefix)), ("mat", mat)):
        out = tmp_path / f"{name}.map"
        args = ["place", source, "--kind", "p2p", "--hosts", "2", "--cores", "2", "-o", str(out)]
        result = tandem_cli(*args)
        assert result.returncode == 0, result.stderr
        maps[name] = json.loads(out.read_text())
    assert "ompi.*.prof (4 files)" in maps["prof"]["record"]
    assert maps["prof"]["mapping"] == maps["mat"]["mapping"]
    assert maps["prof"]["cost"] == maps["mat"]["cost"]
    hosts = [entry["host"] for entry in maps["prof"]["mapping"]]
    assert hosts[0] == hosts[2] and hosts[1] == hosts[3]


# ----------------------------------- against Open MPI's topo/treematch


def open_mpi_order(output: str, ranks: int) -> np.ndarray:
    """The leaf of each new rank after Open MPI's MPI_Dist_graph_create with
    reorder (tests/c/place_pattern.c prints each process's new rank): the
    processes sit in launch order, process p on leaf p (block-wise)."""
    found = re.findall(r"process (\d+) new (\d+) host (\S+) cpu (-?\d+)", output)
    assert len(found) == ranks, output
    new = [int(n) for _, n, _, _ in found]
    assert sorted(new) == list(range(ranks)), f"not a permutation: {new}"
    leaf_of_rank = np.empty(ranks, dtype=np.int64)
    leaf_of_rank[new] = np.arange(ranks)
    return leaf_of_rank


def treematch_component_present() -> bool:
    info = shutil.which("ompi_info")
    if info is None:
        return False
    listing = subprocess.run([info], capture_output=True, text=True, check=False).stdout
    return re.search(r"MCA topo: treematch", listing) is not None


MATRICES = {
    "pairs": pairs_matrix,
    "stencil": lambda n: stencil_matrix(2, n // 2),
    "reduce-tree": reduce_tree_matrix,
}


def compare_with_open_mpi(tmp_path, name: str, ranks: int, hosts: int, output: str) -> None:
    """Tandem's treematch on the same matrix and hosts x cores shape costs
    no more than the order Open MPI's topo/treematch gave (Tandem's cost)."""
    weight = MATRICES[name](ranks)
    mat = tmp_path / f"{name}.mat"
    machine = place.machine_from_shape(hosts, ranks // hosts)
    theirs = place.cost(place.read_mat(mat), open_mpi_order(output, ranks), machine)
    out = tmp_path / f"{name}.map"
    args = ["place", str(mat), "--algorithm", "treematch", "--hosts", str(hosts), "--cores",
            str(ranks // hosts), "-o", str(out)]  # fmt: skip
    result = tandem_cli(*args)
    assert result.returncode == 0, result.stderr
    ours = json.loads(out.read_text())["cost"]["treematch"]["hop_bytes"]
    assert weight.sum() > 0
    assert ours <= theirs.hop_bytes * (1 + 1e-9), (name, ours, theirs.hop_bytes, output)


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("ranks", [2, 4, 8])
def test_treematch_costs_no_more_than_open_mpis_topo_treematch(tmp_path, name, ranks):
    """Open MPI 4.1.4 applies TreeMatch through MPI_Dist_graph_create with
    reorder = 1 (--mca topo treematch), weights = the matrix, on the cores
    of one host: it reorders where the ranks fit the cores (2 here) and
    keeps the world's order when they oversubscribe them. On the same
    matrix, taken on 2 hosts x ranks / 2 cores in launch order, Tandem's
    treematch costs no more than Open MPI's order."""
    if not treematch_component_present():
        pytest.skip("Open MPI's topo/treematch component is not installed (ompi_info)")
    build = build_for("openmpi")
    mat = write_mat(tmp_path / f"{name}.mat", MATRICES[name](ranks))
    program = [program_path(build, "test_place_pattern"), mat, "reorder"]
    result = launch(build, ranks, program, with_tandem=False,
                    launcher_args=["--mca", "topo", "treematch"])  # fmt: skip
    assert result.returncode == 0, result.stderr
    compare_with_open_mpi(tmp_path, name, ranks, 2, result.stdout)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_treematch_against_open_mpis_topo_treematch_on_two_hosts(tmp_path, name, simulated_hosts):
    """The same on 2 simulated hosts x 2 ranks (root), where Open MPI's
    topo/treematch would see 2 nodes of 2 cores. Open MPI 4.1.4 cannot: each
    rank finds no node id for the other host's ranks in the modex ("Unable to
    extract peer ... nodeid from the modex"), takes the job for one node of 2
    cores, and TreeMatch ends the program ("Not enough slots/constraints (2)
    for the communication matrix order (4)"). That failure is expected, named
    here; an Open MPI that gets past it is compared as on one host."""
    build = build_for("openmpi")
    if not treematch_component_present():
        pytest.skip("Open MPI's topo/treematch component is not installed (ompi_info)")
    mat = write_mat(tmp_path / f"{name}.mat", MATRICES[name](4))
    program = [program_path(build, "test_place_pattern"), mat, "reorder"]
    command = simulated_hosts.launch_command(build, 4, program, False, {},
                                             ["--mca", "topo", "treematch"], cwd=tmp_path)  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False,
                            env=launcher_environment(build))  # fmt: skip
    if result.returncode != 0 and "nodeid from the modex" in result.stderr:
        assert "Not enough slots/constraints (2) for the communication matrix order (4)" in (
            result.stdout + result.stderr
        )
        pytest.xfail("Open MPI 4.1.4's topo/treematch finds no node id of the other host's ranks")
    assert result.returncode == 0, result.stderr
    compare_with_open_mpi(tmp_path, name, 4, 2, result.stdout)


# ------------------------------------------------------- tandem bench place


def test_bench_place_on_two_hosts_writes_every_order_and_mapping(tmp_path):
    """The smallest tandem bench place (2 simulated hosts x 2 ranks, the
    pairs kernel, one round; root): the JSON holds the timings of every
    order, each mapping is a permutation of the ranks' leaves, the bad order
    puts every heavy pair across the hosts and the placements none, and
    the 8-byte latency was measured under both TANDEM_REORDER mappings."""
    from tandem import hosts

    missing = hosts.missing_requirements("1gbit")
    if missing:
        pytest.skip(missing)
    out = tmp_path / "bench"
    result = tandem_cli(
        "bench", "place", "--mpi", "openmpi", "--hosts", "2", "--kernels", "pairs",
        "--rounds", "1", "--trials", "1", "--steps", "2", "--halo-bytes", "65536",
        "--place-ranks", "8", "--out", str(out), timeout=180,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads((out / "place.json").read_text())
    for key in ("records", "summary", "mappings", "place_timings", "latency", "hosts"):
        assert key in doc, key
    assert doc["hosts"] == {"counts": [2], "link": "1gbit", "ranks_per_host": 2}
    assert doc["problems"] == []
    orders = {s["order"] for s in doc["summary"]}
    assert {"bad", "treematch", "greedy", "best"} <= orders
    assert all(r["correct"] for r in doc["records"])
    for entry in doc["mappings"]:
        if "leaf_of_rank" in entry:
            assert sorted(entry["leaf_of_rank"]) == list(range(4)), entry
    share = {m["order"]: m["cost"]["across_hosts_share"] for m in doc["mappings"] if "cost" in m}
    assert share["bad"] > 0.99 and share["treematch"] < 0.01 and share["best"] < 0.01
    assert {t["ranks"] for t in doc["place_timings"]} == {8}
    configs = {s["config"] for s in doc["latency"]["summary"]}
    assert {"tandem", "tandem-reorder-identity", "tandem-reorder-reversed"} <= configs
    assert (out / "place.md").exists() and (out / "place.png").exists()
    assert "| Open MPI | 2 | 4 | pairs |" in (out / "place.md").read_text()


def test_bench_place_errors_name_the_value(tmp_path):
    error = tandem_cli("bench", "place", "--kernels", "pairs,fft").stderr
    assert "--kernels pairs,fft: 'fft' is not one of pairs, stencil, cg" in error
    error = tandem_cli("bench", "place", "--place-ranks", "8,x").stderr
    assert "--place-ranks 8,x: expected rank counts such as 8,64,4096" in error
    error = tandem_cli("bench", "place", "--link", "fast").stderr
    assert "--link fast: expected a positive number and one of tc's units" in error
    error = tandem_cli("bench", "place", "--hosts", "1").stderr
    assert "--hosts 1: tandem bench place needs 2 to 64 hosts" in error


def test_a_placement_on_hosts_of_their_own_cpus(tmp_path):
    """Simulated hosts that divide the machine's CPUs (host a on 0-7, b on
    8-15): core c of a host is the c-th of its CPUs, by number; a core past
    a host's CPUs is an error naming the rank and the host."""
    placed = mapping.load_placement(two_hosts_mapping(tmp_path))
    assert mapping.on_cpus(placed, []) is placed
    moved = mapping.on_cpus(placed, [list(range(8)), list(range(8, 16))])
    assert moved.core == moved.cpu == [1, 8, 0, 9] and moved.host == placed.host
    assert mapping.rankfile(moved).startswith("rank 0=a slot=1\nrank 1=b slot=8\n")
    with pytest.raises(TandemError, match=r"rank 0: core 1 of a, which has 1 CPUs"):
        mapping.on_cpus(placed, [[0], [1]])
