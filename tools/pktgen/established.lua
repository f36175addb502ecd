-- SPDX-License-Identifier: BSD-3-Clause
--
-- Established-flow traffic: SL_FLOWS UDP flows (1024 by default) that a
-- warm-up creates, then SL_SECONDS of SL_SIZE-byte datagrams on those
-- flows only. Every measured packet is a flow-table hit and a rewrite;
-- with SL_LBSTAT the script checks that the DUT created no flow while it
-- measured.
--
-- UDP, because Pktgen cannot answer the backends' side of a TCP handshake:
-- a TCP flow in the DUT would stay in syn_sent and fail its trial after
-- syn-timeout. A UDP flow is established by its first datagram and takes
-- the same lookup and rewrite path.
--
--   SL_FLOWS=1024 true | pktgen ... -f tools/pktgen/established.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "established"

c.flows = tonumber(os.getenv("SL_FLOWS") or "") or 1024
c.warmup = math.max(c.warmup, 1)
local n = sl.distinct_flows()
if n < c.src_count * c.flows then
	sl.fail("SL_FLOWS x SL_SRC_COUNT = %d flows do not fit in one pool of " ..
		"%d frames", c.src_count * c.flows, sl.POOL)
end
sl.header(name, string.format("UDP %d-byte frames on %d established flows",
	c.size, n))
sl.setup_ports()
sl.setup_range("udp", c.udp_port, c.size)
sl.warmup(c.rate)
local r = sl.run(c.seconds)
sl.report(name, r)
sl.lb_report(name, r)
if r.lb0 ~= nil and r.lb1 ~= nil then
	local created = r.lb1.flows_created - r.lb0.flows_created
	sl.say("%s: %s: %d flows created while measuring", name,
		created == 0 and "ok" or "WARNING", created)
end
pktgen.quit()
