#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# scale_pool.sh's scenario with the `inflight` policy on both pools: the
# api pool scales on its own requests in flight, the img pool, whose
# input is only its own backends' requests, does not move.
SCALE_POLICY=inflight exec bash "$(dirname "$0")/scale_pool.sh" "$@"
