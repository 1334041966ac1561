#!/bin/sh
# Run @PROGRAM@ under valgrind memcheck: any error or definite leak fails the test.
command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
exec valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
	--show-leak-kinds=definite @PROGRAM@
