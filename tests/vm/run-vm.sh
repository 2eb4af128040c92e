#!/bin/sh
# Placeholder until the VM runner lands: reports that the tier cannot run.
echo "VM runner not implemented yet" >&2
exit 1
