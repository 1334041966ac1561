# ppc64le: the scalar routine uses only scalar loads and stores, so it needs no flag.
