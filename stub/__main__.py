"""`python -m stub`: the same command as `svc-stub`."""

from .cli import main

main()
