"""``python -m ragloom.cli``: the same as the ``ragloom`` command."""

from ragloom.cli import main

main()
