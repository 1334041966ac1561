# ppc64le: the POWER routine uses only scalar loads and stores, so it needs no flag.
