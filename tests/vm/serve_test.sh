#!/bin/bash
# SPDX-License-Identifier: MIT OR GPL-2.0
#
# serve_test - colibri serve and colibri chat in the guest, on the kernel
# backend (tests/serve/run --backend kernel; natively, make check-unit runs
# it in-process).  The guest's loopback interface starts down, and the
# tests talk HTTP over it.  Installed as $COLIBRI_BUILD/tests/vm/serve_test.
ip link set lo up || { echo "not ok 1 - loopback up in the guest"; echo "1..1"; exit 1; }
exec tests/serve/run --backend kernel	# from the top of the work tree, as every VM test
