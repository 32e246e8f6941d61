#!/usr/bin/env python3
"""Prints the README's distributed-training correctness tables from a ctest log.

    scripts/mpi_tables.py BUILD/Testing/Temporary/LastTest.log

The MPI tests (tests/mpi/dp_test.py, tp_test.py, pp_test.py) each print one Markdown table
row of what they measured (weight and loss differences against single-process training,
bytes sent per rank against the theory, ...). This collects those rows per test family, in
the order the tests ran, under the header each family's row format has, and says which
tests printed none (skipped or failed). Exit 1 when the log has no MPI test at all.
"""
import re
import sys

FAMILIES = [
    ("mpi.dp.", "Data parallel and ZeRO (`tests/mpi/dp_test.py`)",
     "| steps | ranks | optimizer | buckets | max \\|w − w_single\\| | max loss diff | gradient bytes G | "
     "bytes sent per step, ranks 0..N−1 (measured) | theory | resumed 2 more steps in 1 process: max diff | "
     "time single / parallel |",
     11),
    ("mpi.tp.", "Tensor parallel (`tests/mpi/tp_test.py`)",
     "| steps | model | mesh | optimizer | max \\|w − w_single\\| | max loss diff | tp bytes per rank per step "
     "(measured) | ring theory | resumed: max diff | time single / parallel |",
     10),
    ("mpi.pp.", "Pipeline parallel (`tests/mpi/pp_test.py`)",
     "| layout | schedule | optimizer | micro-batches | steps | max \\|w − w_single\\| | max loss diff | pp bytes "
     "per rank per step (measured) | theory | peak micro-batches held per rank | resumed: max diff | "
     "time single / parallel |",
     12),
]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    # Each test's output sits between "N/M Testing: NAME" and the next such line.
    parts = re.split(r"^\d+/\d+ Testing: (\S+)\s*$", text, flags=re.M)
    outputs = list(zip(parts[1::2], parts[2::2]))
    if not any(name.startswith("mpi.") for name, _ in outputs):
        print(f"{sys.argv[1]}: no mpi.* test in this log", file=sys.stderr)
        return 1
    for prefix, title, header, cols in FAMILIES:
        rows, silent, resume = [], [], []
        for name, out in outputs:
            if not name.startswith(prefix):
                continue
            got = [l.strip() for l in out.splitlines() if l.startswith("| ")]
            for l in got:
                (resume if l.startswith("| resume") else rows).append(l)
            if not got:
                silent.append(name)
        print(f"#### {title}\n")
        if rows:
            print(header)
            print("|" + " --- |" * cols)
            print("\n".join(rows))
        if resume:
            print("\n| checkpoint | written | resumed at 1 rank | resumed at 4 ranks | weights moved by |")
            print("| --- | --- | --- | --- | --- |")
            print("\n".join(resume))
        if silent:
            print(f"\nNo row from: {', '.join(silent)} (failure, hang, bad-input and other cases print none).")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
