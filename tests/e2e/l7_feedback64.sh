#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# l7_feedback6 against IPv4 backends of the IPv6 VIP (fnat64): the HTTP
# feedback of followed fnat64 flows as lb-control shows it.
L7_FEEDBACK_BE=4 exec "$(dirname "$0")/l7_feedback6.sh"
