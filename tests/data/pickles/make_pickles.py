"""Writes the pickles tests/cpp/pickle_reader_test.cc reads (committed beside this script):

    python3 tests/data/pickles/make_pickles.py           # Python's pickle, protocols 2 to 5
    python3 tests/data/pickles/make_pickles.py --torch   # also a real Flight Recorder dump

plain_p<N>.pickle    the structure of a Flight Recorder dump as Python's pickle writes it
shared.pickle        a list referred to twice (memo), non-string keys, big ints, bytes, a set, UTF-8
class.pickle         a datetime.date: GLOBAL + REDUCE, which the reader must refuse
torch_fr.pickle      torch._C._distributed_c10d._dump_fr_trace() of a 1-rank gloo job with two
                     process groups: what PyTorch's own dump on a timeout contains
"""

import datetime
import os
import pathlib
import pickle
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent

PLAIN = {
    "version": "2.10",
    "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
    "pg_status": {"0": {"last_enqueued_collective": 4, "last_started_collective": -1, "last_completed_collective": 3}},
    "entries": [
        {"record_id": 7, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": 4, "p2p_seq_id": 0,
         "op_id": 4, "profiling_name": "nccl:all_reduce", "time_created_ns": 1795417709612868840,
         "input_sizes": [[4, 2]], "input_dtypes": ["Float"], "output_sizes": [[4, 2]], "output_dtypes": ["Float"],
         "state": "scheduled", "time_discovered_started_ns": None, "duration_ms": 1.25, "retired": False,
         "timeout_ms": 600000, "is_p2p": False,
         "frames": [{"name": "all_reduce", "filename": "distributed_c10d.py", "line": 3245}]},
    ],
}


def write(name, data):
    (HERE / name).write_bytes(data)
    print(f"{name}: {len(data)} bytes")


def torch_dump():
    import torch
    import torch.distributed as dist
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["TORCH_FR_BUFFER_SIZE"] = "2000"
        dist.init_process_group("gloo", init_method=f"file://{tmp}/store", rank=0, world_size=1)
        metrics = dist.new_group([0], group_desc="metrics")
        t = torch.ones(4)
        dist.all_reduce(t)
        dist.all_reduce(t, group=metrics)
        dist.barrier()
        data = torch._C._distributed_c10d._dump_fr_trace()
        dist.destroy_process_group()
    return data


def main():
    for protocol in (2, 3, 4, 5):
        write(f"plain_p{protocol}.pickle", pickle.dumps(PLAIN, protocol=protocol))
    shared = [1, 2]
    write("shared.pickle", pickle.dumps({"a": shared, "b": shared, 3: "int key", (1, 2): "tuple key",
                                          "big": 2**64 + 5, "neg": -2**40, "u": 2**63 + 1, "bytes": b"\x00\xff",
                                          "set": {7}, "\u00e9": "\u00fcn\u00ef"}, protocol=4))
    write("class.pickle", pickle.dumps({"when": datetime.date(2026, 1, 2)}, protocol=2))
    if "--torch" in sys.argv:
        write("torch_fr.pickle", torch_dump())


if __name__ == "__main__":
    main()
