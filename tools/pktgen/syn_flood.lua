-- SPDX-License-Identifier: BSD-3-Clause
--
-- TCP SYN flood to VIP:SL_TCP_PORT: every SYN from a client address and
-- port not used before in the run, so each one is a new flow for the DUT.
-- Prints the SYN rate sent, the SYNs forwarded to the backend side and,
-- with SL_LBSTAT, the flows the load balancer created per second: its
-- new-flow rate.
--
-- Pktgen 23.03.0 builds a range run's frames once per start, one pool of
-- 24576 per transmit queue, so the run is a chain of starts of 24576 SYNs
-- each; every start continues the range where the last one stopped. The
-- tuples repeat only after SL_FLOWS x SL_SRC_COUNT SYNs (when the two
-- are coprime): size them so that this takes longer than a flow lives in
-- the DUT (syn-timeout of the service, 200 ms in bench.conf).
--
--   SL_FLOWS=64000 SL_SRC=10.20.0.1 SL_SRC_COUNT=251 \
--   true | pktgen ... -f tools/pktgen/syn_flood.lua
pktgen.screen("off")
local dir = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local sl = dofile(dir .. "sluice.lua")
local c = sl.cfg
local name = "syn_flood"

c.flows = tonumber(os.getenv("SL_FLOWS") or "") or 64000
local period = c.src_count * c.flows
do
	local a, b = c.src_count, c.flows
	while b ~= 0 do
		a, b = b, a % b
	end
	period = period // a
end
sl.header(name, string.format("TCP SYN 64-byte frames, tuples repeat " ..
	"after %d SYNs", period))
sl.setup_ports()
sl.setup_range("tcp", c.tcp_port, 64)
sl.cmd("range " .. c.tx .. " tcp flag clr all",
	"range " .. c.tx .. " tcp flag set syn")

-- The DUT learns the generator's addresses before the flood.
sl.announce()
sl.set_rate(c.rate)
pktgen.set(c.tx, "count", sl.POOL)

local lb0 = sl.lb_snapshot()
pktgen.clr()
pktgen.delay(100)
local t0 = sl.now()
local starts, next_announce = 0, t0 + 10
while sl.now() - t0 < c.seconds do
	pktgen.start(c.tx)
	starts = starts + 1
	repeat
		pktgen.delay(1)
	until pktgen.isSending(c.tx)[tonumber(c.tx)] == "n"
	if sl.now() >= next_announce then
		sl.announce(c.rx)
		next_announce = next_announce + 10
	end
end
local t1 = sl.now()
pktgen.set(c.tx, "count", 0)
local r = sl.totals()
r.secs = t1 - t0
r.lb0, r.lb1 = lb0, sl.lb_snapshot()

sl.report(name, r)
sl.say("%s: %d starts of %d SYNs; tuples repeat every %.2f s at this rate",
	name, starts, sl.POOL, period / math.max(r.tx / r.secs, 1))
sl.lb_report(name, r)
pktgen.quit()
