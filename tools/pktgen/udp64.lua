-- SPDX-License-Identifier: BSD-3-Clause
--
-- 64-byte UDP datagrams to VIP:SL_UDP_PORT from SL_FLOWS client ports
-- (and SL_SRC_COUNT client addresses) at SL_RATE percent of the link for
-- SL_SECONDS; prints the rates sent and received through the DUT and,
-- with SL_LBSTAT, what the load balancer counted meanwhile.
--
--   true | pktgen -l 0-2 -a TX_NIC -a RX_NIC -- -m "[1].0,[2].1" \
--       -f tools/pktgen/udp64.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "udp64"

sl.header(name, string.format("UDP %d-byte frames, %d distinct flows",
	c.size, sl.distinct_flows()))
sl.setup_ports()
sl.setup_range("udp", c.udp_port, c.size)
sl.warmup(c.rate)
local r = sl.run(c.seconds)
sl.report(name, r)
sl.lb_report(name, r)
pktgen.quit()
