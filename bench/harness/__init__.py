"""What every scenario stands on: no scenario of its own, and no figures printed but the tables.

- `servers`: the servers a scenario compares (svc-stub, bare aiohttp, aiohttp's ceiling), each
  started pinned to SERVER_CPU and stopped by PID; a `worktree` of another commit, whose
  svc-stub runs beside this checkout's.
- `client`: the request wrk repeats (`Route`, `EVALUATE`, `posted`), and single requests on one
  connection: set-up, checks, and sequences of evaluates.
- `load`: a wrk run on LOAD_CPU (`wrk`; `measured`, with the server's CPU per request), rounds
  taken in turns (`alternated`, `side_by_side`), a warm-up (`warm_up`) and evaluates paced at
  a fixed rate (`paced_round`).
- `callgrind`: the instructions a request costs, counted under valgrind.
- `report`: the tables that compare two runs round by round, and their verdicts on a bound.
- `versus`: this checkout's svc-stub against a commit's, instructions and throughput.

The typical comparison, route R at N connections on this checkout against commit C:

    with worktree(C) as tree, started("svc-stub") as new, started("svc-stub", tree=tree) as old:
        loads = side_by_side((new, old), N, seconds, rounds, R)
        ratio_table(loads, new.name, old.name, bound)
"""
