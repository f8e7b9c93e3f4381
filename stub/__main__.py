"""`python -m stub`: the same command as `svc-stub`."""

from stub.cli import main

main()
