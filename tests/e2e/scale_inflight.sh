#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scale_spl.sh's scenario and assertions with the `inflight` policy (the
# WSO2 autoscaler: requests in flight averaged over rounds_to_average
# evaluations against queue_length_per_node per instance), and the
# service's own HTTP health check deciding when an instance joins.
SCALE_POLICY=inflight SCALE_CHECK=http exec bash "$(dirname "$0")/scale_spl.sh" "$@"
