"""`python -m stub`: the same command as `svc-stub`."""

from stub.entry import main

main()
