#!/usr/bin/env python3
"""Writes the SimGrid platforms of the SMPI benchmark (docs/PERFORMANCE.md "Simulated clusters").

   platforms.py OUT_DIR NAME...      NAME = KIND-P or KIND-PxN, KIND in fattree, tapered, torus, dragonfly

For each NAME writes OUT_DIR/NAME.xml (one SimGrid 3.32 <cluster>), OUT_DIR/NAME.hosts (one host
per line, rank i on host i) and prints "NAME TOPOLOGY" where TOPOLOGY is the matching
`commfit plan --topology` value (fattree, torus and dragonfly map exactly: same routes, link names
and bandwidths, see tests/simgrid).
Every link: 12.5 GB/s, 0.25 us, full duplex (SPLITDUPLEX). A fat-tree route is 4 links (1 us),
a torus route up to 2 + diameter links, a dragonfly route up to 7 links.

KIND-PxN: the same P hosts with N ranks each (P * N ranks): the hostfile names each host N times,
so ranks r .. r + N - 1 share host r / N, as commfit's `+nodeN` places them (the printed topology
ends in +nodeN). A host's ranks share its one link to the network (its NIC). Messages between two
ranks of a host take the host's loopback link: 7 GB/s and no latency of its own, shared by nothing
(FATPIPE). The 7 GB/s is Open MPI 4.1's shared-memory bandwidth at 1 MiB on this machine
(`mpirun -np 2 bench_pingpong`: 7.04 GB/s; 0.49 us one way at 8 bytes). SMPI adds its own
per-message CPU costs (smpi/os, or: 0.5 us each in run.py) on top, which already exceed that
latency, so the loopback's own latency is 0.
"""
import sys

BW = "12.5GBps"
LAT = "0.25us"

SHAPES = {
    # name: (simgrid topology, topo_parameters, commfit --topology)
    "fattree-4": ("FAT_TREE", "2;2,2;1,2;1,1", "fattree:2;2,2;1,2;1,1"),
    "fattree-8": ("FAT_TREE", "2;4,2;1,2;1,1", "fattree:2;4,2;1,2;1,1"),
    "fattree-16": ("FAT_TREE", "2;4,4;1,4;1,1", "fattree:2;4,4;1,4;1,1"),
    "tapered-16": ("FAT_TREE", "2;4,4;1,1;1,1", "fattree:2;4,4;1,1;1,1"),
    "torus-16": ("TORUS", "4,2,2", "torus:4x2x2"),
    "dragonfly-16": ("DRAGONFLY", "2,1;2,1;2,1;2", "dragonfly:2,1;2,1;2,1;2"),
    "fattree-64": ("FAT_TREE", "2;8,8;1,8;1,1", "fattree:2;8,8;1,8;1,1"),
    "tapered-64": ("FAT_TREE", "2;8,8;1,2;1,1", "fattree:2;8,8;1,2;1,1"),
    "torus-64": ("TORUS", "4,4,4", "torus:4x4x4"),
    "dragonfly-64": ("DRAGONFLY", "2,2;2,2;4,2;4", "dragonfly:2,2;2,2;4,2;4"),
    "fattree-256": ("FAT_TREE", "2;16,16;1,16;1,1", "fattree:2;16,16;1,16;1,1"),
    "tapered-256": ("FAT_TREE", "2;16,16;1,4;1,1", "fattree:2;16,16;1,4;1,1"),
    "torus-256": ("TORUS", "8,8,4", "torus:8x8x4"),
    "dragonfly-256": ("DRAGONFLY", "4,8;4,2;4,2;4", "dragonfly:4,8;4,2;4,2;4"),
    "fattree-1024": ("FAT_TREE", "2;32,32;1,32;1,1", "fattree:2;32,32;1,32;1,1"),
    "tapered-1024": ("FAT_TREE", "2;32,32;1,8;1,1", "fattree:2;32,32;1,8;1,1"),
    "torus-1024": ("TORUS", "16,8,8", "torus:16x8x8"),
    "dragonfly-1024": ("DRAGONFLY", "8,8;4,2;8,2;4", "dragonfly:8,8;4,2;8,2;4"),
    "fattree-4096": ("FAT_TREE", "2;64,64;1,64;1,1", "fattree:2;64,64;1,64;1,1"),
}


LOOPBACK_BW = "7GBps"
LOOPBACK_LAT = "0us"


def split(name):
    """(shape name, hosts, ranks per host) of KIND-P or KIND-PxN."""
    kind, size = name.rsplit("-", 1)
    hosts, _, per = size.partition("x")
    return f"{kind}-{hosts}", int(hosts), int(per) if per else 1


def ranks(name):
    _, hosts, per = split(name)
    return hosts * per


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: platforms.py OUT_DIR NAME...")
    out = sys.argv[1]
    for name in sys.argv[2:]:
        shape, n, per = split(name)
        if shape not in SHAPES or per < 1:
            sys.exit(f"platforms.py: unknown platform {name} (known: {' '.join(SHAPES)}, each also as NAMExN)")
        topo, params, commfit = SHAPES[shape]
        loopback = f" loopback_bw=\"{LOOPBACK_BW}\" loopback_lat=\"{LOOPBACK_LAT}\"" if per > 1 else ""
        with open(f"{out}/{name}.xml", "w") as f:
            f.write("<?xml version='1.0'?>\n"
                    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    "<platform version=\"4.1\">\n"
                    f"  <cluster id=\"c\" prefix=\"h\" suffix=\"\" radical=\"0-{n - 1}\" speed=\"100Gf\"\n"
                    f"           bw=\"{BW}\" lat=\"{LAT}\" topology=\"{topo}\" topo_parameters=\"{params}\"\n"
                    f"           sharing_policy=\"SPLITDUPLEX\"{loopback}/>\n"
                    "</platform>\n")
        with open(f"{out}/{name}.hosts", "w") as f:
            f.write("".join(f"h{i}\n" * per for i in range(n)))
        print(name, commfit + (f"+node{per}" if per > 1 else ""))

main()
